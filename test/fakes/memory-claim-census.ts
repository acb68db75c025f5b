/**
 * MemoryClaimCensus: the ClaimCensusStore port (lib/usecases/ports.ts) in memory, written as
 * DynamoDbClaimCensus writes its item: a field moves only to a later time.
 */
import type { ClaimCensusRecord, ClaimCensusStore } from '../../lib/usecases/ports.ts';

export class MemoryClaimCensus implements ClaimCensusStore {
  private stored: ClaimCensusRecord = {};

  async read(): Promise<ClaimCensusRecord> {
    return structuredClone(this.stored);
  }

  async recordRun(run: { at: number; clear: boolean }): Promise<void> {
    if (this.stored.run === undefined || this.stored.run.at < run.at) this.stored = { ...this.stored, run: { ...run } };
  }

  async recordClaim(at: number): Promise<void> {
    if (this.stored.claimAt === undefined || this.stored.claimAt < at) this.stored = { ...this.stored, claimAt: at };
  }
}
