/**
 * Messages are hints, not orders: anyone allowed to send to the queue can write one, so the worker
 * checks each against the lease table and fresh reads (lib/usecases/route-worker-claims.ts). A
 * refused message is acknowledged and reported (a `message.refused` line, a `MessagesRefused`
 * metric), never retried, never acted on, and no node is told anything. Real adapters over HTTP
 * against the emulators; the lease table in memory (test/support/world.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkDelete, checkRouteClaim } from '../../lib/usecases/route-worker-claims.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { RouteMessage } from '../../lib/messages/route-message.ts';
import { handleRouteMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { startWorld, type World, type WorldNode } from '../support/world.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];
const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const VICTIM = '100.64.1.0/24';

describe('checkRouteClaim and checkDelete (pure)', () => {
  const lease = (cidr: string, owner: string) => ({ kind: 'read' as const, lease: { cidr, owner } });
  it.each([
    ['the node holds exactly that lease', { destinationCidr: VICTIM, node: 'a' }, lease(VICTIM, 'a'), null],
    ['outside the cluster CIDRs', { destinationCidr: '192.168.1.0/24', node: 'a' }, lease('192.168.1.0/24', 'a'), 'outside-cluster-cidrs'],
    ['no lease set covers it', { destinationCidr: VICTIM, node: 'a' }, { kind: 'no-set' as const }, 'no-lease-table'],
    ['the node holds no lease', { destinationCidr: VICTIM, node: 'b' }, { kind: 'read' as const, lease: null }, 'not-leased'],
    ['a sub-range of the node\'s own block', { destinationCidr: '100.64.1.0/25', node: 'a' }, lease(VICTIM, 'a'), 'lease-differs'],
    ['a super-range of the node\'s block', { destinationCidr: '100.64.0.0/16', node: 'a' }, lease(VICTIM, 'a'), 'lease-differs'],
    ['another block than the node\'s', { destinationCidr: '100.64.2.0/24', node: 'a' }, lease(VICTIM, 'a'), 'lease-differs'],
    ['a lease read for another owner', { destinationCidr: VICTIM, node: 'b' }, lease(VICTIM, 'a'), 'not-leased'],
  ] as const)('route claim: %s -> %s', (_what, claim, read, refusal) => {
    expect(checkRouteClaim(claim, read, CLUSTER_CIDRS)).toBe(refusal);
  });

  const del = (extra: Partial<Extract<RouteMessage, { kind: 'delete' }>>) => ({
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
  beforeEach(async () => {
    world = await startWorld();
    table = world.addClusterTable();
    // The rightful owner: leased, routed, ready.
    victim = await world.addNode('node-a', { podCidrs: [VICTIM], networkUnavailable: 'False' });
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: VICTIM, networkInterfaceId: victim.eniId });
  });
  afterEach(async () => {
    await world.close();
  });

  function depsOf() {
    const log = memoryLogger();
    const deps: RouteWorkerDeps = { clusterCidrs: CLUSTER_CIDRS, routeTables: world.routeTables, nodes: world.nodes, cidrSets: world.cidrSets, leaseGraceSeconds: 600, log, now: world.clock.now };
    return { deps, log };
  }

  async function expectRefused(message: RouteMessage, reason: string) {
    const { deps, log } = depsOf();
    world.resetStats();
    expect(await handleRouteMessage(JSON.stringify(message), FIRST, deps)).toEqual({ outcome: 'ack', status: `refused:${reason}` });
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
    const message: RouteMessage =
      kind === 'replace'
        ? { v: 1, kind, routeTableId: table, destinationCidr: VICTIM, node: 'node-b', instanceId: claimant.instanceId, reason: 'moved' }
        : { v: 1, kind, routeTableId: table, destinationCidr: VICTIM, node: 'node-b', instanceId: claimant.instanceId };
    await expectRefused(message, 'not-leased');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a more-specific route inside another node\'s block: refused, nothing shadows the owner', async () => {
    const claimant = await world.addNode('node-b', { podCidrs: ['100.64.1.0/25'], unleased: true });
    await expectRefused({ v: 1, kind: 'create', routeTableId: table, destinationCidr: '100.64.1.0/25', node: 'node-b', instanceId: claimant.instanceId }, 'not-leased');
    expect(world.route(table, '100.64.1.0/25')).toBeUndefined();
  });

  it('a sync-node of a stored node claiming another node\'s CIDR: refused', async () => {
    await world.addNode('node-b', { podCidrs: [VICTIM], unleased: true });
    await expectRefused({ v: 1, kind: 'sync-node', node: 'node-b' }, 'not-leased');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a forged admitted cannot re-point a route: refused, the owner keeps its route', async () => {
    const attacker = world.ec2.state.addInstance();
    await expectRefused({ v: 2, kind: 'sync-node', node: 'node-x', admitted: { instanceId: attacker.id, podCidrs: [VICTIM] } }, 'not-leased');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a delete lacking expect: refused, the live route stays', async () => {
    await expectRefused({ v: 1, kind: 'delete', routeTableId: table, destinationCidr: VICTIM, reason: 'no-owner' }, 'no-expect');
    expect(world.route(table, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it.each(['delete', 'create'] as const)('a %s in a table without the cluster tag: refused, the table untouched', async (kind) => {
    const untagged = world.ec2.state.addRouteTable({ tags: { Name: 'someone-elses' } }).id;
    world.ec2.state.addRoute({ routeTableId: untagged, destinationCidr: VICTIM, networkInterfaceId: victim.eniId });
    const message: RouteMessage =
      kind === 'delete'
        ? { v: 1, kind, routeTableId: untagged, destinationCidr: VICTIM, reason: 'no-owner', expect: { instanceId: victim.instanceId, blackhole: false } }
        : { v: 1, kind, routeTableId: untagged, destinationCidr: VICTIM, node: 'node-a', instanceId: victim.instanceId };
    await expectRefused(message, 'not-a-cluster-table');
    expect(world.route(untagged, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });

  it('a create for the node that holds the lease goes ahead', async () => {
    const other = world.addClusterTable();
    const { deps } = depsOf();
    const message: RouteMessage = { v: 1, kind: 'create', routeTableId: other, destinationCidr: VICTIM, node: 'node-a', instanceId: victim.instanceId };
    expect(await handleRouteMessage(JSON.stringify(message), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.route(other, VICTIM)?.networkInterfaceId).toBe(victim.eniId);
  });
});
