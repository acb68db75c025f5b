/**
 * The storage port under a CIDR set: where block allocations live (memory, DynamoDB, …).
 *
 * A set of `total` blocks is addressed by block index 0..total-1 (a number: IPv6 sets hold at most
 * 2^16 blocks, IPv4 sets at most 2^32). The CIDR set decides *which* block to take; the store only
 * has to offer these atomic steps. What every store must guarantee, with many writers at once and
 * without a process-wide lock:
 *
 * - `claim` is the single arbiter of allocation: it takes a free block atomically (a conditional
 *   write) and never hands one block to two callers. When the owner already holds a block of this
 *   set it takes nothing and answers `owner-has` with that block, so a retried or concurrent
 *   allocation for one owner yields one block.
 * - `findOwned` and `claim` read their own writes (strong consistency), so an owner's block is found
 *   by the next call anywhere.
 * - `nextFree` may be stale under concurrency (a block it names may be gone by the time it is
 *   claimed); the set then asks again from the next index. It must not skip free blocks for a
 *   single writer, which keeps upstream's round-robin order.
 * - `occupy` and `release` are idempotent over an inclusive index range. `occupy` keeps the owner of
 *   a block already held and gives an ownerless block to `owner`; `release` with an owner frees only
 *   blocks held by that owner or by nobody.
 * - The cursor is a hint for where the next search starts; a lost or reordered cursor write costs
 *   order, never correctness.
 */
export interface BlockLease {
  readonly index: number;
  readonly owner: string | null;
  /** When the block was taken (epoch ms), where the store records it. */
  readonly since?: number;
  /** The block's version, where the store keeps one: a release can be made conditional on it. */
  readonly version?: number;
}

/** What `repair` found and fixed. */
export interface RepairReport {
  /** Owners whose blocks had no owner record naming one of them: the record now names one. */
  readonly records: string[];
}

export type ClaimResult =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'taken' }
  | { readonly kind: 'owner-has'; readonly index: number };

/**
 * A store either offers `allocate` (the claim protocol: a whole allocation, see claim-protocol.ts)
 * or the steps `nextFree` / `claim` / `readCursor` / `writeCursor` that the set runs itself.
 */
export interface CidrStore {
  /** Lowest block index held by `owner`, or null. */
  findOwned(owner: string): Promise<number | null>;
  /**
   * The block `owner` holds, read by key through its owner record (no listing), with the block's
   * version where the store keeps one; null when the owner holds none there. Optional: a set
   * without it falls back to `findOwned`.
   */
  ownedLease?(owner: string): Promise<BlockLease | null>;
  /**
   * The next block in round-robin order for `owner` (null: no owner), or the owner's block when it
   * holds one; null when every block is used.
   */
  allocate?(owner: string | null, total: number): Promise<number | null>;
  /** First free block at or after `from`, wrapping past `total - 1` to 0; null when all are used. */
  nextFree?(from: number, total: number): Promise<number | null>;
  /** Takes block `index` for `owner` (null: no owner) if it is free. */
  claim?(index: number, owner: string | null): Promise<ClaimResult>;
  /** Marks blocks `first..last` used. */
  occupy(first: number, last: number, owner: string | null): Promise<void>;
  /** Frees blocks `first..last`; with an owner, blocks of other owners stay. */
  release(first: number, last: number, owner?: string): Promise<void>;
  /**
   * Frees exactly this lease: only while the block is still at the version (and owner) it was
   * listed with. False when it changed meanwhile (released, or renewed by its owner).
   */
  releaseLease?(lease: BlockLease): Promise<boolean>;
  /**
   * Gives every owner that holds blocks an owner record naming one of them (crash leftovers).
   * `listed`: the blocks as just listed by `leases`, so that they need not be listed again.
   */
  repair?(listed?: readonly BlockLease[]): Promise<RepairReport>;
  /** Where the next round-robin search starts. */
  readCursor?(): Promise<number>;
  writeCursor?(next: number): Promise<void>;
  /** Number of used blocks. */
  usedCount(): Promise<number>;
  /** Every used block with its owner, ordered by index. */
  leases(): Promise<BlockLease[]>;
}
