/**
 * A node's departure, acted on only once it is real: a `node-left` check (or a signed `NodeLeft`
 * event) releases the node's leases older than the grace period once a keyed read of the node
 * answers 404. It lists no node and deletes no route (the planner decides those). Why:
 * docs/decisions/0012-node-departure.md.
 */
import * as z from '../util/zod-mini.ts';
import type { DataPlane } from '../dataplane/data-plane.ts';
import { PodrouteError } from '../errors.ts';
import { NodeStillDeletingError } from './delivery-outcome.ts';
import type { CidrSet, Lease } from '../ipam/index.ts';
import { NodeNotFoundError } from './port-errors.ts';
import type { Logger } from '../log.ts';
import type { Node } from '../nodes/node.ts';
import { decideLeaseReleases } from './lease-release.ts';
import type { ClaimCensusStore, NodeSource } from './ports.ts';
import { recordRelease } from './claim-census.ts';

/**
 * Seconds the webhook's `node-left` check waits after a DELETE admission, so the API server has
 * (almost always) finished or refused the delete when the worker reads the node. SQS allows 0..900
 * (SQS API reference, SendMessage `DelaySeconds`).
 */
export const NODE_LEFT_CHECK_DELAY_SECONDS = 10;

interface NodeLeftDeps {
  nodes: Pick<NodeSource, 'getNode'>;
  /** The sets the node's leases live in: the data plane's (`DataPlane.leaseSets`). */
  leaseSets: () => Promise<readonly CidrSet[]>;
  /** The data plane's letting go of a block before its lease goes (`DataPlane.freeDepartedBlock`). */
  freeDepartedBlock: DataPlane['freeDepartedBlock'];
  log: Logger;
  now: () => number;
  /** LEASE_GRACE_SECONDS: a lease younger than this is not freed on a 404. */
  leaseGraceSeconds: number;
  /** Told of a release before it is made, so keyed admissions pause (./claim-census.ts `recordRelease`). */
  claimCensus?: ClaimCensusStore;
}

export type NodeLeftResult =
  /**
   * `kept`: blocks of the node left leased because they are younger than the grace period;
   * `held`: blocks left leased because the cloud side has not let go of them yet (asked again later).
   */
  | { kind: 'released'; cidrs: string[]; kept: string[]; held: string[] }
  | { kind: 'exists'; deleting: boolean };

const deletionSchema = z.onFirstUse(() => z.looseObject({ metadata: z.looseObject({ deletionTimestamp: z.optional(z.string().check(z.minLength(1))) }) }));

/** The node is being deleted (finalizers still pending): `metadata.deletionTimestamp` is set. */
function isBeingDeleted(node: Node): boolean {
  const parsed = deletionSchema().safeParse(node);
  return parsed.success && parsed.data.metadata.deletionTimestamp !== undefined;
}

/**
 * Reads the node's leases, then the node; when it is gone (404) releases every lease it owns that
 * is past the grace period and unchanged since that first read, and says which (and which it kept
 * as too young). When it still exists, changes nothing and
 * says whether it is being deleted.
 */
/** Blocks of a gone node the cloud side still holds (or could not be read for): retried, never released. */
export class DepartedBlockHeldError extends PodrouteError {
  override name = 'DepartedBlockHeldError';
  constructor(
    readonly node: string,
    readonly cidrs: readonly string[],
  ) {
    super(`node ${node} is gone but the cloud side still holds ${cidrs.join(', ')}; checking again later`, { retryable: true });
  }
}

export async function releaseIfGone(name: string, deps: NodeLeftDeps): Promise<NodeLeftResult> {
  // The leases as they stand before the read: the departure is seen from here on. A same-name
  // re-join after this renews its lease (a new version), so the release, conditional on the
  // version read here, fails and the node keeps its block; read after the 404, a renewal made
  // between the read and the release would be released with it.
  const owned = await ownedLeases(name, deps);
  try {
    const node = await deps.nodes.getNode(name);
    return { kind: 'exists', deleting: isBeingDeleted(node) };
  } catch (error) {
    if (!(error instanceof NodeNotFoundError)) throw error;
  }
  const { released, kept, renewed, held } = await releaseOwned(owned, name, deps);
  for (const cidr of released) deps.log.log('info', 'action', { action: 'release-cidr', cidr, node: name });
  for (const cidr of renewed) deps.log.log('info', 'release.skipped', { cidr, node: name, reason: 'lease renewed since the departure was seen (a re-join)' });
  for (const { cidr, why } of held) deps.log.log('warn', 'release.held', { cidr, node: name, reason: why });
  for (const cidr of kept) deps.log.log('info', 'release.deferred', { cidr, node: name, reason: 'lease younger than the grace period (a node admitted, not stored yet); left to reconcile' });
  return { kind: 'released', cidrs: released, kept, held: held.map((entry) => entry.cidr) };
}

