/**
 * EC2's request-rate throttling: one token bucket per API action, sized by the action's category
 * (mutating or not). Tokens are counted in thousandths so refills over an injected clock are exact.
 */

export interface BucketSpec {
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

export interface ThrottleOptions {
  mutating?: BucketSpec;
  nonMutating?: BucketSpec;
  /** Per-action overrides, e.g. `{ CreateRoute: { capacity: 3, refillPerSecond: 1 } }`. */
  actions?: Record<string, BucketSpec>;
}

export const DEFAULT_MUTATING: BucketSpec = { capacity: 50, refillPerSecond: 5 };
export const DEFAULT_NON_MUTATING: BucketSpec = { capacity: 100, refillPerSecond: 20 };

/** Describe* and Get* calls are non-mutating in EC2's throttling categories; the rest mutate. */
export const isMutating = (action: string): boolean => !/^(Describe|Get|List)/.test(action);

interface Bucket {
  spec: BucketSpec;
  milliTokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly options: ThrottleOptions,
    private readonly now: () => number,
  ) {
    for (const spec of [options.mutating, options.nonMutating, ...Object.values(options.actions ?? {})]) {
      if (spec && (!(spec.capacity >= 1) || !(spec.refillPerSecond >= 0))) {
        throw new RangeError(`bad token bucket ${JSON.stringify(spec)}: capacity >= 1 and refillPerSecond >= 0`);
      }
    }
  }

  /** Takes one token for the action; false when its bucket is empty (the call is throttled). */
  take(action: string): boolean {
    const bucket = this.bucket(action);
    const now = this.now();
    const elapsed = Math.max(0, now - bucket.at);
    // refillPerSecond tokens per 1000 ms = refillPerSecond thousandths per ms.
    bucket.milliTokens = Math.min(bucket.spec.capacity * 1000, bucket.milliTokens + Math.floor(elapsed * bucket.spec.refillPerSecond));
    bucket.at = now;
    if (bucket.milliTokens < 1000) return false;
    bucket.milliTokens -= 1000;
    return true;
  }

  private bucket(action: string): Bucket {
    let bucket = this.buckets.get(action);
    if (!bucket) {
      const spec =
        this.options.actions?.[action] ??
        (isMutating(action) ? (this.options.mutating ?? DEFAULT_MUTATING) : (this.options.nonMutating ?? DEFAULT_NON_MUTATING));
      bucket = { spec, milliTokens: spec.capacity * 1000, at: this.now() };
      this.buckets.set(action, bucket);
    }
    return bucket;
  }
}
