/** The claim census (lib/usecases/claim-census.ts): when a new node's admission may read by key alone, and how runs and claims are recorded. */
import { describe, expect, it } from 'vitest';
import { CENSUS_MAX_AGE_MS, CLAIM_SETTLE_MS, ClaimNotRecordedError, admissionReads, recordClaim, recordRun } from '../../lib/usecases/claim-census.ts';
import type { ClaimCensusRecord } from '../../lib/usecases/ports.ts';
import { MemoryClaimCensus } from '../fakes/index.ts';
import { memoryLogger } from '../../lib/log.ts';

const AT = 10_000_000;

describe('admissionReads', () => {
  it.each<[string, ClaimCensusRecord | null, number, boolean, 'keyed' | 'listing']>([
    // name, census, now, the worker judges a shared instance, reads
    ['no store, or unreadable', null, AT, true, 'listing'],
    ['no run recorded yet', {}, AT, true, 'listing'],
    ['a clear run just now, no claim ever', { run: { at: AT, clear: true } }, AT, true, 'keyed'],
    ['a clear run as old as the max age', { run: { at: AT, clear: true } }, AT + CENSUS_MAX_AGE_MS, true, 'keyed'],
    ['a clear run older than the max age (runs stopped, or a restored table)', { run: { at: AT, clear: true } }, AT + CENSUS_MAX_AGE_MS + 1, true, 'listing'],
    ['a clear run stamped further ahead than the max age (a clock gone wrong)', { run: { at: AT + CENSUS_MAX_AGE_MS + 1, clear: true } }, AT, true, 'listing'],
    ['a clear run a moment ahead of this clock', { run: { at: AT + 5, clear: true } }, AT, true, 'keyed'],
    ['a fresh run that left an unleased claim', { run: { at: AT, clear: false } }, AT, true, 'listing'],
    ['a claim after the clear run', { run: { at: AT, clear: true }, claimAt: AT + 1 }, AT + 2, true, 'listing'],
    ['a claim whose node may still be stored after the run listed', { run: { at: AT, clear: true }, claimAt: AT - CLAIM_SETTLE_MS }, AT, true, 'listing'],
    ['a claim older than the run by more than the settle time', { run: { at: AT, clear: true }, claimAt: AT - CLAIM_SETTLE_MS - 1 }, AT, true, 'keyed'],
    ['a fresh clear run, but a worker that does not judge a shared instance (prefixes mode)', { run: { at: AT, clear: true } }, AT, false, 'listing'],
  ])('%s: %s', (_name, census, now, workerJudgesInstance, reads) => {
    expect(admissionReads({ census, now, workerJudgesInstance })).toBe(reads);
  });
});

describe('recording', () => {
  it('records every run, clear or not, so a clear census is refreshed each run and a later one is kept', async () => {
    const store = new MemoryClaimCensus();
    const log = memoryLogger();
    await recordRun(store, { at: AT, clear: true, writtenAt: AT }, log);
    await recordRun(store, { at: AT + 60_000, clear: true, writtenAt: AT + 60_000 }, log);
    expect(await store.read()).toEqual({ run: { at: AT + 60_000, clear: true } });
    await recordRun(store, { at: AT + 120_000, clear: false, writtenAt: AT + 120_000 }, log);
    expect(await store.read()).toEqual({ run: { at: AT + 120_000, clear: false } });
  });

  it('a run whose write fails is told, not thrown: the stored run ages until it is stale', async () => {
    const log = memoryLogger();
    const failing = { read: async () => ({}), recordRun: async () => Promise.reject(new Error('throttled')), recordClaim: async () => undefined };
    await recordRun(failing, { at: AT, clear: true, writtenAt: AT }, log);
    expect(log.lines.map((l) => l.event)).toEqual(['census.write-failed']);
  });

  it('a claim whose write fails throws ClaimNotRecordedError naming the node and its pod CIDRs', async () => {
    const failing = { read: async () => ({}), recordRun: async () => undefined, recordClaim: async () => Promise.reject(new Error('throttled')) };
    const thrown = await recordClaim(failing, 'node-c', ['100.64.0.0/24'], AT).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ClaimNotRecordedError);
    expect((thrown as Error).message).toBe('node node-c: podroute could not record its pod CIDR claim 100.64.0.0/24');
  });
});
