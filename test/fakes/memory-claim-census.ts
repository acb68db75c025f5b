/**
 * MemoryClaimCensus: the ClaimCensusStore port (lib/usecases/ports.ts) in memory, written as
 * DynamoDbClaimCensus writes its item: a run as the port says, a claim only to a later time.
 */
import { CENSUS_CLOCK_SKEW_MS } from '../../lib/usecases/claim-census.ts';
import type { ClaimCensusRecord, ClaimCensusStore } from '../../lib/usecases/ports.ts';

export class MemoryClaimCensus implements ClaimCensusStore {
  private stored: ClaimCensusRecord = {};

  async read(): Promise<ClaimCensusRecord> {
    return structuredClone(this.stored);
  }

  async recordRun(run: { at: number; clear: boolean; writtenAt: number }): Promise<void> {
    const stored = this.stored.run;
    const replaces = !run.clear || stored === undefined || stored.at < run.at || stored.at > run.writtenAt + CENSUS_CLOCK_SKEW_MS;
    if (replaces) this.stored = { ...this.stored, run: { at: run.at, clear: run.clear } };
  }

  async recordClaim(at: number): Promise<void> {
    const stored = this.stored.claimAt;
    if (stored === undefined || stored < at || stored > at + CENSUS_CLOCK_SKEW_MS) this.stored = { ...this.stored, claimAt: at };
  }
}
