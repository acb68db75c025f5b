/**
 * What backs a planned route deletion: a listing that lacks a node is a claim, not proof, so a
 * `no-owner` route inside a lease of an unlisted owner goes only when a keyed read of that owner
 * answered 404 past the lease's grace period. Pure: the keyed reads come in as `presence`.
 */
import { overlaps, tryParseCidr } from '../cidr/cidr.ts';
import type { Lease } from '../ipam/index.ts';
import type { Node } from '../nodes/node.ts';
import type { DeleteOp } from './route-plan.ts';

/** What a keyed read of a node said: `absent` = 404. */
export type Presence = 'absent' | 'present' | 'unreadable';

/**
 * Whether a 404 of its owner may free this lease: it is older than the grace period. A younger one
 * may belong to a node admitted and not stored yet (a brand-new joiner, or a same-name re-join whose
 * CREATE admission renewed it), which reads 404 too; it is left for a later run. A lease of unknown
 * age (a store that stamps none) never is. The rule of the lease decider (lib/usecases/lease-release.ts,
 * for reconcile's reclaim and the node-left check) and of the keyed reads that back route deletions.
 */
export function pastGrace(lease: Pick<Lease, 'since'>, now: number, graceMs: number): boolean {
  return lease.since !== undefined && now - lease.since > graceMs;
}

/** A lease whose owner no listed node is, older than the grace period: its owner must be read by key. */
export function isSuspect(lease: Lease, listed: ReadonlySet<string>, now: number, graceMs: number): lease is Lease & { owner: string } {
  return lease.owner !== null && !listed.has(lease.owner) && pastGrace(lease, now, graceMs);
}

/** Why a planned deletion waits: its lease is young (the node may be coming), its node exists, or could not be read. */
export type HeldReason = 'lease-young' | 'node-exists' | 'node-unreadable';

export interface SortedDeletes {
  /** Blackholes, and `no-owner` routes whose every lease owner read 404 past the grace period. */
  confirmed: DeleteOp[];
  /** `no-owner` routes that no lease names (or that a listed node's lease names): the guard judges them. */
  unconfirmed: DeleteOp[];
  held: Array<{ op: DeleteOp; why: HeldReason }>;
}

/** The facts deletions are sorted on: the listing, the leases, the keyed reads, the clock and the grace period. */
export interface DeleteBacking {
  readonly nodes: readonly Node[];
  readonly leases: readonly Lease[];
  readonly presence: ReadonlyMap<string, Presence>;
  readonly now: number;
  readonly graceMs: number;
}

/**
 * Sorts the planned deletions by what backs them. A `no-owner` route inside leases of owners that
 * are not listed goes only when every such owner read 404 and its lease is past the grace period;
 * a blackhole goes as planned (its target is gone whoever owns the CIDR).
 */
export function sortRouteDeletes(deletes: readonly DeleteOp[], backing: DeleteBacking): SortedDeletes {
  const sorted: SortedDeletes = { confirmed: [], unconfirmed: [], held: [] };
  if (deletes.length === 0) return sorted;
  const listed = new Set(backing.nodes.map((node) => node.metadata.name));
  const owned = backing.leases.flatMap((lease) => {
    const cidr = tryParseCidr(lease.cidr);
    return cidr === null || lease.owner === null ? [] : [{ lease, cidr }];
  });
  for (const op of deletes) {
    const destination = tryParseCidr(op.destinationCidr);
    if (op.reason === 'blackhole' || destination === null) {
      (op.reason === 'blackhole' ? sorted.confirmed : sorted.unconfirmed).push(op);
      continue;
    }
    const naming = owned.filter(({ cidr }) => overlaps(cidr, destination)).map(({ lease }) => lease);
    const unlisted = naming.filter((lease) => lease.owner !== null && !listed.has(lease.owner));
    if (unlisted.length === 0) {
      sorted.unconfirmed.push(op);
      continue;
    }
    const why = heldReason(unlisted, listed, backing);
    if (why === null) sorted.confirmed.push(op);
    else sorted.held.push({ op, why });
  }
  return sorted;
}

function heldReason(unlisted: readonly Lease[], listed: ReadonlySet<string>, { presence, now, graceMs }: DeleteBacking): HeldReason | null {
  if (unlisted.some((lease) => !isSuspect(lease, listed, now, graceMs))) return 'lease-young';
  const answers = unlisted.map((lease) => presence.get(lease.owner ?? '') ?? 'unreadable');
  if (answers.includes('present')) return 'node-exists';
  if (answers.includes('unreadable')) return 'node-unreadable';
  return null;
}
