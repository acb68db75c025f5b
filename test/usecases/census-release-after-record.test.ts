/**
 * Review of the claim census (docs/decisions/0030): a lease released while a stored node carries
 * the same block leaves that node carrying an unleased block, the very thing the census vouches no
 * stored node does. Two ways there: a kubelet's claim of another node's pod CIDR (a conflict while
 * that node held it), or a restored table (0030's own case) whose lease of block X still names M,
 * which left after the restore point, while N, which got X after M left, carries it. Reconcile
 * records its run (clear) *before* its reclaim, and the node-left check releases without recording
 * anything, so the next keyed admission hands that block out; the
 * listing admission holds it (lib/webhook/claims.ts `heldClaims`: the carrier is a candidate now).
 */
import { describe, expect, it } from 'vitest';
import { admissionReads } from '../../lib/usecases/claim-census.ts';
import { checkNodeLeft } from '../../lib/usecases/node-left.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { MemoryClaimCensus } from '../fakes/index.ts';
import { nodeCreateReview, patchedPodCidr } from '../support/admission.ts';
import { fakeWiring, fakeWorld, type FakeWiring, type FakeWorld } from '../support/fake-world.ts';

// Two /24 blocks: M's (X) and O's; once M's lease goes, X is the only free block.
const X = '100.64.0.0/24';
const ENV = { CLUSTER_CIDRS: '100.64.0.0/23', LEASE_GRACE_SECONDS: '300' };
const PAST_GRACE_MS = 301_000;

async function setup(): Promise<{ world: FakeWorld; w: FakeWiring; census: MemoryClaimCensus; deps: () => ReturnType<FakeWiring['reconcileDeps']> & { claimCensus: MemoryClaimCensus } }> {
  const world = fakeWorld();
  world.addClusterTable();
  await world.addNode('m', { podCidrs: [X] });
  await world.addNode('o', { podCidrs: ['100.64.1.0/24'] });
  const w = await fakeWiring(world, ENV);
  const census = new MemoryClaimCensus();
  const deps = () => ({ ...w.reconcileDeps(), claimCensus: census });
  // The first run adopts both blocks: clear.
  await reconcile(deps());
  expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual([`${X}=m`, '100.64.1.0/24=o']);
  // N's kubelet registers with M's pod CIDR: a conflict (leased to m), which records no claim.
  const n = world.routeTables.addInstance();
  const answer = await admit(nodeCreateReview(world.nodeObject('n', n.instanceId, [X])), deps());
  expect(answer.response.allowed).toBe(true);
  world.nodes.put(world.nodeObject('n', n.instanceId, [X]));
  return { world, w, census, deps };
}

async function admitNew(world: FakeWorld, deps: Parameters<typeof admit>[1], name: string): Promise<unknown> {
  const instance = world.routeTables.addInstance();
  return patchedPodCidr(await admit(nodeCreateReview(world.nodeObject(name, instance.instanceId)), deps));
}

describe('a lease released while a stored node carries its block, under a clear census', () => {
  it('reconcile\'s reclaim: the run recorded clear before it released; the next admission must not hand out the block n carries', async () => {
    const { world, census, deps } = await setup();
    world.nodes.delete('m');
    world.clock.advance(PAST_GRACE_MS);
    const report = await reconcile(deps());
    expect(report.reclaimed).toEqual([{ cidr: X, owner: 'm' }]);
    // n still carries X, and no lease holds it now.
    expect(world.nodes.podCidrs('n')).toEqual([X]);
    const reads = admissionReads({ census: await census.read(), now: world.clock.now(), workerJudgesInstance: true });
    expect(await admitNew(world, deps(), 'z')).not.toBe(X);
    expect(reads).toBe('listing');
  });

  it('the node-left check: it releases without a listing and records nothing; the next admission must not hand out the block n carries', async () => {
    const { world, w, census, deps } = await setup();
    world.clock.advance(PAST_GRACE_MS);
    // A run while m is still stored: n's claim is a conflict, the run is clear and fresh.
    await reconcile(deps());
    world.nodes.delete('m');
    world.clock.advance(10_000);
    const d = deps();
    const result = await checkNodeLeft('m', { nodes: d.nodes, leaseSets: () => d.plane.leaseSets(), freeDepartedBlock: (cidr, owner) => d.plane.freeDepartedBlock(cidr, owner), log: w.log, now: world.clock.now, leaseGraceSeconds: w.config.leaseGraceSeconds, claimCensus: census });
    expect(result).toBe(`released:${X}`);
    const reads = admissionReads({ census: await census.read(), now: world.clock.now(), workerJudgesInstance: true });
    expect(await admitNew(world, deps(), 'z')).not.toBe(X);
    expect(reads).toBe('listing');
  });

  it('a release the census cannot record is not made: the node-left check fails (retried) and the lease stays', async () => {
    const { world, w, deps } = await setup();
    world.nodes.delete('m');
    world.clock.advance(PAST_GRACE_MS);
    const d = deps();
    const failing = { read: async () => ({}), recordRun: async () => undefined, recordClaim: async () => Promise.reject(new Error('DynamoDB unavailable')) };
    await expect(checkNodeLeft('m', { nodes: d.nodes, leaseSets: () => d.plane.leaseSets(), freeDepartedBlock: (cidr, owner) => d.plane.freeDepartedBlock(cidr, owner), log: w.log, now: world.clock.now, leaseGraceSeconds: w.config.leaseGraceSeconds, claimCensus: failing }))
      .rejects.toMatchObject({ name: 'ClaimNotRecordedError', retryable: true });
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toContain(`${X}=m`);
  });
});
