/**
 * The storage port under a CIDR set: where block allocations live (memory, DynamoDB, …).
 *
 * A set of `total` blocks is addressed by block index 0..total-1 (a number: IPv6 sets hold at most
 * 2^16 blocks, IPv4 sets at most 2^32). Every store is the claim protocol (claim-protocol.ts) over
 * some conditional-write store (memory, DynamoDB). What every store must guarantee, with many
 * writers at once and without a process-wide lock:
 *
 * - `allocate` never hands one block to two callers, and when the owner already holds a block of
 *   this set it takes nothing and answers that block, so a retried or concurrent allocation for one
 *   owner yields one block. A single allocator walks blocks in upstream's round-robin order.
 * - `findOwned` reads its own writes (strong consistency), so an owner's block is found by the next
 *   call anywhere.
 * - `occupy` and `release` are idempotent over an inclusive index range. `occupy` keeps the owner of
 *   a block already held and gives an ownerless block to `owner`; `release` with an owner frees only
 *   blocks held by that owner or by nobody.
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

export interface CidrStore {
  /** Lowest block index held by `owner`, or null. */
  findOwned(owner: string): Promise<number | null>;
  /**
   * The block `owner` holds, read by key through its owner record (no listing), with the block's
   * version where the store keeps one; null when the owner holds none there.
   */
  ownedLease(owner: string): Promise<BlockLease | null>;
  /**
   * The next block in round-robin order for `owner` (null: no owner), or the owner's block when it
   * holds one; null when every block is used.
   */
  allocate(owner: string | null, total: number): Promise<number | null>;
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
  /** Number of used blocks. */
  usedCount(): Promise<number>;
  /** Every used block with its owner, ordered by index. */
  leases(): Promise<BlockLease[]>;
}