/**
 * The worker's handling of a `node-left` check: released once the node is 404; retried later
 * while it is still being deleted; acknowledged as stale when it exists without a deletion
 * timestamp (the delete was refused after admission). A node still being deleted rejects with
 * NodeStillDeletingError, and a block the cloud side still holds with DepartedBlockHeldError (once
 * the rest is released); ./delivery-outcome.ts `outcomeOf` decides when to stop asking.
 */
export async function checkNodeLeft(name: string, deps: NodeLeftDeps): Promise<string> {
  const result = await releaseIfGone(name, deps);
  if (result.kind === 'released') {
    if (result.held.length > 0) throw new DepartedBlockHeldError(name, result.held);
    const released = result.cidrs.length === 0 ? 'released:none' : `released:${result.cidrs.join(',')}`;
    return result.kept.length === 0 ? released : `${released} kept:${result.kept.join(',')}`;
  }
  if (!result.deleting) return 'stale:node-exists';
  throw new NodeStillDeletingError(name);
}

/**
 * The block `owner` holds in each set, read by key, not from the lease table: each set answers the
 * owner's lease from its owner record (`CidrSet.ownedLease`: with the DynamoDB store two GetItems,
 * the record and the block it names). A block the record does not name (a larger pod CIDR held as
 * several blocks, a crash leftover) is left to reconcile's reclaim of vanished nodes' leases, which
 * lists the table every tick anyway.
 */
async function ownedLeases(owner: string, deps: Pick<NodeLeftDeps, 'leaseSets'>): Promise<Array<{ set: CidrSet; lease: Lease }>> {
  const sets = await deps.leaseSets();
  // Keyed reads, independent of each other: at once, kept in the sets' order.
  const leases = await Promise.all(sets.map((set) => set.ownedLease(owner)));
  const owned: Array<{ set: CidrSet; lease: Lease }> = [];
  for (const [i, lease] of leases.entries()) {
    const set = sets[i];
    if (lease !== null && set !== undefined) owned.push({ set, lease });
  }
  return owned;
}

/**
 * Releases what the lease decider (./lease-release.ts) lets go of `owned` once the data plane has
 * let go of the block (`freeDepartedBlock`), each release conditional on that lease as read before
 * the node's 404 (or, for a store without versions, on its owner), and returns the CIDRs it
 * released, those it kept, those the cloud side still holds and those renewed since the read.
 * The decider sees the 404 and no listing: only the grace period can keep a lease here.
 */
async function releaseOwned(
  owned: ReadonlyArray<{ set: CidrSet; lease: Lease }>,
  name: string,
  deps: Pick<NodeLeftDeps, 'now' | 'leaseGraceSeconds' | 'freeDepartedBlock' | 'log' | 'claimCensus'>,
): Promise<{ released: string[]; kept: string[]; renewed: string[]; held: Array<{ cidr: string; why: string }> }> {
  const released: string[] = [];
  const kept: string[] = [];
  const renewed: string[] = [];
  const held: Array<{ cidr: string; why: string }> = [];
  // Judged as the owner's (each was read by the owner's key); released as read.
  const judged = new Map(owned.map((entry) => [{ ...entry.lease, owner: name }, entry] as const));
  const verdicts = decideLeaseReleases({
    leases: [...judged.keys()],
    listed: [],
    presence: new Map([[name, 'absent']]),
    now: deps.now(),
    graceMs: deps.leaseGraceSeconds * 1000,
    delegated: [],
  });
  for (const verdict of verdicts) {
    const entry = judged.get(verdict.lease);
    if (!verdict.release || entry === undefined) {
      kept.push(verdict.lease.cidr);
      continue;
    }
    const freed = await deps.freeDepartedBlock(entry.lease.cidr, name);
    if (!freed.release) {
      held.push({ cidr: entry.lease.cidr, why: freed.why });
      continue;
    }
    if (freed.unassignedFrom !== undefined) {
      deps.log.log('info', 'action', { action: 'unassign-prefix', cidr: entry.lease.cidr, node: name, networkInterfaceId: freed.unassignedFrom });
    }
    await recordRelease(deps.claimCensus, name, entry.lease.cidr, deps.now());
    // Conditional on the lease as read before the 404: renewed since (a re-join), it stays.
    if (await entry.set.releaseLease(entry.lease)) released.push(entry.lease.cidr);
    else renewed.push(entry.lease.cidr);
  }
  return { released, kept, renewed, held };
}
