/**
 * The worker decides ownership as reconcile does (lib/usecases/route-worker-ownership.ts): the
 * ownership decider over the fresh node, the nodes naming its instance and the lease table. Real
 * adapters over HTTP against the emulators; the lease table in memory (test/support/world.ts).
 */
import { describe, expect, it } from 'vitest';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import type { World } from '../support/world.ts';
import { useWorldWithTable } from '../support/use-world.ts';
import { worldWorkerDeps } from '../support/worker-deps.ts';

const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const MIGRATION = { 4: [23], 6: [] };

describe('the worker routes what the ownership decider gives the node', () => {
  let world: World;
  let table: string;
  useWorldWithTable((parts) => ({ world, table } = parts));

  const depsOf = (extra: Partial<RouteWorkerDeps> = {}): RouteWorkerDeps => worldWorkerDeps(world, extra);
  const run = (message: WorkMessage, deps: RouteWorkerDeps) => handleWorkMessage(JSON.stringify(message), FIRST, deps);

  /** A /23 adopted under MIGRATION_MASK_SIZES=ipv4:23: reconcile holds it as both /24 blocks of it. */
  async function migratedNode() {
    const node = await world.addNode('node-m', { podCidrs: ['100.64.2.0/23'], unleased: true, networkUnavailable: 'True' });
    const [set] = world.cidrSets;
    await set?.occupy('100.64.2.0/23', 'node-m');
    return node;
  }

  it('a create of a /23 held as two /24 leases under a migration mask: created, the node marked ready', async () => {
    const node = await migratedNode();
    const message: WorkMessage = { v: 1, kind: 'create', routeTableId: table, destinationCidr: '100.64.2.0/23', node: 'node-m', instanceId: node.instanceId };
    expect(await run(message, depsOf({ migrationMaskSizes: MIGRATION }))).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.routeSummary(table)).toEqual([`100.64.2.0/23 -> ${node.instanceId}`]);
    expect(world.networkUnavailable('node-m')).toBe('False');
  });

  it('a sync-node of that node: routed', async () => {
    const node = await migratedNode();
    expect(await run({ v: 1, kind: 'sync-node', node: 'node-m' }, depsOf({ migrationMaskSizes: MIGRATION }))).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.routeSummary(table)).toEqual([`100.64.2.0/23 -> ${node.instanceId}`]);
  });

  it('the same /23 without the migration mask: refused as the decider refuses it (mask-size), nothing written', async () => {
    const node = await migratedNode();
    world.resetStats();
    const message: WorkMessage = { v: 1, kind: 'create', routeTableId: table, destinationCidr: '100.64.2.0/23', node: 'node-m', instanceId: node.instanceId };
    expect(await run(message, depsOf())).toEqual({ outcome: 'ack', status: 'refused:mask-size' });
    expect(world.ec2Writes()).toBe(0);
  });

  it.each(['sync-node', 'create'] as const)('a %s of a second node naming a routed node\'s instance: refused, nothing routed to it or marked', async (kind) => {
    const instance = world.ec2.state.addInstance();
    const victim = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], instance, networkUnavailable: 'False' });
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.1.0/24', instanceId: victim.instanceId });
    // Its own block, leased to it: only its providerID is another node's.
    await world.addNode('node-h', { podCidrs: ['100.64.9.0/24'], instance });
    world.resetStats();
    const message: WorkMessage =
      kind === 'sync-node'
        ? { v: 1, kind, node: 'node-h' }
        : { v: 1, kind, routeTableId: table, destinationCidr: '100.64.9.0/24', node: 'node-h', instanceId: victim.instanceId };
    expect(await run(message, depsOf())).toEqual({ outcome: 'ack', status: 'refused:instance-of-another-node' });
    expect(world.routeSummary(table)).toEqual([`100.64.1.0/24 -> ${victim.instanceId}`]);
    expect(world.ec2Writes()).toBe(0);
    expect(world.kubeWrites()).toBe(0);
  });
});
