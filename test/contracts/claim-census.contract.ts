/**
 * The ClaimCensusStore contract (lib/usecases/ports.ts): a claim moves forward in time unless a wrong
 * clock stamped it; a run that is not clear always stands, a clear one replaces an earlier run or a
 * wrong clock's; run against MemoryClaimCensus and DynamoDbClaimCensus over dynalite
 * (claim-census.contract.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { CENSUS_CLOCK_SKEW_MS } from '../../lib/usecases/claim-census.ts';
import type { ClaimCensusStore } from '../../lib/usecases/ports.ts';

export function claimCensusContract(name: string, make: () => Promise<ClaimCensusStore>): void {
  describe(`ClaimCensusStore contract: ${name}`, () => {
    it('starts empty and reads back the run and the claim recorded', async () => {
      const store = await make();
      expect(await store.read()).toEqual({});
      await store.recordRun({ at: 1_000, clear: true, writtenAt: 1_000 });
      expect(await store.read()).toEqual({ run: { at: 1_000, clear: true } });
      await store.recordClaim(2_000);
      expect(await store.read()).toEqual({ run: { at: 1_000, clear: true }, claimAt: 2_000 });
      await store.recordRun({ at: 3_000, clear: false, writtenAt: 3_000 });
      expect(await store.read()).toEqual({ run: { at: 3_000, clear: false }, claimAt: 2_000 });
    });

    it('keeps a later run and a later claim over an older clear run or claim written after them (overlapping writers)', async () => {
      const store = await make();
      await store.recordRun({ at: 5_000, clear: false, writtenAt: 5_000 });
      await store.recordRun({ at: 4_500, clear: true, writtenAt: 4_500 });
      await store.recordRun({ at: 5_000, clear: true, writtenAt: 5_000 });
      await store.recordClaim(7_000);
      await store.recordClaim(6_000);
      expect(await store.read()).toEqual({ run: { at: 5_000, clear: false }, claimAt: 7_000 });
    });

    it.each([
      ['an older clear run', { at: 4_000, clear: true }],
      ['a clear run stamped within the skew bound ahead (its clock may be fast)', { at: 5_000 + CENSUS_CLOCK_SKEW_MS, clear: true }],
      ['a clear run far ahead', { at: 9_999_999, clear: true }],
      ['a run that was not clear', { at: 6_000, clear: false }],
    ])('a run that is not clear replaces %s: a doubt always stands', async (_case, stored) => {
      const store = await make();
      await store.recordRun({ ...stored, writtenAt: stored.at });
      await store.recordRun({ at: 5_000, clear: false, writtenAt: 5_000 });
      expect(await store.read()).toEqual({ run: { at: 5_000, clear: false } });
    });

    it.each([
      ['stamped more than the skew bound ahead (a wrong clock): replaced', { at: 5_000 + CENSUS_CLOCK_SKEW_MS + 1, clear: false }, true],
      ['stamped within the skew bound ahead: kept', { at: 5_000 + CENSUS_CLOCK_SKEW_MS, clear: false }, false],
      ['far ahead and clear: replaced', { at: 9_999_999, clear: true }, true],
    ])('a clear run over a stored run %s', async (_case, stored, replaced) => {
      const store = await make();
      await store.recordRun({ ...stored, writtenAt: stored.at });
      await store.recordRun({ at: 5_000, clear: true, writtenAt: 5_000 });
      expect(await store.read()).toEqual({ run: replaced ? { at: 5_000, clear: true } : stored });
    });

    it('a clear run written late keeps a later run\'s doubt: "ahead" is against the time of the write, not the run\'s start', async () => {
      const store = await make();
      await store.recordRun({ at: 7_000, clear: false, writtenAt: 7_500 });
      await store.recordRun({ at: 5_000, clear: true, writtenAt: 8_000 });
      expect(await store.read()).toEqual({ run: { at: 7_000, clear: false } });
    });

    it.each([
      ['more than the skew bound ahead (a wrong clock): replaced by a right clock\'s', 5_000 + CENSUS_CLOCK_SKEW_MS + 1, 5_000],
      ['within the skew bound ahead: kept', 5_000 + CENSUS_CLOCK_SKEW_MS, 5_000 + CENSUS_CLOCK_SKEW_MS],
    ])('a claim stamped %s', async (_case, stored, kept) => {
      const store = await make();
      await store.recordClaim(stored);
      await store.recordClaim(5_000);
      expect((await store.read()).claimAt).toBe(kept);
    });
  });
}
