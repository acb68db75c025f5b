/**
 * How podroute's EC2 client retries: the SDK's adaptive mode, whose client-side rate limiter backs
 * off when EC2 throttles (each API has its own token bucket), so a worker waits for tokens inside
 * its invocation instead of failing the message back to the queue. The local sandbox runs its clocks
 * `timeScale` times faster, so there the backoff and the limiter run `timeScale` times faster too.
 */
import { randomInt } from 'node:crypto';
import type { EC2ClientConfig } from '@aws-sdk/client-ec2';
import { AdaptiveRetryStrategy, DefaultRateLimiter, MAXIMUM_RETRY_DELAY } from '@smithy/core/retry';
import type { AdaptiveRetryStrategyOptions } from '@smithy/core/retry';

const uniform = (): number => randomInt(0, 2 ** 47) / 2 ** 47;

type BackoffStrategy = NonNullable<AdaptiveRetryStrategyOptions['backoff']>;

const EC2_MAX_ATTEMPTS = 8;

/**
 * The SDK DefaultRateLimiter's defaults that carry a unit of time. Its rates are per real second, so
 * `timeScale` times higher; its cubic recovery `C * (t - W)^3` runs `timeScale` times faster when `C`
 * is multiplied by `timeScale^4`. Its half-second measuring buckets and the retry quota are not scaled.
 */
const LIMITER_MIN_FILL_RATE = 0.5;
const LIMITER_SCALE_CONSTANT = 0.4;

interface Ec2ClientOptions {
  /** How much faster than production this client's world runs (1 = production: SDK defaults). */
  readonly timeScale?: number;
  /** Source of randomness in [0, 1) for the scaled backoff's jitter (default: node:crypto). */
  readonly random?: () => number;
}

export function ec2ClientConfig(config: EC2ClientConfig = {}, options: Ec2ClientOptions = {}): EC2ClientConfig {
  const timeScale = options.timeScale ?? 1;
  if (!(Number.isFinite(timeScale) && timeScale >= 1)) throw new RangeError(`timeScale ${timeScale}: want a number >= 1`);
  if (timeScale === 1) return { retryMode: 'adaptive', maxAttempts: EC2_MAX_ATTEMPTS, ...config };
  const maxAttempts = typeof config.maxAttempts === 'number' ? config.maxAttempts : EC2_MAX_ATTEMPTS;
  const retryStrategy = new AdaptiveRetryStrategy(maxAttempts, {
    backoff: scaledBackoff(timeScale, options.random ?? uniform),
    rateLimiter: new DefaultRateLimiter({
      minFillRate: LIMITER_MIN_FILL_RATE * timeScale,
      scaleConstant: LIMITER_SCALE_CONSTANT * timeScale ** 4,
    }),
  });
  const { maxAttempts: _ignored, retryMode: _mode, ...rest } = config;
  return { ...rest, retryStrategy };
}

/**
 * The SDK's full-jitter exponential backoff, `random * min(base * 2^i, MAXIMUM_RETRY_DELAY)` with
 * the base it picks per error type (AWS SDKs and Tools reference guide, "Retry behavior"), `timeScale` times shorter.
 * Exported for its table-driven test (test/aws/ec2-client.test.ts).
 */
export function scaledBackoff(timeScale: number, random: () => number = uniform): BackoffStrategy {
  // The SDK sets the base before each computation (its throttling or transient base); 100 ms until then.
  let base = 100;
  return {
    setDelayBase(delayBase: number) {
      base = delayBase;
    },
    computeNextBackoffDelay(retries: number) {
      return Math.floor((random() * Math.min(base * 2 ** retries, MAXIMUM_RETRY_DELAY)) / timeScale);
    },
  };
}
