/**
 * The deployed worker's `node-left` check tells the claim census of a release before it makes it
 * (lib/usecases/claim-census.ts `recordRelease`, docs/decisions/0030): after it, admissions list
 * until a run listed after the release vouches again. Through createRouteWorkerHandler and the
 * handler wiring, over the emulators and dynalite; and a census that cannot be written keeps the lease.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { CLAIM_SETTLE_MS, admissionReads } from '../../lib/usecases/claim-census.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { lambdaContext, sqsEvent, sqsRecord, type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const nodeLeft = (node: string) => JSON.stringify({ v: 2, kind: 'node-left', node });

describe('the worker\'s node-left check and the claim census', () => {
  it('records the release before it: a clear run listed before it no longer vouches', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '300' });
    await world.addNode('gone', { podCidrs: ['100.64.3.0/24'], unleased: true });
    // Reconcile adopts the node's block into the lease table.
    await reconcile(w.reconcileDeps());
    const leasesOf = async (owner: string) => ((await w.wiring.cidrSets[0]?.leases()) ?? []).filter((l) => l.owner === owner).map((l) => l.cidr);
    expect(await leasesOf('gone')).toEqual(['100.64.3.0/24']);
    const census = w.wiring.claimCensus;
    if (!census) throw new Error('no claim census in the wiring');
    await world.kube.state.deleteNode('gone', { admit: false });
    world.clock.advance(301_000);
    // A clear run, listed after the node was deleted but before the release.
    await census.recordRun({ at: world.clock.now(), clear: true, writtenAt: world.clock.now() });
    world.clock.advance(CLAIM_SETTLE_MS + 1);
    const before = await census.read();
    expect(admissionReads({ census: before, now: world.clock.now(), workerJudgesInstance: true })).toBe('keyed');

    await createRouteWorkerHandler(async () => w.wiring)(sqsEvent(sqsRecord('m1', nodeLeft('gone'), 1)), lambdaContext());
    expect(await leasesOf('gone')).toEqual([]);
    const after = await census.read();
    expect(after.claimAt).toBe(world.clock.now());
    expect(admissionReads({ census: after, now: world.clock.now(), workerJudgesInstance: true })).toBe('listing');
  });
});
