/**
 * The route worker (lib/usecases/route-worker.ts) and its SQS handler (functions/route-worker.ts)
 * against the EC2 and Kubernetes emulators through the real adapters.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import type { Wiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { PodrouteError } from '../../lib/errors.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { FAILED_TO_CREATE_ROUTE, ROUTE_TABLE_FULL, handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import type { RouteTables } from '../../lib/usecases/ports.ts';
import { parseRouteTables } from '../../lib/routes/index.ts';
import { RecordingQueue, lambdaContext, sqsEvent, sqsRecord, startWorld, type World, type WorldNode } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];
const FIRST = { receiveCount: 1, maxReceiveCount: 3 };

const body = (message: WorkMessage): string => JSON.stringify(message);
const create = (routeTableId: string, destinationCidr: string, node: WorldNode): string =>
  body({ v: 1, kind: 'create', routeTableId, destinationCidr, node: node.name, instanceId: node.instanceId });
const replace = (routeTableId: string, destinationCidr: string, node: WorldNode, reason: 'blackhole' | 'moved', found?: string): string =>
  found === undefined
    ? body({ v: 1, kind: 'replace', routeTableId, destinationCidr, node: node.name, instanceId: node.instanceId, reason })
    : body({ v: 2, kind: 'replace', routeTableId, destinationCidr, node: node.name, instanceId: node.instanceId, reason, expect: { instanceId: found } });

/** The adapter with its listing replaced. */
function withListing(inner: RouteTables, listRouteTables: RouteTables['listRouteTables']): RouteTables {
  return {
    listRouteTables,
    createRoute: (spec) => inner.createRoute(spec),
    replaceRoute: (spec) => inner.replaceRoute(spec),
    deleteRoute: (spec) => inner.deleteRoute(spec),
    describeRoute: (routeTableId, destinationCidr) => inner.describeRoute(routeTableId, destinationCidr),
  };
}

function depsOf(world: World, routeTables: RouteTables = world.routeTables) {
  const log = memoryLogger();
  const deps: RouteWorkerDeps = { clusterCidrs: CLUSTER_CIDRS, routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log, now: world.clock.now };
  return { deps, log };
}

describe('handleWorkMessage: create and replace', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it('routes to the primary ENI, turns source/dest check off once, and marks the node reachable only when every table has its route', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const { deps } = depsOf(world);
    expect(world.ec2.state.sourceDestCheck(a.instanceId)).toBe(true);

    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.route(t1, '100.64.1.0/24')).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, state: 'active' });
    expect(world.ec2.state.sourceDestCheck(a.instanceId)).toBe(false);
    expect(world.networkUnavailable('node-a')).toBe('True');
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(0);

    expect(await handleWorkMessage(create(t2, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.route(t2, '100.64.1.0/24')).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, state: 'active' });
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.ec2.stats.count('ModifyNetworkInterfaceAttribute')).toBe(1);
    expect(world.ec2.stats.count('CreateRoute')).toBe(2);
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(1);
  });

  it.each(['blackhole', 'moved'] as const)('replaces a %s route with one to the node', async (reason) => {
    const t1 = world.addClusterTable();
    const other = world.ec2.state.addInstance();
    const otherEni = world.ec2.state.primaryInterface(other.id)?.id ?? '';
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', networkInterfaceId: otherEni });
    if (reason === 'blackhole') world.ec2.state.terminateInstance(other.id);
    expect(world.route(t1, '100.64.1.0/24')?.state).toBe(reason === 'blackhole' ? 'blackhole' : 'active');
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });

    expect(await handleWorkMessage(replace(t1, '100.64.1.0/24', a, reason, reason === 'moved' ? other.id : undefined), FIRST, depsOf(world).deps)).toEqual({ outcome: 'ack', status: 'replaced' });
    expect(world.route(t1, '100.64.1.0/24')).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, state: 'active' });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.ec2.stats.count('ReplaceRoute')).toBe(1);
    expect(world.ec2.stats.count('CreateRoute')).toBe(0);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it('treats a duplicate delivery as done: one route, the second answer is exists', async () => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const { deps } = depsOf(world);
    const message = create(t1, '100.64.1.0/24', a);
    expect(await handleWorkMessage(message, FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(await handleWorkMessage(message, { receiveCount: 2, maxReceiveCount: 3 }, deps)).toEqual({ outcome: 'ack', status: 'exists' });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.ec2.stats.count('CreateRoute')).toBe(1);
    expect(world.ec2.stats.count('ModifyNetworkInterfaceAttribute')).toBe(1);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it.each([
    ['the node owns another pod CIDR now', { podCidrs: ['100.64.2.0/24'] }, 'stale:pod-cidr-changed'],
    ['the node has no pod CIDR', {}, 'stale:pod-cidr-changed'],
  ])('acknowledges a create as stale when %s, and makes no route', async (_name, spec, status) => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', spec);
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, depsOf(world).deps)).toEqual({ outcome: 'ack', status });
    expect(world.routeSummary(t1)).toEqual([]);
    expect(world.ec2Writes()).toBe(0);
    expect(world.kubeWrites()).toBe(0);
  });

  it('acknowledges a create for a node whose instance changed as stale', async () => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const replaced = world.ec2.state.addInstance();
    const message = body({ v: 1, kind: 'create', routeTableId: t1, destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: replaced.id });
    expect(await handleWorkMessage(message, FIRST, depsOf(world).deps)).toEqual({ outcome: 'ack', status: 'stale:instance-changed' });
    expect(world.routeSummary(t1)).toEqual([]);
    expect(world.ec2.state.sourceDestCheck(a.instanceId)).toBe(true);
  });

  it('acknowledges a create for a node that is gone, and makes no route', async () => {
    const t1 = world.addClusterTable();
    const instance = world.ec2.state.addInstance();
    const gone: WorldNode = { name: 'node-gone', instanceId: instance.id, eniId: '' };
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', gone), FIRST, depsOf(world).deps)).toEqual({ outcome: 'ack', status: 'stale:node-gone' });
    expect(world.routeSummary(t1)).toEqual([]);
    expect(world.ec2Writes()).toBe(0);
  });

  it('syncs every route of a node for a sync-node message, then marks it reachable', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const result = await handleWorkMessage(body({ v: 1, kind: 'sync-node', node: 'node-a' }), FIRST, depsOf(world).deps);
    expect(result).toEqual({ outcome: 'ack', status: 'created,created' });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.routeSummary(t2)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });
});

