/** Review of the claim census (lib/usecases/claim-census.ts): a run stamped ahead of the admission's clock must not vouch past a claim recorded now. */
import { describe, expect, it } from 'vitest';
import { CLAIM_SETTLE_MS, admissionReads } from '../../lib/usecases/claim-census.ts';

const AT = 10_000_000;

describe('admissionReads with a run stamped in the future', () => {
  it.each([
    // a reconcile clock ahead of the admission's clock by less than the max age
    ['ahead by settle time + 1s', CLAIM_SETTLE_MS + 1_000],
    ['ahead by 2.5 minutes', 150_000],
  ])('a claim recorded now is not covered by a clear run %s', (_name, ahead) => {
    const census = { run: { at: AT + ahead, clear: true }, claimAt: AT };
    // The run's listing cannot have seen a node claimed at AT on this clock: reads must list.
    expect(admissionReads({ census, now: AT, workerJudgesInstance: true })).toBe('listing');
  });
});
