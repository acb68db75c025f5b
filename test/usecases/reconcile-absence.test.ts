/**
 * Reconcile acts on absence only once a keyed read confirmed it: a listing that lacks nodes frees no
 * lease and deletes no route; leases of nodes that never got stored go once their node reads 404;
 * the mass-deletion guard judges the unconfirmed deletions of a window of runs.
 * Over the in-memory ports (test/support/fake-world.ts); the adapters' own tests run them against
 * the emulators and dynalite (test/contracts/).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { PodrouteError } from '../../lib/errors.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { NodeSource } from '../../lib/usecases/ports.ts';
import { fakeWiring, fakeWorld, type FakeWiring, type FakeWorld } from '../support/fake-world.ts';

let world: FakeWorld;
beforeEach(() => {
  world = fakeWorld();
});

const GRACE_MS = 600_000;
const cidrOf = (i: number) => `100.64.${i}.0/24`;
const nameOf = (i: number) => `node-${String(i).padStart(2, '0')}`;

/** A node source whose listing leaves out `missing` (no error), while keyed reads see everything. */
function shortListing(source: NodeSource, missing: ReadonlySet<string>): NodeSource {
  return {
    listNodes: async () => (await source.listNodes()).filter((node: Node) => !missing.has(node.metadata.name)),
    getNode: (name) => source.getNode(name),
    setNetworkUnavailable: (name, unavailable, text) => source.setNetworkUnavailable(name, unavailable, text),
    updatePodCidr: (node, cidrs) => source.updatePodCidr(node, cidrs),
    warn: (name, reason, message) => source.warn(name, reason, message),
  };
}

/** `count` nodes with pod CIDRs, each routed in every table, leased by a first full reconcile. */
async function routedCluster(count: number, tables: number): Promise<{ w: FakeWiring; tableIds: string[] }> {
  const tableIds = Array.from({ length: tables }, () => world.addClusterTable());
  for (let i = 0; i < count; i++) {
    const node = await world.addNode(nameOf(i), { podCidrs: [cidrOf(i)], networkUnavailable: 'False' });
    for (const routeTableId of tableIds) await world.routeTables.createRoute({ routeTableId, destinationCidr: cidrOf(i), networkInterfaceId: node.eniId });
  }
  const w = await fakeWiring(world, { LEASE_GRACE_SECONDS: String(GRACE_MS / 1000) });
  await reconcile(w.reconcileDeps());
  expect((await w.cidrSets[0]?.leases())?.length).toBe(count);
  w.queue.clear();
  return { w, tableIds };
}

const sentDeletes = (w: FakeWiring) => w.queue.sends.flatMap((send) => send.messages).filter((m) => m.kind === 'delete');

describe('reconcile: absence is confirmed before anything is freed', () => {
  it('a listing that lacks 4 of 14 nodes frees none of their leases and deletes none of their routes; new nodes get other blocks', async () => {
    const { w } = await routedCluster(14, 1);
    const missing = new Set([1, 4, 7, 10].map(nameOf));
    world.clock.advance(GRACE_MS + 1);
    const report = await reconcile({ ...w.reconcileDeps(), nodes: shortListing(world.nodes, missing) });
    expect(report.reclaimed).toEqual([]);
    expect(sentDeletes(w)).toEqual([]);
    expect((await w.cidrSets[0]?.leases())?.map((lease) => lease.owner)).toEqual(Array.from({ length: 14 }, (_, i) => nameOf(i)));
    const kept = w.log.lines.filter((line) => line.event === 'reclaim.kept').map((line) => line.owner);
    expect(kept.sort()).toEqual([...missing].sort());

    await world.addNode('node-new-a');
    await world.addNode('node-new-b');
    await reconcile(w.reconcileDeps());
    const taken = new Set(Array.from({ length: 14 }, (_, i) => cidrOf(i)));
    for (const name of ['node-new-a', 'node-new-b']) {
      expect(world.nodes.podCidrs(name)).toHaveLength(1);
      expect(taken.has(world.nodes.podCidrs(name)[0] ?? '')).toBe(false);
    }
  });

  it('a node whose keyed read fails keeps its lease and its routes, and the run reports the error', async () => {
    const { w } = await routedCluster(4, 1);
    const missing = new Set([nameOf(2)]);
    const flaky: NodeSource = { ...shortListing(world.nodes, missing), getNode: () => Promise.reject(new PodrouteError('connection reset', { retryable: true })) };
    world.clock.advance(GRACE_MS + 1);
    const report = await reconcile({ ...w.reconcileDeps(), nodes: flaky });
    expect(report.reclaimed).toEqual([]);
    expect(sentDeletes(w)).toEqual([]);
    expect(report.errors).toEqual([expect.objectContaining({ node: nameOf(2), step: 'reclaim' })]);
  });

  it('a node that reads 404 past the grace period loses its lease and its routes (confirmed: the guard does not count it)', async () => {
    const { w, tableIds } = await routedCluster(4, 1);
    world.nodes.delete(nameOf(0));
    world.clock.advance(GRACE_MS + 1);
    const report = await reconcile(w.reconcileDeps());
    expect(report.reclaimed).toEqual([{ cidr: cidrOf(0), owner: nameOf(0) }]);
    expect(sentDeletes(w)).toEqual([expect.objectContaining({ routeTableId: tableIds[0], destinationCidr: cidrOf(0) })]);
  });

  it('leases taken at admission for nodes that never got stored (more than half the set) are released once each reads 404', async () => {
    const { w } = await routedCluster(14, 1);
    const set = w.cidrSets[0];
    if (!set) throw new Error('no CIDR set');
    // A leaked webhook token's forged CREATEs: more leases than the 14 real ones (the issue saw 240).
    for (let i = 0; i < 30; i++) await set.allocateNext(`forged-${i}`);
    world.clock.advance(GRACE_MS + 1);
    const report = await reconcile(w.reconcileDeps());
    expect(report.reclaimWithheld).toBe(0);
    expect(report.reclaimed).toHaveLength(30);
    expect((await set.leases()).map((lease) => lease.owner)).toEqual(Array.from({ length: 14 }, (_, i) => nameOf(i)));
  });

  it('the guard stops routes that no lease names from going 4 a run, at half of the 28 over the window', async () => {
    const { w } = await routedCluster(14, 2);
    const set = w.cidrSets[0];
    if (!set) throw new Error('no CIDR set');
    let deleted = 0;
    for (let run = 0; run < 6; run++) {
      // Two more nodes leave a run; their leases are released (as the node-left check does), their
      // instances run on, so their routes stay active with no lease naming them.
      for (const i of [2 * run, 2 * run + 1]) {
        world.nodes.delete(nameOf(i));
        await set.release(cidrOf(i));
      }
      w.queue.clear();
      world.clock.advance(60_000);
      await reconcile(w.reconcileDeps());
      for (const op of sentDeletes(w)) {
        if (op.kind !== 'delete') continue;
        await world.routeTables.deleteRoute({ routeTableId: op.routeTableId, destinationCidr: op.destinationCidr });
        deleted += 1;
      }
    }
    expect(deleted).toBe(12);
  });
});