describe('handleWorkMessage: delete', () => {
  let world: World;
  let t1: string;
  let a: WorldNode;
  let b: WorldNode;
  beforeEach(async () => {
    world = await startWorld();
    t1 = world.addClusterTable();
    a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'] });
  });
  afterEach(async () => {
    await world.close();
  });

  const del = (destinationCidr: string, expectRoute?: { instanceId: string | null; blackhole: boolean }, reason: 'no-owner' | 'blackhole' = 'no-owner') =>
    body({ v: 1, kind: 'delete', routeTableId: t1, destinationCidr, reason, ...(expectRoute ? { expect: expectRoute } : {}) });

  it('deletes a route that still looks as planned', async () => {
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', networkInterfaceId: a.eniId });
    const result = await handleWorkMessage(del('100.64.9.0/24', { instanceId: a.instanceId, blackhole: false }), FIRST, depsOf(world).deps);
    expect(result).toEqual({ outcome: 'ack', status: 'deleted' });
    expect(world.routeSummary(t1)).toEqual([]);
  });

  it('keeps a route whose target is no longer the expected instance', async () => {
    // Planned while 100.64.9.0/24 pointed at node-a; it points at node-b now.
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', networkInterfaceId: b.eniId });
    const result = await handleWorkMessage(del('100.64.9.0/24', { instanceId: a.instanceId, blackhole: false }), FIRST, depsOf(world).deps);
    expect(result).toEqual({ outcome: 'ack', status: 'stale:target-changed' });
    expect(world.routeSummary(t1)).toEqual([`100.64.9.0/24 -> ${b.instanceId}`]);
    expect(world.ec2.stats.count('DeleteRoute')).toBe(0);
  });

  it('refuses to delete a route outside the cluster CIDRs and keeps it', async () => {
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '192.168.5.0/24', networkInterfaceId: a.eniId });
    const { deps, log } = depsOf(world);
    const result = await handleWorkMessage(del('192.168.5.0/24', { instanceId: a.instanceId, blackhole: false }), FIRST, deps);
    expect(result).toEqual({ outcome: 'ack', status: 'refused:outside-cluster-cidrs' });
    expect(world.routeSummary(t1)).toEqual([`192.168.5.0/24 -> ${a.instanceId}`]);
    expect(world.ec2.stats.count('DeleteRoute')).toBe(0);
    expect(log.lines.find((l) => l.event === 'message.refused')).toMatchObject({ reason: 'outside-cluster-cidrs', cidr: '192.168.5.0/24' });
    // A refused delete is no node's failure: nothing is reported on a node.
    expect(world.kubeWrites()).toBe(0);
  });

  it.each([
    ['an internet gateway', false],
    ['a NAT gateway', true],
  ])('never deletes a route to %s', async (_name, asNat) => {
    const igw = world.ec2.state.addGateway();
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.7.0/24', gatewayId: igw });
    const real = world.routeTables;
    // The emulator has no NAT gateways: this port reports the same route as EC2 reports a NAT route.
    const natTables: RouteTables = {
      listRouteTables: () => real.listRouteTables(),
      createRoute: (spec) => real.createRoute(spec),
      replaceRoute: (spec) => real.replaceRoute(spec),
      deleteRoute: (spec) => real.deleteRoute(spec),
      describeRoute: async () =>
        parseRouteTables({ RouteTables: [{ RouteTableId: t1, Routes: [{ DestinationCidrBlock: '100.64.7.0/24', NatGatewayId: 'nat-0123456789abcdef0', State: 'active' }] }] })[0]?.routes[0] ?? null,
    };
    const { deps } = depsOf(world, asNat ? natTables : real);
    for (const reason of ['no-owner', 'blackhole'] as const) {
      const result = await handleWorkMessage(del('100.64.7.0/24', { instanceId: null, blackhole: reason === 'blackhole' }, reason), FIRST, deps);
      expect(result.outcome).toBe('ack');
      expect(result.status).toBe(`stale:foreign-target ${asNat ? 'nat-0123456789abcdef0' : igw}`);
    }
    expect(world.routeSummary(t1)).toEqual([`100.64.7.0/24 -> ${igw}`]);
    expect(world.ec2.stats.count('DeleteRoute')).toBe(0);
  });

  it('acknowledges a delete of a route that is already gone', async () => {
    expect(await handleWorkMessage(del('100.64.9.0/24', { instanceId: a.instanceId, blackhole: false }), FIRST, depsOf(world).deps)).toEqual({
      outcome: 'ack',
      status: 'absent',
    });
  });
});

