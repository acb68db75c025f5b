/**
 * How podroute's EC2 client retries. EC2 throttles each API with its own token bucket (CreateRoute:
 * 50 tokens, 5 a second); many workers at once empty it in a moment. The SDK's adaptive retry mode
 * adds a client-side rate limiter that backs off when EC2 throttles and ramps up again after, so a
 * worker waits for tokens inside its invocation instead of failing the message back to the queue
 * (where it would wait out the visibility timeout).
 *
 * Production keeps the SDK's own backoff and rate limiter. The local sandbox runs every clock
 * `timeScale` times faster than production (its schedule, visibility timeout, function timeout and
 * EC2 refill rates), so it passes the same scale here and the client waits `timeScale` times less:
 * - backoff: the SDK's documented full-jitter exponential backoff, `random * min(base * 2^i,
 *   MAXIMUM_RETRY_DELAY)` with the base the SDK chooses per error type (AWS SDKs and Tools
 *   reference guide, "Retry behavior"), divided by `timeScale`;
 * - the adaptive rate limiter (the SDK's DefaultRateLimiter): its rates are measured per real
 *   second, so in a world `timeScale` times faster they are `timeScale` times higher; its floor
 *   (`minFillRate`) is raised alike and its cubic recovery `C * (t - W)^3` runs on a clock
 *   `timeScale` times faster when `C` is multiplied by `timeScale^4` (then `W` shrinks by `timeScale`).
 * Not scaled: the limiter's half-second rate-measurement buckets, and the retry quota (a count).
 */
import { randomInt } from 'node:crypto';
import type { EC2ClientConfig } from '@aws-sdk/client-ec2';
import { AdaptiveRetryStrategy, DefaultRateLimiter, MAXIMUM_RETRY_DELAY } from '@smithy/core/retry';
import type { AdaptiveRetryStrategyOptions } from '@smithy/core/retry';

const uniform = (): number => randomInt(0, 2 ** 47) / 2 ** 47;

type BackoffStrategy = NonNullable<AdaptiveRetryStrategyOptions['backoff']>;

const EC2_MAX_ATTEMPTS = 8;

/** The SDK DefaultRateLimiter's defaults that carry a unit of time. */
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
 * The SDK's full-jitter exponential backoff, `timeScale` times shorter.
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
