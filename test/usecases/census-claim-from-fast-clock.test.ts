/**
 * Review of the claim census (docs/decisions/0030, lib/aws/dynamodb-claim-census.ts `recordClaim`):
 * the last commit let a clear run replace a run stamped past the skew bound, because "a wrong
 * clock's would keep every later run out". A claim has the same flaw and kept it: `claimAt` is
 * written only over an older one, so one admission on a container whose clock is a day ahead keeps
 * every later claim out and every admission listing (`run.at > claimAt + CLAIM_SETTLE_MS`) for a
 * day, whatever right-clocked claims and clear runs follow.
 */
import { describe, expect, it } from 'vitest';
import { DynamoDbClaimCensus } from '../../lib/aws/dynamodb-claim-census.ts';
import { CLAIM_SETTLE_MS, admissionReads } from '../../lib/usecases/claim-census.ts';
import type { ClaimCensusStore } from '../../lib/usecases/ports.ts';
import { MemoryClaimCensus } from '../fakes/index.ts';
import { useFreshCidrTables } from '../support/dynalite.ts';

const freshTable = useFreshCidrTables();
const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 0, 1);

describe.each<[string, () => Promise<ClaimCensusStore>]>([
  ['MemoryClaimCensus', async () => new MemoryClaimCensus()],
  ['DynamoDbClaimCensus over dynalite', async () => new DynamoDbClaimCensus(await freshTable())],
])('%s: a claim stamped by a clock a day ahead', (_name, make) => {
  it('gives way to a right clock\'s claim: a clear run listed after that one has settled vouches again', async () => {
    const store = await make();
    await store.recordClaim(NOW + DAY_MS); // an admission on a container whose clock is a day fast
    await store.recordClaim(NOW); // the next claim, on a right clock
    const run = NOW + CLAIM_SETTLE_MS + 1; // listed after both claimants were stored
    await store.recordRun({ at: run, clear: true, writtenAt: run });
    expect(admissionReads({ census: await store.read(), now: run + 1_000, workerJudgesInstance: true })).toBe('keyed');
  });
});
