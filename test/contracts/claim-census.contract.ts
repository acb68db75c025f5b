/**
 * The ClaimCensusStore contract (lib/usecases/ports.ts): each field of the census only moves forward
 * in time, whoever writes it, run against MemoryClaimCensus and DynamoDbClaimCensus over dynalite
 * (claim-census.contract.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ClaimCensusStore } from '../../lib/usecases/ports.ts';

export function claimCensusContract(name: string, make: () => Promise<ClaimCensusStore>): void {
  describe(`ClaimCensusStore contract: ${name}`, () => {
    it('starts empty and reads back the run and the claim recorded', async () => {
      const store = await make();
      expect(await store.read()).toEqual({});
      await store.recordRun({ at: 1_000, clear: true });
      expect(await store.read()).toEqual({ run: { at: 1_000, clear: true } });
      await store.recordClaim(2_000);
      expect(await store.read()).toEqual({ run: { at: 1_000, clear: true }, claimAt: 2_000 });
      await store.recordRun({ at: 3_000, clear: false });
      expect(await store.read()).toEqual({ run: { at: 3_000, clear: false }, claimAt: 2_000 });
    });

    it('keeps a later run and a later claim over an older one written after them (overlapping writers)', async () => {
      const store = await make();
      await store.recordRun({ at: 5_000, clear: false });
      await store.recordRun({ at: 4_000, clear: true });
      await store.recordRun({ at: 5_000, clear: true });
      await store.recordClaim(7_000);
      await store.recordClaim(6_000);
      expect(await store.read()).toEqual({ run: { at: 5_000, clear: false }, claimAt: 7_000 });
    });
  });
}