describe('handleWorkMessage: malformed bodies', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it.each([
    ['not JSON', 'create 100.64.1.0/24'],
    ['a JSON array', '[]'],
    ['a v1 node-left (the kind is new in v2)', JSON.stringify({ v: 1, kind: 'node-left', node: 'node-a' })],
    ['an unknown version', JSON.stringify({ v: 3, kind: 'create', routeTableId: 'rtb-00000000000000001', destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: 'i-00000000000000001' })],
    ['an unknown kind', JSON.stringify({ v: 1, kind: 'upsert', node: 'node-a' })],
    ['a non-canonical destination', JSON.stringify({ v: 1, kind: 'create', routeTableId: 'rtb-00000000000000001', destinationCidr: '100.64.1.7/24', node: 'node-a', instanceId: 'i-00000000000000001' })],
    ['a missing instance id', JSON.stringify({ v: 1, kind: 'create', routeTableId: 'rtb-00000000000000001', destinationCidr: '100.64.1.0/24', node: 'node-a' })],
    ['an extra field', JSON.stringify({ v: 1, kind: 'sync-node', node: 'node-a', force: true })],
  ])('acknowledges %s without retry and changes nothing', async (_name, raw) => {
    const t1 = world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    world.resetStats();
    const { deps, log } = depsOf(world);
    expect(await handleWorkMessage(raw, { receiveCount: 3, maxReceiveCount: 3 }, deps)).toEqual({ outcome: 'ack', status: 'rejected' });
    expect(world.ec2.stats.calls).toEqual({});
    expect(world.kube.stats.all()).toEqual({});
    expect(world.routeSummary(t1)).toEqual([]);
    expect(world.networkUnavailable('node-a')).toBe('True');
    expect(log.lines.filter((l) => l.event === 'message.rejected')).toHaveLength(1);
  });
});

