/**
 * A node routed from its admission before it is stored: reconcile lists the route (tables first)
 * but not yet the node. The node's lease, taken at admission, keeps the route from a `no-owner`
 * deletion while the lease is young; a lease past the grace period without its node does not.
 */
import { describe, expect, it } from 'vitest';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import { memoryLogger } from '../../lib/log.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring, type TestWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

/** The worker takes what reconcile queued. */
async function drain(w: TestWiring): Promise<void> {
  const deps = { ...w.workerDeps(), log: memoryLogger() };
  for (const message of w.queue.messages) await handleWorkMessage(JSON.stringify(message), { receiveCount: 1, maxReceiveCount: 5 }, deps);
}

describe('reconcile and a node routed from its admission', () => {
  async function admittedButNotStored() {
    const table = world.addClusterTable();
    await world.addNode('node-old', { podCidrs: ['100.64.0.0/24'], networkUnavailable: 'False' });
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '600' });
    const set = w.wiring.cidrSets[0];
    if (!set) throw new Error('no CIDR set');
    await set.occupy('100.64.0.0/24', 'node-old');
    // The admission allocated node-a's block and queued its routes; the API server has not stored it.
    const cidr = await set.allocateNext('node-a');
    const instance = world.ec2.state.addInstance();
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: instance.id, podCidrs: [cidr] }));
    const workerDeps = { clusterCidrs: ['100.64.0.0/16'], routeTables: world.routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: w.wiring.cidrSets, plane: routesWorkerPlane(w.wiring.cidrSets), leaseGraceSeconds: 600, log: memoryLogger(), now: world.clock.now };
    await handleWorkMessage(message, { receiveCount: 1, maxReceiveCount: 5 }, workerDeps);
    expect(world.routeSummary(table).some((r) => r.startsWith(cidr))).toBe(true);
    return { table, cidr, w };
  }

  it('a young lease of a node not stored yet keeps its route from a no-owner deletion', async () => {
    const { table, cidr, w } = await admittedButNotStored();
    const report = await reconcile(w.reconcileDeps());
    // Neither planned for deletion in the run's report nor sent to the worker.
    expect(report.plan.delete.map((op) => op.destinationCidr)).not.toContain(cidr);
    expect(w.queue.messages.filter((m) => m.kind === 'delete')).toEqual([]);
    await drain(w);
    expect(world.routeSummary(table).some((r) => r.startsWith(cidr))).toBe(true);
  });

  it('past the grace period without its node, the lease is reclaimed and the route deleted', async () => {
    const { table, cidr, w } = await admittedButNotStored();
    world.clock.advance(600_001);
    await reconcile(w.reconcileDeps());
    expect(w.queue.messages.filter((m) => m.kind === 'delete').map((m) => m.kind === 'delete' && m.destinationCidr)).toEqual([cidr]);
    await drain(w);
    expect(world.routeSummary(table).some((r) => r.startsWith(cidr))).toBe(false);
  });
});
