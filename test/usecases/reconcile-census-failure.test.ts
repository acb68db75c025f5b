/**
 * A reconcile run records the claim census only once it has listed every node (lib/usecases/reconcile.ts,
 * docs/decisions/0030): a listing that fails part-way (the node adapter's 410 after a restart, a
 * dropped connection) records no run, so a clear census is not refreshed by a run that saw part of
 * the cluster, and it goes stale on its own max age. Over the port fakes.
 */
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../lib/kube/kube-errors.ts';
import { CENSUS_MAX_AGE_MS, admissionReads } from '../../lib/usecases/claim-census.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { MemoryClaimCensus } from '../fakes/index.ts';
import { fakeWiring, fakeWorld } from '../support/fake-world.ts';

describe('a reconcile whose node listing fails', () => {
  it.each([
    ['a continue token expired again after the restart (410)', new KubeApiError('list nodes: continue token expired again after a restart', { status: 410, verb: 'list', resource: 'nodes', retryable: true })],
    ['a connection reset part-way through the pages', new KubeApiError('list nodes: socket hang up', { verb: 'list', resource: 'nodes', retryable: true })],
  ])('on %s records no run: the last clear run ages out, and admissions list', async (_case, failure) => {
    const world = fakeWorld();
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const w = await fakeWiring(world);
    const census = new MemoryClaimCensus();
    await reconcile({ ...w.reconcileDeps(), claimCensus: census });
    const clearRun = await census.read();
    expect(clearRun).toEqual({ run: { at: world.clock.now(), clear: true } });

    world.clock.advance(60_000);
    world.nodes.listNodes = async () => Promise.reject(failure);
    await expect(reconcile({ ...w.reconcileDeps(), claimCensus: census })).rejects.toMatchObject({ message: expect.stringMatching(/refused to run/), retryable: true });
    expect(await census.read()).toEqual(clearRun);

    world.clock.advance(CENSUS_MAX_AGE_MS - 60_000 + 1);
    expect(admissionReads({ census: await census.read(), now: world.clock.now(), workerJudgesInstance: true })).toBe('listing');
  });
});
