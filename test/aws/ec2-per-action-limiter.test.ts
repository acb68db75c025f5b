/**
 * One adaptive limiter per EC2 action: against the EC2 emulator over real HTTP, throttling one
 * action engages only that action's limiter; and tokens go back to the strategy that issued them.
 */
import { DescribeInstancesCommand, DescribeRouteTablesCommand } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveRetryStrategy, DefaultRateLimiter } from '@smithy/core/retry';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { createEc2Client, ec2RetryScopes, PerScopeRetryStrategy } from '../../lib/aws/ec2-client.ts';

let ec2: Ec2Emulator;
beforeAll(async () => {
  ec2 = await startEc2Emulator({ throttle: { actions: { DescribeRouteTables: { capacity: 1, refillPerSecond: 2 } } } });
});
afterAll(async () => {
  await ec2.close();
});

describe('createEc2Client', () => {
  it('engages the limiter of the throttled action only', async () => {
    const client = createEc2Client({ endpoint: ec2.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }, { timeScale: 30 });
    // Three at once against a bucket of one: at least one is throttled. Whether its retries then get
    // a token depends on the machine's pace, so a request may still end throttled; the contract is
    // which limiter engages, not that every request succeeds.
    const settled = await Promise.allSettled([1, 2, 3].map(() => client.send(new DescribeRouteTablesCommand({}))));
    for (const outcome of settled) if (outcome.status === 'rejected') expect((outcome.reason as Error).name).toBe('RequestLimitExceeded');
    await client.send(new DescribeInstancesCommand({}));
    expect(ec2.stats.throttled).toBeGreaterThanOrEqual(1);
    const scopes = await ec2RetryScopes(client);
    expect(scopes.sort((a, b) => a.scope.localeCompare(b.scope))).toEqual([
      { scope: 'DescribeInstancesCommand', limiterEnabled: false },
      { scope: 'DescribeRouteTablesCommand', limiterEnabled: true },
    ]);
    client.destroy();
  });
});

describe('PerScopeRetryStrategy', () => {
  it('routes each token to the strategy that issued it', async () => {
    const made: { strategy: AdaptiveRetryStrategy; limiter: DefaultRateLimiter; successes: number }[] = [];
    const perScope = new PerScopeRetryStrategy(() => {
      const limiter = new DefaultRateLimiter();
      const entry = { strategy: new AdaptiveRetryStrategy(3, { rateLimiter: limiter }), limiter, successes: 0 };
      const record = entry.strategy.recordSuccess.bind(entry.strategy);
      entry.strategy.recordSuccess = (token) => {
        entry.successes += 1;
        record(token);
      };
      made.push(entry);
      return entry;
    });
    const a = await perScope.acquireInitialRetryToken('A');
    const b = await perScope.acquireInitialRetryToken('B');
    const a2 = await perScope.acquireInitialRetryToken('A');
    const retried = await perScope.refreshRetryTokenForRetry(b, { errorType: 'THROTTLING' });
    for (const token of [a, a2, retried]) perScope.recordSuccess(token);
    expect(made.map((entry) => entry.successes)).toEqual([2, 1]);
    expect(perScope.scopes()).toEqual([
      { scope: 'A', limiterEnabled: false },
      { scope: 'B', limiterEnabled: true },
    ]);
    expect(() => perScope.recordSuccess({ getRetryCount: () => 0, getRetryDelay: () => 0 })).toThrow(/not issued/);
  });
});
