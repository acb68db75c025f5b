/**
 * Messages are hints, not orders: anyone allowed to send to the queue can write one, so the worker
 * checks each against the lease table and fresh reads (lib/usecases/route-worker-claims.ts). A
 * refused message is acknowledged and reported (a `message.refused` line, a `MessagesRefused`
 * metric), never retried, never acted on, and no node is told anything. Real adapters over HTTP
 * against the emulators; the lease table in memory (test/support/world.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkDelete, checkRouteClaim } from '../../lib/usecases/route-worker-claims.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { decideOwnership } from '../../lib/routes/index.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import type { World, WorldNode } from '../support/world.ts';
import { useWorldWithTable } from '../support/use-world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];
const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const VICTIM = '100.64.1.0/24';
const nodeOf = (name: string, podCidrs: string[]): Node => ({ metadata: { name }, spec: { providerID: `aws:///us-east-1a/i-${name}0000000000000`, podCIDR: podCidrs[0], podCIDRs: podCidrs } });

describe('checkRouteClaim and checkDelete (pure)', () => {
  // The ownership decider over the claimant (node `a`, or `b`) and the lease table, as the worker runs it.
  const SETS = [{ clusterCidr: '100.64.0.0/16', nodeMaskSize: 24 }];
  const verdict = (destinationCidr: string, node: string, podCidrs: string[], leases: Array<{ cidr: string; owner: string }>) => {
    const leaseTable = { leases, sets: SETS };
    const ownership = decideOwnership({ nodes: [nodeOf(node, podCidrs)], clusterCidrs: CLUSTER_CIDRS, leaseTable });
    return checkRouteClaim({ destinationCidr, node }, ownership, leaseTable, CLUSTER_CIDRS);
  };
  it.each([
    ['the node holds exactly that lease', VICTIM, 'a', [VICTIM], [{ cidr: VICTIM, owner: 'a' }], null],
    ['outside the cluster CIDRs', '192.168.1.0/24', 'a', ['192.168.1.0/24'], [], 'outside-cluster-cidrs'],
    ['the node holds no lease', VICTIM, 'b', [VICTIM], [], 'not-leased'],
    ['a sub-range of another node\'s block', '100.64.1.0/25', 'b', ['100.64.1.0/25'], [{ cidr: VICTIM, owner: 'a' }], 'leased-to-another-node'],
    ['a super-range of the node\'s block', '100.64.0.0/16', 'a', ['100.64.0.0/16'], [{ cidr: VICTIM, owner: 'a' }], 'mask-size'],
    ['another block than the node\'s', '100.64.2.0/24', 'a', ['100.64.2.0/24'], [{ cidr: VICTIM, owner: 'a' }], 'not-leased'],
    ['a block leased to another node', VICTIM, 'b', [VICTIM], [{ cidr: VICTIM, owner: 'a' }], 'leased-to-another-node'],
  ] as const)('route claim: %s -> %s', (_what, destination, node, podCidrs, leases, refusal) => {
    expect(verdict(destination, node, [...podCidrs], [...leases])).toBe(refusal);
  });
  it('no lease set covers the destination -> no-lease-table', () => {
    const ownership = decideOwnership({ nodes: [nodeOf('a', [VICTIM])], clusterCidrs: CLUSTER_CIDRS, leaseTable: { leases: [], sets: [] } });
    expect(checkRouteClaim({ destinationCidr: VICTIM, node: 'a' }, ownership, { sets: [] }, CLUSTER_CIDRS)).toBe('no-lease-table');
  });

  const del = (extra: Partial<Extract<WorkMessage, { kind: 'delete' }>>) => ({
    v: 1 as const,
    kind: 'delete' as const,
    routeTableId: 'rtb-1',
    destinationCidr: VICTIM,
    reason: 'no-owner' as const,
    expect: { instanceId: 'i-1', blackhole: false },
    ...extra,
  });
  it.each([
    ['as planned', del({}), null],
    ['without expect', del({ expect: undefined }), 'no-expect'],
    ['in a table without the cluster tag', del({ routeTableId: 'rtb-2' }), 'not-a-cluster-table'],
    ['outside the cluster CIDRs', del({ destinationCidr: '10.0.0.0/24' }), 'outside-cluster-cidrs'],
  ] as const)('delete: %s -> %s', (_what, message, refusal) => {
    expect(checkDelete(message, new Set(['rtb-1']), CLUSTER_CIDRS)).toBe(refusal);
  });
});

describe('the worker refuses what the authority does not back', () => {
  let world: World;
  let table: string;
  let victim: WorldNode;
  useWorldWithTable(async (parts) => {
    ({ world, table } = parts);
    // The rightful owner: leased, routed, ready.
    victim = await world.addNode('node-a', { podCidrs: [VICTIM], networkUnavailable: 'False' });
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: VICTIM, networkInterfaceId: victim.eniId });
  });

  function depsOf() {
    const log = memoryLogger();
    const deps: RouteWorkerDeps = { clusterCidrs: CLUSTER_CIDRS, routeTables: world.routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log, now: world.clock.now };
    return { deps, log };
  }

  async function expectRefused(message: WorkMessage, reason: string) {
    const { deps, log } = depsOf();
    world.resetStats();
    expect(await handleWorkMessage(JSON.stringify(message), FIRST, deps)).toEqual({ outcome: 'ack', status: `refused:${reason}` });
    expect(log.lines.filter((l) => l.event === 'message.refused').map((l) => l.reason)).toEqual([reason]);
    expect(log.lines.filter((l) => l.MessagesRefused === 1)).toHaveLength(1);
    expect(world.ec2Writes()).toBe(0);
    expect(world.kubeWrites()).toBe(0);
  }

  it.each([
    ['moved', 'replace'],
    ['create', 'create'],
  ] as const)('a %s of another node\'s exact pod CIDR to a node claiming it: refused, the owner keeps its route', async (_what, kind) => {
    const claimant = await world.addNode('node-b', { podCidrs: [VICTIM], unleased: true });
    const message: WorkMessage =
      kind === 'replace'
        ? { v: 1, kind, routeTableId: table, destinationCidr: VICTIM, node: 'node-b', instanceId: claimant.instanceId, reason: 'moved' }
        : { v: 1, kind, routeTableId: table, destinationCidr: VICTIM, node: 'node-b', instanceId: claimant.instanceId };
    await expectRefused(message, 'leased-to-another-node');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a more-specific route inside another node\'s block: refused, nothing shadows the owner', async () => {
    const claimant = await world.addNode('node-b', { podCidrs: ['100.64.1.0/25'], unleased: true });
    await expectRefused({ v: 1, kind: 'create', routeTableId: table, destinationCidr: '100.64.1.0/25', node: 'node-b', instanceId: claimant.instanceId }, 'leased-to-another-node');
    expect(world.route(table, '100.64.1.0/25')).toBeUndefined();
  });

  it('a sync-node of a stored node claiming another node\'s CIDR: refused', async () => {
    await world.addNode('node-b', { podCidrs: [VICTIM], unleased: true });
    await expectRefused({ v: 1, kind: 'sync-node', node: 'node-b' }, 'leased-to-another-node');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a forged admitted cannot re-point a route: refused, the owner keeps its route', async () => {
    const attacker = world.ec2.state.addInstance();
    await expectRefused({ v: 2, kind: 'sync-node', node: 'node-x', admitted: { instanceId: attacker.id, podCidrs: [VICTIM] } }, 'leased-to-another-node');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a delete lacking expect: refused, the live route stays', async () => {
    await expectRefused({ v: 1, kind: 'delete', routeTableId: table, destinationCidr: VICTIM, reason: 'no-owner' }, 'no-expect');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a no-owner delete of a route to the node its lease names: refused, the live route stays', async () => {
    // expect copied from the node's providerID, as anyone reading the node could.
    await expectRefused({ v: 1, kind: 'delete', routeTableId: table, destinationCidr: VICTIM, reason: 'no-owner', expect: { instanceId: victim.instanceId, blackhole: false } }, 'owned');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it.each([
    ['leased to no node', '100.64.2.0/24', null],
    ['leased to a node that is gone', '100.64.3.0/24', 'node-gone'],
  ] as const)('a no-owner delete of a route %s goes ahead', async (_what, cidr, owner) => {
    if (owner !== null) await world.cidrSets[0]?.occupy(cidr, owner);
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: cidr, networkInterfaceId: victim.eniId });
    const { deps } = depsOf();
    const message: WorkMessage = { v: 1, kind: 'delete', routeTableId: table, destinationCidr: cidr, reason: 'no-owner', expect: { instanceId: victim.instanceId, blackhole: false } };
    expect(await handleWorkMessage(JSON.stringify(message), FIRST, deps)).toEqual({ outcome: 'ack', status: 'deleted' });
    expect(world.route(table, cidr)).toBeUndefined();
  });

  it.each(['delete', 'create'] as const)('a %s in a table without the cluster tag: refused, the table untouched', async (kind) => {
    const untagged = world.ec2.state.addRouteTable({ tags: { Name: 'someone-elses' } }).id;
    world.ec2.state.addRoute({ routeTableId: untagged, destinationCidr: VICTIM, networkInterfaceId: victim.eniId });
    const message: WorkMessage =
      kind === 'delete'
        ? { v: 1, kind, routeTableId: untagged, destinationCidr: VICTIM, reason: 'no-owner', expect: { instanceId: victim.instanceId, blackhole: false } }
        : { v: 1, kind, routeTableId: untagged, destinationCidr: VICTIM, node: 'node-a', instanceId: victim.instanceId };
    await expectRefused(message, 'not-a-cluster-table');
    expect(world.route(untagged, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a create for the node that holds the lease goes ahead', async () => {
    const other = world.addClusterTable();
    const { deps } = depsOf();
    const message: WorkMessage = { v: 1, kind: 'create', routeTableId: other, destinationCidr: VICTIM, node: 'node-a', instanceId: victim.instanceId };
    expect(await handleWorkMessage(JSON.stringify(message), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.route(other, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });
});
