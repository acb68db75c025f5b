/** The claim census's deciders (lib/usecases/claim-census.ts): when a new node's admission may read by key alone, and when a run is recorded. */
import { describe, expect, it } from 'vitest';
import { CLAIM_SETTLE_MS, admissionReads, runToRecord } from '../../lib/usecases/claim-census.ts';
import type { ClaimCensusRecord } from '../../lib/usecases/ports.ts';

const AT = 10_000_000;

describe('admissionReads', () => {
  it.each<[string, ClaimCensusRecord | null, 'keyed' | 'listing']>([
    ['no store', null, 'listing'],
    ['no run recorded yet', {}, 'listing'],
    ['a clear run, no claim ever', { run: { at: AT, clear: true } }, 'keyed'],
    ['a run that left an unleased claim', { run: { at: AT, clear: false } }, 'listing'],
    ['a claim after the clear run', { run: { at: AT, clear: true }, claimAt: AT + 1 }, 'listing'],
    ['a claim whose node may still be stored after the run listed', { run: { at: AT, clear: true }, claimAt: AT - CLAIM_SETTLE_MS }, 'listing'],
    ['a claim older than the run by more than the settle time', { run: { at: AT, clear: true }, claimAt: AT - CLAIM_SETTLE_MS - 1 }, 'keyed'],
  ])('%s: %s', (_name, census, reads) => {
    expect(admissionReads(census)).toBe(reads);
  });
});

describe('runToRecord', () => {
  const later = AT + 60_000;
  it.each<[string, ClaimCensusRecord, boolean, boolean]>([
    // name, stored, the run is clear, written
    ['nothing stored, a clear run', {}, true, true],
    ['nothing stored, a run that left a claim', {}, false, true],
    ['stored clear, another clear run (steady state)', { run: { at: AT, clear: true } }, true, false],
    ['stored clear, a run that left a claim', { run: { at: AT, clear: true } }, false, true],
    ['stored not clear, another such run', { run: { at: AT, clear: false } }, false, false],
    ['stored not clear, a clear run', { run: { at: AT, clear: false } }, true, true],
    ['stored clear before a claim, a clear run after it', { run: { at: AT, clear: true }, claimAt: AT + 1 }, true, true],
  ])('%s: written %s', (_name, stored, clear, written) => {
    expect(runToRecord(stored, { at: later, clear })).toEqual(written ? { at: later, clear } : null);
  });
});
