/**
 * The CREATE admission under the claim census (lib/usecases/claim-census.ts): after a reconcile run
 * that left no unleased pod CIDR, a new node is allocated from the lease table by keyed reads, with
 * no node listing; a node arriving with an unleased claim turns the next admissions back to the
 * listing, so the block it carries is still never handed out.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { nodeCreateReview } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring, type TestWiring } from '../support/wiring.ts';
import { type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const podCidrOf = (response: unknown): unknown => {
  const patch = (response as { response?: { patch?: string } }).response?.patch;
  const ops = patch === undefined ? [] : (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Array<{ path: string; value?: unknown }>);
  return ops.find((op) => op.path === '/spec/podCIDR')?.value;
};

async function setup(): Promise<TestWiring> {
  world.addClusterTable();
  return testWiring(world, local);
}

/** The admission of a new node on a fresh instance: its pod CIDR, and whether it listed the nodes. */
async function admitNew(w: TestWiring, name: string): Promise<{ podCidr: unknown; listed: boolean; reads: unknown }> {
  world.resetStats();
  const instance = world.ec2.state.addInstance();
  const podCidr = podCidrOf(await admit(nodeCreateReview(world.nodeObject(name, instance.id)), w.reconcileDeps()));
  const listed = (world.kube.stats.all()['GET /api/v1/nodes'] ?? 0) > 0;
  const reads = w.log.lines.filter((l) => l.event === 'webhook.admitted' && l.node === name).map((l) => l.reads)[0];
  return { podCidr, listed, reads };
}

describe('CREATE admission under the claim census', () => {
  it('lists every node until a reconcile run has vouched for them, then reads by key alone', async () => {
    const w = await setup();
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/24'], unleased: true });
    expect(await admitNew(w, 'node-b')).toEqual({ podCidr: '100.64.1.0/24', listed: true, reads: 'listing' });
    // Reconcile adopts node-a's block: no stored node carries an unleased one any more.
    await reconcile(w.reconcileDeps());
    expect(await admitNew(w, 'node-c')).toEqual({ podCidr: '100.64.2.0/24', listed: false, reads: 'keyed' });
    const leases = ((await w.wiring.cidrSets[0]?.leases()) ?? []).map((l) => `${l.cidr}=${l.owner}`);
    expect(leases).toEqual(['100.64.0.0/24=node-a', '100.64.1.0/24=node-b', '100.64.2.0/24=node-c']);
  });

  it('reads as much in a cluster of 510 nodes as in one of 3 (keyed reads: nothing grows with the cluster)', async () => {
    const w = await setup();
    await w.wiring.claimCensus?.recordRun({ at: world.clock.now(), clear: true });
    const readsOf = async (name: string) => {
      w.dynamo.reset();
      const { listed } = await admitNew(w, name);
      return { listed, kube: world.kube.stats.all(), ec2: world.ec2.stats.calls, dynamo: Object.fromEntries(w.dynamo.counts) };
    };
    for (let i = 0; i < 3; i++) await world.addNode(`small-${i}`);
    const small = await readsOf('node-x');
    // Past one page of a listing (500), so a listing would show.
    for (let i = 0; i < 510; i++) await world.addNode(`large-${i}`);
    const large = await readsOf('node-y');
    expect(small.listed).toBe(false);
    expect(large).toEqual(small);
  });

  it.each([
    ['a managed node', false],
    ['a node that is not podroute\'s (no instance in its providerID)', true],
  ])('a claim of an unleased block by %s turns the admissions back to the listing: the block is never handed out', async (_name, unmanaged) => {
    const w = await setup();
    await reconcile(w.reconcileDeps());
    // The claimant's CREATE carries the next free block, which no lease holds; it is stored after.
    const instanceId = unmanaged ? '' : world.ec2.state.addInstance().id;
    await admit(nodeCreateReview(world.nodeObject('claimant', instanceId, ['100.64.0.0/24'])), w.reconcileDeps());
    await world.addNode('claimant', { podCidrs: ['100.64.0.0/24'], unleased: true, ...(unmanaged ? { noInstance: true } : {}) });
    expect(await admitNew(w, 'node-n')).toEqual({ podCidr: '100.64.1.0/24', listed: true, reads: 'listing' });
  });
});
