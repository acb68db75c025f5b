/**
 * The registry of CIDR sets: which ranges have a set (one partition of the CIDR table each), so a
 * reader that did not create them (the worker's `node-left` check in prefixes mode, whose sets are
 * per subnet reservation and otherwise found only through EC2) can find them by one keyed read.
 *
 * Protocol: a range is added before its set's first write (`ReservationSets` registers, then
 * answers the set), so every set that can hold a lease is listed. Adding is idempotent (a set
 * union), so concurrent writers need no condition; a range is never removed (a set with no lease
 * costs a reader one keyed read of an owner record).
 */
export interface SetRegistry {
  /** Adds these ranges (idempotent). */
  add(ranges: readonly string[]): Promise<void>;
  /** Every range added so far, sorted. */
  list(): Promise<string[]>;
}
