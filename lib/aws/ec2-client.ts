/**
 * How podroute's EC2 client retries: the SDK's adaptive strategy (backoff plus a client-side rate
 * limiter that slows down when EC2 throttles), one strategy and limiter per EC2 action, because EC2
 * throttles each API action in its own token bucket (EC2 Developer Guide, "Request throttling for the
 * Amazon EC2 API": each API is evaluated individually). A worker waits for tokens inside its
 * invocation instead of failing the message back to the queue, and CreateRoute throttling does not
 * slow DescribeInstances. The local sandbox runs its clocks `timeScale` times faster, so there the
 * backoff and the limiters run `timeScale` times faster too.
 *
 * How the SDK hands us the action (@smithy/core 3.41.1, dist-cjs/submodules/retry/index.js): the
 * retry middleware (step 'finalizeRequest') calls `acquireInitialRetryToken(scope)` with
 * `scope = context["partition_id"] ?? ""`, then `refreshRetryTokenForRetry(token, info)` and
 * `recordSuccess(token)` with the token it got. Nothing else in @aws-sdk or @smithy reads or writes
 * `partition_id`, so our 'initialize' middleware sets it to the handler context's `commandName`.
 */
import { randomInt } from 'node:crypto';
import { EC2Client } from '@aws-sdk/client-ec2';
import type { EC2ClientConfig } from '@aws-sdk/client-ec2';
import { AdaptiveRetryStrategy, DefaultRateLimiter, MAXIMUM_RETRY_DELAY } from '@smithy/core/retry';
import type { AdaptiveRetryStrategyOptions } from '@smithy/core/retry';
import type { RetryErrorInfo, RetryStrategyV2, RetryToken, StandardRetryToken } from '@smithy/types';

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

/** The EC2 client podroute deploys (and the sandbox runs): one adaptive limiter per action. */
export function createEc2Client(config: EC2ClientConfig = {}, options: Ec2ClientOptions = {}): EC2Client {
  const client = new EC2Client(ec2ClientConfig(config, options));
  client.middlewareStack.add(
    (next, context) => (args) => {
      const ctx = context as { partition_id?: string; commandName?: string };
      if (ctx.partition_id === undefined && ctx.commandName) ctx.partition_id = ctx.commandName;
      return next(args);
    },
    { step: 'initialize', name: 'podrouteRetryScopeMiddleware' },
  );
  return client;
}

export function ec2ClientConfig(config: EC2ClientConfig = {}, options: Ec2ClientOptions = {}): EC2ClientConfig {
  const timeScale = options.timeScale ?? 1;
  if (!(Number.isFinite(timeScale) && timeScale >= 1)) throw new RangeError(`timeScale ${timeScale}: want a number >= 1`);
  const maxAttempts = typeof config.maxAttempts === 'number' ? config.maxAttempts : EC2_MAX_ATTEMPTS;
  const random = options.random ?? uniform;
  const { maxAttempts: _ignored, retryMode: _mode, ...rest } = config;
  const retryStrategy = new PerScopeRetryStrategy(() => adaptiveStrategy(maxAttempts, timeScale, random));
  return { ...rest, retryStrategy };
}

/** Production (timeScale 1) gets the SDK's adaptive defaults; a scaled world its scaled backoff and limiter. */
function adaptiveStrategy(maxAttempts: number, timeScale: number, random: () => number): ScopedStrategy {
  if (timeScale === 1) {
    const limiter = new DefaultRateLimiter();
    return { limiter, strategy: new AdaptiveRetryStrategy(maxAttempts, { rateLimiter: limiter }) };
  }
  const limiter = new DefaultRateLimiter({
    minFillRate: LIMITER_MIN_FILL_RATE * timeScale,
    scaleConstant: LIMITER_SCALE_CONSTANT * timeScale ** 4,
  });
  return { limiter, strategy: new AdaptiveRetryStrategy(maxAttempts, { backoff: scaledBackoff(timeScale, random), rateLimiter: limiter }) };
}

/** One scope's strategy and the limiter it was given (kept so its state can be inspected). */
export interface ScopedStrategy {
  readonly strategy: AdaptiveRetryStrategy;
  readonly limiter: DefaultRateLimiter;
}

/** What a per-scope strategy can tell a test: its scopes and whether each one's limiter is engaged. */
export interface ScopeState {
  readonly scope: string;
  readonly limiterEnabled: boolean;
}

/**
 * A RetryStrategyV2 that keeps one AdaptiveRetryStrategy per retry scope (per EC2 action, see the
 * header) and routes each token back to the strategy that issued it.
 */
export class PerScopeRetryStrategy implements RetryStrategyV2 {
  readonly mode = 'adaptive';
  private readonly strategies = new Map<string, ScopedStrategy>();
  private readonly issuers = new WeakMap<RetryToken, AdaptiveRetryStrategy>();

  constructor(private readonly create: () => ScopedStrategy) {}

  async acquireInitialRetryToken(scope: string): Promise<RetryToken> {
    let scoped = this.strategies.get(scope);
    if (!scoped) {
      scoped = this.create();
      this.strategies.set(scope, scoped);
    }
    return this.issued(scoped.strategy, await scoped.strategy.acquireInitialRetryToken(scope));
  }

  async refreshRetryTokenForRetry(token: RetryToken, errorInfo: RetryErrorInfo): Promise<RetryToken> {
    const strategy = this.issuer(token);
    return this.issued(strategy, await strategy.refreshRetryTokenForRetry(token as StandardRetryToken, errorInfo));
  }

  recordSuccess(token: RetryToken): void {
    this.issuer(token).recordSuccess(token as StandardRetryToken);
  }

  /** The SDK reads this to learn the attempts (all scopes share one count). */
  async maxAttemptsProvider(): Promise<number> {
    return this.create().strategy.maxAttemptsProvider();
  }

  scopes(): ScopeState[] {
    // `enabled` is public on DefaultRateLimiter: set once the limiter has seen a throttling error.
    return [...this.strategies].map(([scope, { limiter }]) => ({ scope, limiterEnabled: (limiter as unknown as { enabled: boolean }).enabled }));
  }

  private issued(strategy: AdaptiveRetryStrategy, token: RetryToken): RetryToken {
    this.issuers.set(token, strategy);
    return token;
  }

  private issuer(token: RetryToken): AdaptiveRetryStrategy {
    const strategy = this.issuers.get(token);
    if (!strategy) throw new Error('retry token was not issued by this strategy');
    return strategy;
  }
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

/** The per-action retry scopes of a client made by createEc2Client, and whether each limiter is engaged. */
export async function ec2RetryScopes(client: EC2Client): Promise<ScopeState[]> {
  const strategy = await client.config.retryStrategy();
  if (!(strategy instanceof PerScopeRetryStrategy)) throw new TypeError('not a client made by createEc2Client');
  return strategy.scopes();
}