describe('handleWorkMessage: EC2 failures', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('retries a throttled create, hands it back and reports it on the node at the last receive but one, and creates it once the bucket refills', async () => {
    world = await startWorld({ ec2: { throttle: { actions: { CreateRoute: { capacity: 1, refillPerSecond: 1 } } } } });
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'] });
    const { deps } = depsOf(world);
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });

    // The clock stands still: the bucket stays empty.
    expect(await handleWorkMessage(create(t1, '100.64.2.0/24', b), { receiveCount: 1, maxReceiveCount: 3 }, deps)).toEqual({ outcome: 'retry', status: 'retry' });
    expect(world.eventReasons('node-b')).toEqual([]);
    expect(world.networkUnavailable('node-b')).toBeNull();

    // The last receive but one: handed back to reconcile (acknowledged), never left to the dead-letter
    // queue; the last receive stays a margin for an invocation that crashes or times out.
    expect(await handleWorkMessage(create(t1, '100.64.2.0/24', b), { receiveCount: 2, maxReceiveCount: 3 }, deps)).toEqual({ outcome: 'ack', status: 'handed-back' });
    expect(world.ec2.stats.throttled).toBe(2);
    expect(world.eventReasons('node-b')).toEqual([FAILED_TO_CREATE_ROUTE]);
    expect(world.networkUnavailable('node-b')).toBe('True');
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);

    world.clock.advance(1000);
    expect(await handleWorkMessage(create(t1, '100.64.2.0/24', b), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`, `100.64.2.0/24 -> ${b.instanceId}`]);
    expect(world.networkUnavailable('node-b')).toBe('False');
  });

  it('a redundant message failing on its last receive does not flip a healthy node: its routes are there', async () => {
    world = await startWorld();
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', networkInterfaceId: a.eniId });
    const { deps, log } = depsOf(world);
    // The message's own listing is throttled; the re-read before reporting is answered.
    let listings = 0;
    const inner = world.routeTables;
    const routeTables = withListing(inner, async () => {
      listings += 1;
      if (listings === 1) throw new PodrouteError('EC2 DescribeRouteTables: RequestLimitExceeded (retryable)', { retryable: true });
      return inner.listRouteTables();
    });
    const last = { receiveCount: 3, maxReceiveCount: 3 };
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), last, { ...deps, routeTables })).toEqual({ outcome: 'ack', status: 'handed-back' });
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.eventReasons('node-a')).toEqual([]);
    expect(log.lines.filter((l) => l.event === 'message.failed')).toEqual([expect.objectContaining({ outcome: 'handed-back', retryable: true })]);
    expect(log.lines.find((l) => l.event === 'report.skipped')).toMatchObject({ node: 'node-a', reason: 'routes-present' });
  });

  it('a failure whose re-read fails too reports nothing (reconcile settles the condition)', async () => {
    world = await startWorld();
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    const { deps } = depsOf(world);
    const throttled = async (): Promise<never> => {
      throw new PodrouteError('EC2 DescribeRouteTables: RequestLimitExceeded (retryable)', { retryable: true });
    };
    const routeTables = withListing(world.routeTables, throttled);
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), { receiveCount: 3, maxReceiveCount: 3 }, { ...deps, routeTables })).toEqual({ outcome: 'ack', status: 'handed-back' });
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.eventReasons('node-a')).toEqual([]);
  });

  it('acknowledges a full route table (RouteLimitExceeded) and reports it on the node', async () => {
    world = await startWorld({ ec2: { routeLimit: 1 } });
    const t1 = world.addClusterTable();
    const filler = world.ec2.state.addInstance();
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '10.99.0.0/24', instanceId: filler.id });
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const { deps, log } = depsOf(world);
    world.clock.advance(1000);
    const at = world.clock.now();
    expect(await handleWorkMessage(create(t1, '100.64.1.0/24', a), FIRST, deps)).toEqual({ outcome: 'ack', status: 'failed' });
    expect(world.route(t1, '100.64.1.0/24')).toBeUndefined();
    // One event on the node, the metric, and the table marked full.
    expect(world.eventReasons('node-a')).toEqual([ROUTE_TABLE_FULL]);
    expect(world.networkUnavailable('node-a')).toBe('True');
    expect(log.lines.filter((l) => l.event === 'message.failed')).toEqual([expect.objectContaining({ retryable: false, node: 'node-a', outcome: 'failed' })]);
    // Embedded metric format: the metric's value and its dimension sit on the line.
    // Two streams: one without extra dimensions (the alarm's, serverless.yml), one per table.
    const full = log.lines.filter((l) => 'RouteTableFull' in l);
    expect(full).toHaveLength(2);
    expect(full.filter((l) => !('RouteTableId' in l))).toEqual([expect.objectContaining({ RouteTableFull: 1 })]);
    expect(full.filter((l) => 'RouteTableId' in l)).toEqual([expect.objectContaining({ RouteTableFull: 1, RouteTableId: t1 })]);
    const tags = Object.fromEntries(world.ec2.state.table(t1).tags.map((t) => [t.key, t.value]));
    // The count as listed (the local route and the filler's included).
    expect(tags['podroute.io/route-table-full']).toBe(`${world.ec2.state.routes(t1).length}@${new Date(at).toISOString()}`);
  });
});

describe('route-worker handler', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld({ ec2: { throttle: { actions: { CreateRoute: { capacity: 1, refillPerSecond: 1 } } } } });
  });
  afterEach(async () => {
    await world.close();
  });

  async function handlerFor(w: World) {
    const config = loadConfig({ CLUSTER_NAME: 'alpha', CLUSTER_CIDRS: CLUSTER_CIDRS.join(','), MAX_RECEIVE_COUNT: '3' });
    const log = memoryLogger();
    const wiring: Wiring = {
      config,
      routeTables: w.routeTables,
      routeTargets: w.routeTargets,
      prefixes: w.prefixes,
      nodes: w.nodes,
      queue: new RecordingQueue(),
      cidrSets: w.cidrSets, plane: routesWorkerPlane(w.cidrSets),
      webhookSecret: async () => 'unused',
      log,
      now: w.clock.now,
    };
    return { handler: createRouteWorkerHandler(async () => wiring), log };
  }

  it('reports exactly the retryable record of a mixed batch in batchItemFailures', async () => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'] });
    const { handler } = await handlerFor(world);
    // Spend CreateRoute's only token; the clock stands still, so the next create is throttled.
    expect(await handler(sqsEvent(sqsRecord('m0', create(t1, '100.64.1.0/24', a))), lambdaContext())).toEqual({ batchItemFailures: [] });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', networkInterfaceId: a.eniId });

    const good = body({ v: 1, kind: 'delete', routeTableId: t1, destinationCidr: '100.64.9.0/24', reason: 'no-owner', expect: { instanceId: a.instanceId, blackhole: false } });
    const result = await handler(
      sqsEvent(sqsRecord('m1-good', good), sqsRecord('m2-malformed', '{"v":1,"kind":"create"'), sqsRecord('m3-throttled', create(t1, '100.64.2.0/24', b))),
      lambdaContext(),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm3-throttled' }] });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    // Not the last receive: nothing reported on the node yet.
    expect(world.eventReasons('node-b')).toEqual([]);
  });

  it('passes ApproximateReceiveCount through: the last receive but one hands the message back and reports the failure on the node', async () => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'] });
    const { handler } = await handlerFor(world);
    await handler(sqsEvent(sqsRecord('m0', create(t1, '100.64.1.0/24', a))), lambdaContext());
    const result = await handler(sqsEvent(sqsRecord('m1', create(t1, '100.64.2.0/24', b), 2)), lambdaContext());
    expect(result).toEqual({ batchItemFailures: [] });
    expect(world.eventReasons('node-b')).toEqual([FAILED_TO_CREATE_ROUTE]);
    expect(world.networkUnavailable('node-b')).toBe('True');
  });
});

describe('handleWorkMessage: a retryable failure handed back to reconcile', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it.each([
    ['handed back (last receive but one): an Event, the serving node stays ready', 2, 'handed-back', 'False'],
    ['failed for good (not retryable): an Event and NetworkUnavailable=True', 2, 'failed', 'True'],
  ] as const)('%s', async (_name, receiveCount, status, condition) => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    const failing: RouteTables = Object.assign(withListing(world.routeTables, () => world.routeTables.listRouteTables()), {
      createRoute: () => Promise.reject(new PodrouteError('EC2 throttled CreateRoute', { retryable: status === 'handed-back' })),
    });
    const { deps } = depsOf(world, failing);
    const message = create(t1, '100.64.1.0/24', a);
    expect(await handleWorkMessage(message, { receiveCount, maxReceiveCount: 3 }, deps)).toEqual({ outcome: 'ack', status });
    expect(world.eventReasons('node-a')).toContain(FAILED_TO_CREATE_ROUTE);
    expect(world.networkUnavailable('node-a')).toBe(condition);
  });
});
