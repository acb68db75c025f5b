/**
 * The route worker against EC2 as it really behaves for nodes: instances with secondary network
 * interfaces (the source/destination check is per interface) and the eventual consistency of a
 * fresh launch (NotFound for an instance that exists). Real adapters over HTTP, emulators behind.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { FAILED_TO_CREATE_ROUTE, LAUNCH_LAG_WINDOW_MS, handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { leaseTo, startWorld, type World, type WorldNode } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];
const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const SECOND = { receiveCount: 2, maxReceiveCount: 3 };

const body = (message: WorkMessage): string => JSON.stringify(message);
const syncNode = (name: string): string => body({ v: 1, kind: 'sync-node', node: name });
const create = (routeTableId: string, destinationCidr: string, node: WorldNode): string =>
  body({ v: 1, kind: 'create', routeTableId, destinationCidr, node: node.name, instanceId: node.instanceId });

function depsOf(world: World) {
  const log = memoryLogger();
  const targets = new Map<string, { primaryEniId: string; at: number }>();
  const deps: RouteWorkerDeps = { clusterCidrs: CLUSTER_CIDRS, routeTables: world.routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log, now: world.clock.now, targets };
  return { deps, log, targets };
}

/** The stored node's creationTimestamp in ms (the Kubernetes emulator sets it when it stores the node). */
function createdAt(world: World, name: string): number {
  const node = world.kube.state.getNode(name);
  const meta = node && typeof node === 'object' && 'metadata' in node ? (node.metadata as Record<string, unknown>) : {};
  const at = typeof meta.creationTimestamp === 'string' ? Date.parse(meta.creationTimestamp) : Number.NaN;
  if (!Number.isFinite(at)) throw new Error(`node ${name} has no creationTimestamp`);
  return at;
}

describe('route worker: nodes with secondary network interfaces', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it('routes a node with 2 secondary ENIs to its primary interface and turns the check off on that interface only', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const instance = world.ec2.state.addInstance({ secondaryEnis: 2 });
    const a = await world.addNode('node-a', { instance, podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const secondaries = instance.networkInterfaceIds.filter((id) => id !== a.eniId);
    expect(secondaries).toHaveLength(2);
    const { deps, targets } = depsOf(world);

    expect(await handleWorkMessage(syncNode('node-a'), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created,created' });
    for (const table of [t1, t2]) expect(world.route(table, '100.64.1.0/24')).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, state: 'active' });
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.eventReasons('node-a')).toEqual([]);
    expect(world.ec2.state.networkInterfaces.get(a.eniId)?.sourceDestCheck).toBe(false);
    for (const id of secondaries) expect(world.ec2.state.networkInterfaces.get(id)?.sourceDestCheck).toBe(true);
    expect(world.ec2.stats.count('ModifyNetworkInterfaceAttribute')).toBe(1);
    expect(world.ec2.stats.count('ModifyInstanceAttribute')).toBe(0);
    expect(targets.get(a.instanceId)?.primaryEniId).toBe(a.eniId);
  });
});

describe('route worker: EC2 eventual consistency after a launch', () => {
  const EC2_LAG_MS = 60_000;
  let world: World;
  beforeEach(async () => {
    world = await startWorld({ ec2: { notFoundAfterLaunchMs: EC2_LAG_MS } });
    // The Kubernetes emulator stamps creationTimestamp from the wall clock: start the fake clock there.
    world.clock.ms = Date.now();
  });
  afterEach(async () => {
    await world.close();
  });

  it("retries a fresh node's NotFound, remembers nothing, and routes it once EC2 shows the instance", async () => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    world.clock.ms = createdAt(world, 'node-a') + 10_000;
    const { deps, log, targets } = depsOf(world);

    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'retry', status: 'retry' });
    expect(world.routeSummary(t1)).toEqual([]);
    expect(targets.size).toBe(0);
    expect(world.eventReasons('node-a')).toEqual([]);
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(0);
    const failed = log.lines.find((line) => line.event === 'message.failed');
    expect(failed).toMatchObject({ retryable: true });

    world.clock.advance(EC2_LAG_MS);
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), SECOND, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(targets.get(a.instanceId)?.primaryEniId).toBe(a.eniId);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it("reports an old node's NotFound as permanent: acknowledged, a Warning event, NetworkUnavailable=True", async () => {
    const t1 = world.addClusterTable();
    const gone = world.ec2.state.addInstance();
    const a = await world.addNode('node-a', { instance: gone, podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    world.ec2.state.instances.delete(gone.id);
    world.clock.ms = createdAt(world, 'node-a') + LAUNCH_LAG_WINDOW_MS;
    const { deps, targets } = depsOf(world);

    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'ack', status: 'failed' });
    expect(world.routeSummary(t1)).toEqual([]);
    expect(targets.size).toBe(0);
    expect(world.eventReasons('node-a')).toEqual([FAILED_TO_CREATE_ROUTE]);
    expect(world.networkUnavailable('node-a')).toBe('True');
  });

  it("judges an UPDATE-admitted node's NotFound by its stored creationTimestamp, not by the admission's time", async () => {
    const t1 = world.addClusterTable();
    const gone = world.ec2.state.addInstance();
    // Registered by the kubelet without a providerID; the cloud controller manager's UPDATE sets it much later.
    const { providerID: _unset, ...spec } = world.nodeObject('node-u', gone.id).spec as Record<string, unknown>;
    await world.kube.state.addNode({ ...world.nodeObject('node-u', gone.id), spec }, { admit: false });
    world.ec2.state.instances.delete(gone.id);
    await leaseTo(world.cidrSets, 'node-u', ['100.64.7.0/24']);
    world.clock.ms = createdAt(world, 'node-u') + LAUNCH_LAG_WINDOW_MS;
    const { deps, log } = depsOf(world);

    const message = body(syncNodeMessage('node-u', { instanceId: gone.id, podCidrs: ['100.64.7.0/24'] }));
    expect(await handleWorkMessage(message, FIRST, deps)).toEqual({ outcome: 'ack', status: 'failed' });
    expect(world.routeSummary(t1)).toEqual([]);
    expect(log.lines.filter((line) => line.event === 'message.failed').map((line) => line.retryable)).toEqual([false]);
  });

  it('forgets a remembered interface that EC2 no longer knows, and retries while the node is new', async () => {
    const t1 = world.addClusterTable();
    world.clock.advance(-EC2_LAG_MS); // an instance launched a while ago, outside EC2's window
    const instance = world.ec2.state.addInstance();
    const a = await world.addNode('node-a', { instance, podCidrs: ['100.64.1.0/24'] });
    world.clock.ms = createdAt(world, 'node-a') + 1000;
    const { deps, targets } = depsOf(world);
    targets.set(a.instanceId, { primaryEniId: 'eni-0000000000000dead', at: world.clock.ms });

    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'retry', status: 'retry' });
    expect(targets.has(a.instanceId)).toBe(false);
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), SECOND, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
  });
});
