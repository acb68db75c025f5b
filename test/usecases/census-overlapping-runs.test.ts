/**
 * Review of the claim census (docs/decisions/0030, lib/aws/dynamodb-claim-census.ts `recordRun`): a
 * clear run replaces a stored run "stamped more than CENSUS_CLOCK_SKEW_MS ahead of it (a wrong
 * clock)". With right clocks that is also every later run of two that overlap (no reserved
 * concurrency, serverless.yml `reconcileReservedConcurrency` empty; a run slower than the period):
 * run A starts listing, run B starts 2 s later, finds a doubt and records it; A, done last,
 * records its older clear run over B's doubt, and keyed admissions resume, though the newest
 * listing found a stored node carrying an unleased block.
 */
import { describe, expect, it, vi } from 'vitest';
import { admissionReads } from '../../lib/usecases/claim-census.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import type { NodeSource } from '../../lib/usecases/ports.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { MemoryClaimCensus } from '../fakes/index.ts';
import { nodeCreateReview, patchedPodCidr } from '../support/admission.ts';
import { fakeWiring, fakeWorld } from '../support/fake-world.ts';

// The store's own rule (against the time of the write) is in the contract suite, over the fake and
// dynalite (test/contracts/claim-census.contract.ts); here, the same through reconcile.
describe('reconcile: a run that overlaps a later one', () => {
  it('does not put keyed admissions back while the later run\'s listing found an unleased block: the block is not handed out', async () => {
    const X = '100.64.0.0/24';
    const world = fakeWorld();
    world.addClusterTable();
    await world.addNode('o', { podCidrs: ['100.64.1.0/24'] });
    const w = await fakeWiring(world, { CLUSTER_CIDRS: '100.64.0.0/23' });
    const census = new MemoryClaimCensus();
    const deps = () => ({ ...w.reconcileDeps(), claimCensus: census });
    await reconcile(deps());

    // Run A: lists now, and comes back late (a slow page, a cold container).
    world.clock.advance(60_000);
    let listed!: () => void;
    const hasListed = new Promise<void>((resolve) => (listed = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    const slow = new Proxy(world.nodes, {
      get(target, key) {
        if (key === 'listNodes') {
          return async () => {
            const nodes = await target.listNodes();
            listed();
            await resumed;
            return nodes;
          };
        }
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as NodeSource;
    const runA = reconcile({ ...deps(), nodes: slow });
    await hasListed;

    // After A's listing: a node stored with an unleased pod CIDR that no admission recorded
    // (failurePolicy Ignore), and run B, 2 s after A, whose adoption of it fails (throttled).
    world.clock.advance(2_000);
    await world.addNode('x', { podCidrs: [X] });
    const set = w.cidrSets[0];
    if (!set) throw new Error('no set');
    vi.spyOn(set, 'occupy').mockRejectedValueOnce(new Error('ProvisionedThroughputExceededException'));
    await reconcile(deps());
    expect((await census.read()).run).toEqual({ at: world.clock.now(), clear: false });

    resume();
    await runA;
    const reads = admissionReads({ census: await census.read(), now: world.clock.now(), workerJudgesInstance: true });
    const z = world.routeTables.addInstance();
    expect(patchedPodCidr(await admit(nodeCreateReview(world.nodeObject('z', z.instanceId)), deps()))).not.toBe(X);
    expect(reads).toBe('listing');
  });
});
