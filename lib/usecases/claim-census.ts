/**
 * The claim census: may a stored node carry a pod CIDR the lease table does not hold (an adoption
 * candidate, lib/routes/ownership.ts `reserved`)? Only then must a new node's admission list every
 * node and lease to keep such blocks out of its allocation (lib/webhook/claims.ts `heldClaims`).
 * Reconcile, which lists every node and adopts what it may, records a run whose finding changes the
 * answer; an admission that sees a node arrive with an unleased pod CIDR records the claim. The
 * census decides the admission's reads: keyed only while a run found none, after every claim recorded.
 */
import type { Logger } from '../log.ts';
import type { ClaimCensusRecord, ClaimCensusStore } from './ports.ts';

/**
 * How long a node admitted with a claim may take to be stored: at most the API server's request
 * timeout (kube-apiserver `--request-timeout`, default 1m0s), which bounds its admission webhooks
 * (each `timeoutSeconds` at most 30: Kubernetes docs, "Dynamic Admission Control", "Timeouts"). A
 * run whose listing started later than that after a claim lists the claimant, if it was stored.
 */
export const CLAIM_SETTLE_MS = 60_000;

export type AdmissionReads = 'keyed' | 'listing';

/** The admission's reads under `census`: `keyed` only while a clear run listed after every claim recorded had settled. */
export function admissionReads(census: ClaimCensusRecord | null): AdmissionReads {
  const run = census?.run;
  if (run === undefined || !run.clear) return 'listing';
  const claimAt = census?.claimAt;
  return claimAt === undefined || run.at > claimAt + CLAIM_SETTLE_MS ? 'keyed' : 'listing';
}

/**
 * The run record a reconcile run writes, or null when the stored census already answers the
 * admissions as this run would: a steady state writes nothing.
 */
export function runToRecord(stored: ClaimCensusRecord, run: { at: number; clear: boolean }): { at: number; clear: boolean } | null {
  if (!run.clear) return stored.run?.clear === false ? null : run;
  return admissionReads(stored) === 'keyed' ? null : run;
}

/** The census as stored, or null (no store, or unreadable: the admission then lists, as without one). */
export async function readCensus(store: ClaimCensusStore | undefined, log: Logger): Promise<ClaimCensusRecord | null> {
  if (!store) return null;
  try {
    return await store.read();
  } catch (error) {
    log.log('warn', 'census.read-failed', { error });
    return null;
  }
}

/**
 * Records reconcile's run that listed from `at`: clear when every adoption candidate it found is
 * leased now. A failed read or write is told and changes nothing else (admissions keep to what is
 * stored: a clear census stays so until a run finds a claim it cannot adopt).
 */
export async function recordRun(store: ClaimCensusStore | undefined, run: { at: number; clear: boolean }, log: Logger): Promise<void> {
  if (!store) return;
  try {
    const record = runToRecord(await store.read(), run);
    if (record !== null) await store.recordRun(record);
  } catch (error) {
    log.log('warn', 'census.write-failed', { error, clear: run.clear });
  }
}
