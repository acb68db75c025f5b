/**
 * The storage port under a CIDR set: blocks 0..total-1 of one set, each store the claim protocol
 * (claim-protocol.ts) over a conditional-write store, safe with many writers and no lock. It promises:
 * `allocate` never gives one block to two callers and answers an owner's block if it holds one;
 * `findOwned` reads its own writes; `occupy` and `release` are idempotent over an inclusive range.
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
