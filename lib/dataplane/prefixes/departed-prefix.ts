/**
 * A departed node's block in prefixes mode: what happens to the prefix on the cloud side before its
 * lease is released, decided from a fresh read of who holds the prefix (./free-departed-prefix.ts
 * reads and applies). Why: docs/decisions/0031-departed-prefix.md.
 */

/** Who holds the prefix now, as one fresh read answered. */
export type PrefixHolding =
  /** No interface holds it (the interface is gone, or the prefix is no longer on it). */
  | { kind: 'none' }
  /** This interface holds it. */
  | { kind: 'held'; networkInterfaceId: string }
  /** The read failed: who holds it is not known. */
  | { kind: 'unread'; error: string };

/** What to do with the departed node's block. */
export type DepartedPrefixStep =
  /** Nothing holds the prefix: the lease may go. */
  | { kind: 'release' }
  /** Take the prefix off this interface first; the lease goes once EC2 accepted that. */
  | { kind: 'unassign'; networkInterfaceId: string }
  /** Leave the lease as it is and ask again later. */
  | { kind: 'keep'; why: 'holder-unread'; error: string }
  /** A hold's prefix is on an interface podroute never delegated it to: not podroute's to take off. */
  | { kind: 'keep'; why: 'held-elsewhere'; networkInterfaceId: string };

/** Whose lease it is: a node's (read 404), or a hold on a block EC2 refused (no node ever had it). */
export type DepartedOwner = 'node' | 'cloud-hold';

/**
 * The one decider for a departed node's prefix. It is asked only for a lease the lease decider
 * (lib/usecases/lease-release.ts) lets go: the owner read 404 by key, past the grace, unchanged.
 * A prefix still delegated is taken off its interface before the block is free again, since EC2
 * refuses a prefix delegated elsewhere to the next node that gets the block; podroute takes off
 * only what it delegated (a node's lease), so a hold stays while anything holds its prefix. A
 * holder not known keeps the lease (a leak for now, never a block handed out twice).
 */
export function decideDepartedPrefix(holding: PrefixHolding, owner: DepartedOwner): DepartedPrefixStep {
  switch (holding.kind) {
    case 'none':
      return { kind: 'release' };
    case 'held':
      return owner === 'node'
        ? { kind: 'unassign', networkInterfaceId: holding.networkInterfaceId }
        : { kind: 'keep', why: 'held-elsewhere', networkInterfaceId: holding.networkInterfaceId };
    case 'unread':
      return { kind: 'keep', why: 'holder-unread', error: holding.error };
  }
}
