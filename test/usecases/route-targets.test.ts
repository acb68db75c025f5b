/**
 * Reconcile and the route worker against an EC2 that describes a route with only the target field
 * it was made with (the EC2 emulator's routeTargetFields 'as-created'): a node's route is found by
 * its primary interface id or by its instance id (lib/usecases/route-targets.ts), and the nodes'
 * interfaces are read only when a route names an interface alone. Real adapters, emulators behind.
 */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { leaseTo, type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const FIRST = { receiveCount: 1, maxReceiveCount: 3 };

/** Two cluster tables routing node-a's pod CIDR, made with the given parameter. */
async function routedNode(madeWith: 'interface' | 'instance', networkUnavailable: 'True' | 'False') {
  world.ec2.state.routeTargetFields = 'as-created';
  const tables = [world.addClusterTable(), world.addClusterTable()];
  const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable });
  for (const routeTableId of tables) {
    world.ec2.state.addRoute({ routeTableId, destinationCidr: '100.64.1.0/24', ...(madeWith === 'interface' ? { networkInterfaceId: a.eniId } : { instanceId: a.instanceId }) });
  }
  return { tables, a };
}

describe('route worker: a node’s routes described with one target field', () => {
  it.each(['interface', 'instance'] as const)('made with %s: the node’s own routes, nothing rewritten, the node marked ready', async (madeWith) => {
    await routedNode(madeWith, 'True');
    const w = await testWiring(world, local);
    await leaseTo(w.wiring.cidrSets, 'node-a', ['100.64.1.0/24']);
    world.resetStats();
    const outcome = await handleWorkMessage(JSON.stringify({ v: 1, kind: 'sync-node', node: 'node-a' }), FIRST, { ...w.workerDeps(), log: memoryLogger() });
    expect(outcome).toEqual({ outcome: 'ack', status: 'in-sync' });
    expect([world.ec2.stats.count('CreateRoute'), world.ec2.stats.count('ReplaceRoute')]).toEqual([0, 0]);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it('a create for a route described with the instance alone: exists, no ReplaceRoute', async () => {
    const { tables, a } = await routedNode('instance', 'False');
    const w = await testWiring(world, local);
    // The worker routes only what the lease table gives the node (messages are hints).
    await w.wiring.cidrSets[0]?.occupy('100.64.1.0/24', 'node-a');
    world.resetStats();
    const message = { v: 1, kind: 'create', routeTableId: tables[0], destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: a.instanceId };
    const outcome = await handleWorkMessage(JSON.stringify(message), FIRST, { ...w.workerDeps(), log: memoryLogger() });
    expect(outcome).toEqual({ outcome: 'ack', status: 'exists' });
    expect(world.ec2.stats.count('ReplaceRoute')).toBe(0);
  });
});

describe('reconcile: a node’s routes described with one target field', () => {
  it.each([
    ['interface', 1],
    ['instance', 0],
  ] as const)('made with %s: nothing planned, the node stays ready; DescribeInstances calls %i', async (madeWith, describes) => {
    await routedNode(madeWith, 'False');
    const w = await testWiring(world, local);
    world.resetStats();
    const report = await reconcile(w.reconcileDeps());
    expect(report.plan).toMatchObject({ create: [], replace: [], delete: [] });
    expect(report.plan.warnings ?? []).toEqual([]);
    expect(report.plan.nodes).toEqual([{ node: 'node-a', networkUnavailable: false, patch: false }]);
    expect(world.ec2.stats.count('DescribeInstances')).toBe(describes);
  });

  it('with both fields (real EC2 as observed) reads no interface', async () => {
    const tables = [world.addClusterTable()];
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    world.ec2.state.addRoute({ routeTableId: tables[0] ?? '', destinationCidr: '100.64.1.0/24', networkInterfaceId: a.eniId });
    const w = await testWiring(world, local);
    world.resetStats();
    const report = await reconcile(w.reconcileDeps());
    expect(report.plan.nodes).toEqual([{ node: 'node-a', networkUnavailable: false, patch: false }]);
    expect(world.ec2.stats.count('DescribeInstances')).toBe(0);
  });
});

describe('route worker: a delete of a route described with its interface alone', () => {
  /** node-a routed to 100.64.1.0/24; its old pod CIDR's route, made with an interface, still there. */
  async function oldRoute(eniOf: 'node-a' | 'another instance') {
    world.ec2.state.routeTargetFields = 'as-created';
    const table = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    const eni = eniOf === 'node-a' ? a.eniId : (world.ec2.state.primaryInterface(world.ec2.state.addInstance().id)?.id ?? '');
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.5.0/24', networkInterfaceId: eni });
    const message = { v: 1, kind: 'delete', routeTableId: table, destinationCidr: '100.64.5.0/24', reason: 'no-owner', expect: { instanceId: a.instanceId, blackhole: false } };
    return { table, message: JSON.stringify(message) };
  }

  it('naming the expected instance\'s primary interface: deleted, as the planner matched it', async () => {
    const { table, message } = await oldRoute('node-a');
    const w = await testWiring(world, local);
    expect(await handleWorkMessage(message, FIRST, { ...w.workerDeps(), log: memoryLogger() })).toEqual({ outcome: 'ack', status: 'deleted' });
    expect(world.route(table, '100.64.5.0/24')).toBeUndefined();
  });

  it('naming another instance\'s interface: stale, the route stays', async () => {
    const { table, message } = await oldRoute('another instance');
    const w = await testWiring(world, local);
    const outcome = await handleWorkMessage(message, FIRST, { ...w.workerDeps(), log: memoryLogger() });
    expect(outcome).toEqual({ outcome: 'ack', status: 'stale:target-changed' });
    expect(world.route(table, '100.64.5.0/24')).toBeDefined();
  });
});

describe('route worker: a moved route described with its interface alone', () => {
  it.each([
    ['an instance\'s primary interface', true, { outcome: 'ack', status: 'replaced' }],
    ['an interface at device index 1 (no instance\'s primary one)', false, { outcome: 'ack', status: 'failed' }],
  ] as const)('to %s', async (_what, attached, outcome) => {
    world.ec2.state.routeTargetFields = 'as-created';
    const table = world.addClusterTable();
    const b = await world.addNode('node-b', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const old = world.ec2.state.primaryInterface(world.ec2.state.addInstance().id);
    if (!attached && old?.attachment) old.attachment = { ...old.attachment, deviceIndex: 1 };
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.1.0/24', networkInterfaceId: old?.id ?? '' });
    const w = await testWiring(world, local);
    await leaseTo(w.wiring.cidrSets, 'node-b', ['100.64.1.0/24']);
    const message = { v: 2, kind: 'replace', routeTableId: table, destinationCidr: '100.64.1.0/24', node: 'node-b', instanceId: b.instanceId, reason: 'moved', expect: { instanceId: old?.attachment?.instanceId ?? null } };
    expect(await handleWorkMessage(JSON.stringify(message), FIRST, { ...w.workerDeps(), log: memoryLogger() })).toEqual(outcome);
    expect(world.route(table, '100.64.1.0/24')?.networkInterfaceId).toBe(attached ? b.eniId : old?.id);
  });
});
