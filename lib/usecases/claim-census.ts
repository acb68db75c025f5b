/**
 * The claim census: may a stored node carry a pod CIDR the lease table does not hold (an adoption
 * candidate, lib/routes/ownership.ts `reserved`)? Only then must a new node's admission list every
 * node and lease to keep such blocks out of its allocation (lib/webhook/claims.ts `heldClaims`).
 * Every reconcile run, which lists every node and adopts what it may, records what it found; an
 * admission that sees a node arrive with an unleased pod CIDR records the claim before it answers.
 * `admissionReads` decides the admission's reads from what is stored (docs/decisions/0030).
 */
import { PodrouteError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { ClaimCensusRecord, ClaimCensusStore } from './ports.ts';

/**
 * How long a node admitted with a claim may take to be stored: at most the API server's request
 * timeout (kube-apiserver `--request-timeout`, default 1m0s), which bounds its admission webhooks
 * (each `timeoutSeconds` at most 30: Kubernetes docs, "Dynamic Admission Control", "Timeouts"). A
 * run whose listing started later than that after a claim lists the claimant, if it was stored.
 */
export const CLAIM_SETTLE_MS = 60_000;

/**
 * How far ahead of an admission's clock a run may be stamped and still vouch. A run stamped further
 * ahead was taken on a clock that disagrees with this one, so its listing cannot be placed against a
 * claim recorded here. The bound is a choice on the safe side, not a documented Lambda figure (AWS
 * documents no clock accuracy for Lambda hosts): a larger real skew only makes admissions list.
 */
export const CENSUS_CLOCK_SKEW_MS = 1_000;

/** The reconcile schedule's period in production (serverless.yml `reconcileSchedule`: rate(1 minute)). */
export const RECONCILE_PERIOD_MS = 60_000;

/**
 * How old a clear run may be and still vouch for the stored nodes: three schedule periods, so one
 * run that fails or runs late does not turn admissions to the listing. Every run refreshes it.
 *
 * It must stay below the age of the newest data a restored table can hold when podroute first
 * reads it, so that a restored census is stale on arrival and admissions list until a run on the
 * restored table has adopted what it lost. DynamoDB restores always create a new table (Developer
 * Guide, "Restore a table in DynamoDB"); point-in-time recovery restores to at most
 * LatestRestorableDateTime, "typically 5 minutes before the current time" (API Reference,
 * PointInTimeRecoveryDescription); an on-demand backup holds the data committed up to about its
 * request time and becomes restorable "within minutes" (API Reference, CreateBackup), and the
 * restore takes time of its own. A slower schedule than the default leaves the census stale between
 * runs: admissions then list, which is safe (docs/configuration.md, `reconcileSchedule`).
 */
export const CENSUS_MAX_AGE_MS = 3 * RECONCILE_PERIOD_MS;

export type AdmissionReads = 'keyed' | 'listing';

/** What the admission's reads are decided on: the census as read (null: none, or unreadable) and the time now. */
export interface AdmissionReadsInput {
  census: ClaimCensusRecord | null;
  now: number;
  /** Whether the plane's worker judges a new node naming a stored node's instance on fresh reads (lib/dataplane/data-plane.ts). */
  workerJudgesInstance: boolean;
}

/**
 * The admission's reads: `keyed` only while the last run recorded is clear, no older than
 * CENSUS_MAX_AGE_MS (nor as far in the future: a clock gone wrong vouches for nothing), listed
 * after every recorded claim had settled, and the worker judges a shared instance without the
 * admission's listing. Anything else lists.
 */
export function admissionReads(input: AdmissionReadsInput): AdmissionReads {
  const run = input.census?.run;
  if (!input.workerJudgesInstance || run === undefined || !run.clear) return 'listing';
  if (input.now - run.at > CENSUS_MAX_AGE_MS || run.at - input.now > CENSUS_CLOCK_SKEW_MS) return 'listing';
  const claimAt = input.census?.claimAt;
  return claimAt === undefined || run.at > claimAt + CLAIM_SETTLE_MS ? 'keyed' : 'listing';
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
 * Records reconcile's run that listed from `at`, clear when every adoption candidate it found is
 * leased now: one conditional UpdateItem every run, so a clear census stays fresh only while runs
 * go on. A failed write is told and changes nothing else: the stored run ages until it is stale.
 */
export async function recordRun(store: ClaimCensusStore | undefined, run: { at: number; clear: boolean; writtenAt: number }, log: Logger): Promise<void> {
  if (!store) return;
  try {
    await store.recordRun(run);
  } catch (error) {
    log.log('warn', 'census.write-failed', { error, clear: run.clear });
  }
}

/** A claim the admission had to record before answering and could not: the node is denied. */
export class ClaimNotRecordedError extends PodrouteError {
  override name = 'ClaimNotRecordedError';
}

/**
 * Records that node `name` arrives with `cidrs` no lease of it holds, before the admission lets it
 * be stored; throws ClaimNotRecordedError when the store fails, so the admission denies the node.
 */
export async function recordClaim(store: ClaimCensusStore | undefined, name: string, cidrs: readonly string[], at: number): Promise<void> {
  await writeClaim(store, at, `node ${name}: podroute could not record its pod CIDR claim ${cidrs.join(', ')}`);
}

/**
 * Records, before a departed owner's lease is released, that its block may be carried by a stored
 * node the release did not list (a conflicting claim, a restored table): admissions list until a
 * run that listed after the release (and adopted that block for its carrier) vouches again. Throws
 * ClaimNotRecordedError when the store fails: the caller keeps the lease (docs/decisions/0030).
 */
export async function recordRelease(store: ClaimCensusStore | undefined, owner: string, cidr: string, at: number): Promise<void> {
  await writeClaim(store, at, `lease ${cidr} of ${owner}: podroute could not record its release in the claim census`);
}

/** The one write of `claimAt`: a failed one is a retryable ClaimNotRecordedError saying what it was for. */
async function writeClaim(store: ClaimCensusStore | undefined, at: number, failure: string): Promise<void> {
  if (!store) return;
  try {
    await store.recordClaim(at);
  } catch (error) {
    throw new ClaimNotRecordedError(failure, { retryable: true, cause: error });
  }
}
