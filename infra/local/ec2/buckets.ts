/**
 * EC2's request-rate token buckets, as data: the categories of the EC2 Developer Guide, "Request
 * throttling for the Amazon EC2 API" (section "Request token bucket sizes and refill rates"), and the
 * per-action buckets the emulator gives the calls podroute's prefixes mode makes per node. Exported so
 * a benchmark can compute a lower bound (`minimumSeconds`) from the same numbers the emulator enforces.
 *
 * Each action has its own bucket per account and Region (same page, "Request rate limiting": "each API
 * is evaluated individually"). Other tools in the account (the VPC CNI assigns prefixes and addresses
 * with these very actions) draw from the same buckets.
 */

export interface BucketSpec {
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

/** "Non-mutating actions" (Describe*, List*, Search*, Get*): 100 tokens, 20 a second. */
export const DEFAULT_NON_MUTATING: BucketSpec = { capacity: 100, refillPerSecond: 20 };
/** "Mutating actions" (every action of no other category): 50 tokens, 5 a second. */
export const DEFAULT_MUTATING: BucketSpec = { capacity: 50, refillPerSecond: 5 };

/**
 * The two calls that delegate prefixes to an interface. They are not Describe/Get/List calls, so they
 * are throttled as mutating calls, each in a bucket of its own (not shared with each other, nor with
 * CreateRoute). The page's category tables name a few mutating actions as "resource-intensive" or
 * "uncategorized"; as far as this repository could check, both of those rows also hold 50 tokens
 * refilled at 5 a second, so the numbers below do not depend on which row the two actions sit in.
 * A benchmark that needs the bound for prefixes mode reads it from here.
 */
export const ASSIGN_PREFIX_BUCKETS = {
  AssignPrivateIpAddresses: { ...DEFAULT_MUTATING },
  AssignIpv6Addresses: { ...DEFAULT_MUTATING },
} as const satisfies Record<string, BucketSpec>;

export type AssignPrefixAction = keyof typeof ASSIGN_PREFIX_BUCKETS;

/** Per-action buckets the emulator applies before falling back to the category of the action. */
export const ACTION_BUCKETS: Readonly<Record<string, BucketSpec>> = { ...ASSIGN_PREFIX_BUCKETS };

/** Describe*, List*, Search* and Get* calls are non-mutating in EC2's throttling categories; the rest mutate. */
export const isMutating = (action: string): boolean => !/^(Describe|Get|List|Search)/.test(action);

/** The bucket an action draws from when nothing overrides it. */
export function bucketFor(action: string): BucketSpec {
  return ACTION_BUCKETS[action] ?? (isMutating(action) ? DEFAULT_MUTATING : DEFAULT_NON_MUTATING);
}

/**
 * The least time, in seconds, `calls` calls of one action can take starting from a full bucket: the
 * burst goes at once, the rest at the refill rate. A lower bound for any client, however it retries.
 */
export function minimumSeconds(spec: BucketSpec, calls: number): number {
  if (!Number.isInteger(calls) || calls < 0) throw new RangeError(`calls ${calls}: want a whole number >= 0`);
  const afterBurst = Math.max(0, calls - spec.capacity);
  if (afterBurst === 0) return 0;
  if (!(spec.refillPerSecond > 0)) return Number.POSITIVE_INFINITY;
  return afterBurst / spec.refillPerSecond;
}
