/**
 * functions/tracing.ts: where the tracer is loaded (Powertools' own rule), and that a traced
 * handler answers with no X-Ray daemon and no segment (outside Lambda) and captures its SDK clients.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { telemetryFromEnv } from '../../functions/telemetry.ts';
import { tracesIn, tracingFromEnv } from '../../functions/tracing.ts';
import { lambdaContext } from '../support/world.ts';

const LAMBDA = 'AWS_Lambda_nodejs22.x';

describe('tracesIn', () => {
  it.each<[string, Record<string, string | undefined>, boolean]>([
    ['a local run (no AWS_EXECUTION_ENV)', {}, false],
    ['Lambda', { AWS_EXECUTION_ENV: LAMBDA }, true],
    ['Lambda, POWERTOOLS_TRACE_ENABLED=false', { AWS_EXECUTION_ENV: LAMBDA, POWERTOOLS_TRACE_ENABLED: 'false' }, false],
    ['Lambda, POWERTOOLS_TRACE_ENABLED=FALSE', { AWS_EXECUTION_ENV: LAMBDA, POWERTOOLS_TRACE_ENABLED: 'FALSE' }, false],
    ['Lambda, POWERTOOLS_TRACE_ENABLED=true', { AWS_EXECUTION_ENV: LAMBDA, POWERTOOLS_TRACE_ENABLED: 'true' }, true],
    ['SAM local', { AWS_EXECUTION_ENV: LAMBDA, AWS_SAM_LOCAL: 'true' }, false],
    ['Amplify mock', { AWS_EXECUTION_ENV: 'AWS_Lambda_amplify-mock' }, false],
  ])('%s: %s', (_what, env, traces) => {
    expect(tracesIn(env)).toBe(traces);
    expect(tracingFromEnv(env) !== undefined).toBe(traces);
  });

  it('gives a local run telemetry without tracing', () => {
    expect(telemetryFromEnv('reconcile', { CLUSTER_NAME: 'c' }).tracing).toBeUndefined();
  });
});

describe('a traced handler', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('answers with no segment to trace into, and captures a client made after its first `before`', async () => {
    // Tracer reads the process environment itself, as in Lambda.
    vi.stubEnv('AWS_EXECUTION_ENV', LAMBDA);
    // Outside Lambda there is no segment: the X-Ray SDK would log that on every call.
    vi.stubEnv('AWS_XRAY_CONTEXT_MISSING', 'IGNORE_ERROR');
    const tracing = tracingFromEnv(process.env);
    if (!tracing) throw new Error('no tracing in Lambda');
    const made: SQSClient[] = [];
    const handler = middy<unknown, string>().use(tracing.middleware).handler(async () => {
      made.push(tracing.capture(new SQSClient({ region: 'us-east-1' })));
      return 'answered';
    });
    expect(await handler({}, lambdaContext('traced'))).toBe('answered');
    expect(await handler({}, lambdaContext('traced'))).toBe('answered');
    const names = made.map((client) => client.middlewareStack.identify().some((entry) => entry.startsWith('XRaySDKInstrumentation')));
    expect(names).toEqual([true, true]);
  });
});
