/**
 * Which leases may be freed, and why the others stay: the one decider for reconcile's reclaim
 * (./lease-upkeep.ts `reclaimOrphans`) and the node-left check (./node-left.ts), over values. A lease
 * goes only when its owner is unlisted, past the grace (./absence.ts `pastGrace`), read 404 by key,
 * not delegated to an interface the run read while a listed node carries it, and holds no listed node's smaller pod CIDR
 * (./pod-cidr-mask.ts `blockInUse`); docs/decisions/0003-leases.md.
 */
import { overlapsText } from '../cidr/cidr.ts';
import type { Lease } from '../ipam/index.ts';
import { podCidrsOf, type Node } from '../nodes/node.ts';
import { pastGrace } from './absence.ts';
import type { Presence } from './absence.ts';
import { blockInUse } from './pod-cidr-mask.ts';

/** Why a lease of an unlisted owner stays. */
export type KeepReason = 'young' | 'node-exists' | 'node-unreadable' | 'still-delegated' | 'block-in-use';

export interface LeaseReleaseInput {
  /** The leases to judge, in the order the verdicts come back. */
  leases: readonly Lease[];
  /** The nodes a listing returned (none for the node-left check, which lists nothing). */
  listed: readonly Node[];
  /** The names of `listed`, when the caller judges several lease lists against one listing. */
  listedNames?: ReadonlySet<string>;
  /** Keyed reads of owners; an owner without an answer counts as unreadable. */
  presence: ReadonlyMap<string, Presence>;
  now: number;
  graceMs: number;
  /** Prefixes delegated to interfaces the run read (prefixes mode; empty otherwise). */
  delegated: readonly string[];
}

/** One verdict per lease of an owner that is not listed; leases of listed or no owners get none. */
export type LeaseVerdict =
  | { lease: Lease & { owner: string }; release: true }
  | { lease: Lease & { owner: string }; release: false; why: KeepReason };

export function decideLeaseReleases(input: LeaseReleaseInput): LeaseVerdict[] {
  const listed = input.listedNames ?? new Set(input.listed.map((node) => node.metadata.name));
  const verdicts: LeaseVerdict[] = [];
  for (const lease of input.leases) {
    if (!hasOwner(lease) || listed.has(lease.owner)) continue;
    const why = keepReason(lease, input);
    verdicts.push(why === null ? { lease, release: true } : { lease, release: false, why });
  }
  return verdicts;
}

/** Whether a listed node's pod CIDR overlaps the block (its own copy of it included). */
function carried(cidr: string, nodes: readonly Node[]): boolean {
  return nodes.some((node) => podCidrsOf(node).some((text) => overlapsText(text, cidr)));
}

function hasOwner(lease: Lease): lease is Lease & { owner: string } {
  return lease.owner !== null;
}

function keepReason(lease: Lease & { owner: string }, input: LeaseReleaseInput): KeepReason | null {
  if (!pastGrace(lease, input.now, input.graceMs)) return 'young';
  const presence = input.presence.get(lease.owner) ?? 'unreadable';
  if (presence === 'present') return 'node-exists';
  if (presence === 'unreadable') return 'node-unreadable';
  // On a listed node's interface and carried by a listed node: a lease table that disagrees with
  // the cluster (a restore), never taken off. On an interface alone, the data plane takes it off.
  if (input.delegated.some((prefix) => overlapsText(prefix, lease.cidr)) && carried(lease.cidr, input.listed)) return 'still-delegated';
  if (blockInUse(lease.cidr, input.listed)) return 'block-in-use';
  return null;
}
