/**
 * EC2's request-rate throttling: one token bucket per API action, sized by the action's category
 * (mutating or not). Tokens are counted in thousandths so refills over an injected clock are exact.
 */

import { ACTION_BUCKETS, DEFAULT_MUTATING, DEFAULT_NON_MUTATING, isMutating } from './buckets.ts';
import type { BucketSpec } from './buckets.ts';

export type { BucketSpec } from './buckets.ts';
export { DEFAULT_MUTATING, DEFAULT_NON_MUTATING, isMutating } from './buckets.ts';

export interface ThrottleOptions {
  mutating?: BucketSpec;
  nonMutating?: BucketSpec;
  /**
   * Per-action buckets, e.g. `{ CreateRoute: { capacity: 3, refillPerSecond: 1 } }`. Without one, an
   * action in `ACTION_BUCKETS` (buckets.ts) uses that spec, scaled like its category when `mutating`
   * is given; any other action uses its category.
   */
  actions?: Record<string, BucketSpec>;
}


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

  /** The action's own bucket (ACTION_BUCKETS) or its category's, each as the options scale them. */
  private defaultSpec(action: string): BucketSpec {
    const category = isMutating(action) ? DEFAULT_MUTATING : DEFAULT_NON_MUTATING;
    const given = isMutating(action) ? this.options.mutating : this.options.nonMutating;
    const own = ACTION_BUCKETS[action];
    if (!own) return given ?? category;
    if (!given) return own;
    // The category was rescaled (the sandbox speeds time up): scale the action's own bucket alike.
    return { capacity: own.capacity * (given.capacity / category.capacity), refillPerSecond: own.refillPerSecond * (given.refillPerSecond / category.refillPerSecond) };
  }

  private bucket(action: string): Bucket {
    let bucket = this.buckets.get(action);
    if (!bucket) {
      const spec = this.options.actions?.[action] ?? this.defaultSpec(action);
      bucket = { spec, milliTokens: spec.capacity * 1000, at: this.now() };
      this.buckets.set(action, bucket);
    }
    return bucket;
  }
}
