/**
 * The EC2 client's retry settings: production keeps the SDK's own (adaptive mode, its backoff and
 * rate limiter); a scaled world (the sandbox) gets the same full-jitter backoff, `timeScale` times shorter.
 */
import { describe, expect, it } from 'vitest';
import { MAXIMUM_RETRY_DELAY } from '@smithy/core/retry';
import { ec2ClientConfig, scaledBackoff } from '../../lib/aws/ec2-client.ts';

describe('ec2ClientConfig', () => {
  it('keeps the SDK adaptive defaults in production, one strategy per action, 8 attempts', async () => {
    const config = ec2ClientConfig({ region: 'us-east-1' });
    expect(config.region).toBe('us-east-1');
    expect(config).not.toHaveProperty('retryMode');
    const strategy = config.retryStrategy as { mode?: string; maxAttemptsProvider?: () => Promise<number> } | undefined;
    expect(strategy?.mode).toBe('adaptive');
    expect(await strategy?.maxAttemptsProvider?.()).toBe(8);
  });

  it('gives a scaled world an adaptive strategy of its own, with the attempts asked for', async () => {
    const config = ec2ClientConfig({ region: 'us-east-1', maxAttempts: 3 }, { timeScale: 30 });
    expect(config).not.toHaveProperty('retryMode');
    expect(config).not.toHaveProperty('maxAttempts');
    const strategy = config.retryStrategy as { mode?: string; maxAttemptsProvider?: () => Promise<number> } | undefined;
    expect(strategy?.mode).toBe('adaptive');
    expect(await strategy?.maxAttemptsProvider?.()).toBe(3);
  });

  it.each([0.5, 0, Number.NaN])('refuses timeScale %s', (timeScale) => {
    expect(() => ec2ClientConfig({}, { timeScale })).toThrow(RangeError);
  });
});

describe('scaledBackoff', () => {
  it.each([
    // [scale, base the SDK sets, retries so far, jitter, delay]
    [1, 1000, 0, 0.5, 500],
    [1, 1000, 3, 0.5, 4000],
    [30, 1000, 3, 0.5, 133],
    [30, 50, 2, 0.99, 6],
    [30, 1000, 10, 0.999, Math.floor((0.999 * MAXIMUM_RETRY_DELAY) / 30)],
  ])('scale %i, base %i ms, retry %i, jitter %f: %i ms', (scale, base, retries, jitter, delay) => {
    const backoff = scaledBackoff(scale, () => jitter);
    backoff.setDelayBase(base);
    expect(backoff.computeNextBackoffDelay(retries)).toBe(delay);
  });
});
