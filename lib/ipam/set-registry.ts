/**
 * The registry of CIDR sets: which ranges have a set, so a reader that did not create them (the
 * worker's `node-left` check in prefixes mode) finds them with one keyed read. A range is added
 * before its set's first write, so every set that can hold a lease is listed; adding is a set union
 * (no condition needed) and a range is never removed.
 */
export interface SetRegistry {
  /** Adds these ranges (idempotent). */
  add(ranges: readonly string[]): Promise<void>;
  /** Every range added so far, sorted. */
  list(): Promise<string[]>;
}
