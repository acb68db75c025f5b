/**
 * The Lambda logger and metrics (Powertools behind the `Logger` port), through a real handler's
 * middy chain: every line carries the request id and cold start, the level comes from the
 * environment, metrics are one valid EMF document per invocation with the dimensions `cluster` and
 * `function`, flushed once, also when the handler throws. Output is captured from stdout.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createNodeWebhookHandler } from '../functions/node-webhook.ts';
import { telemetryMiddlewares } from '../functions/telemetry.ts';
import type { Wiring } from '../functions/wiring.ts';
import { lambdaContext } from '../infra/local/lambda-context.ts';
import { powertoolsTelemetry, type Telemetry } from '../lib/log.ts';
import { captureOutput } from './support/capture-output.ts';

let out: string[];

beforeEach(() => {
  out = captureOutput(['LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL']);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

type Line = Record<string, unknown>;
const lines = (): Line[] =>
  out
    .join('')
    .split('\n')
    .filter((text) => text.trim() !== '')
    .map((text) => JSON.parse(text) as Line);
const logLines = () => lines().filter((line) => !('_aws' in line));
const emfLines = () => lines().filter((line) => '_aws' in line);

/** A webhook handler over a minimal wiring: with no credential it logs a warning and counts a metric. */
function webhook(telemetry: Telemetry) {
  const wiring = { log: telemetry.log, webhookSecret: async () => 'the-shared-secret-value', now: () => 0 } as unknown as Wiring;
  return createNodeWebhookHandler(async () => wiring, telemetry);
}

const unauthenticated = (token?: string) =>
  ({ headers: {}, body: '{}', isBase64Encoded: false, ...(token ? { pathParameters: { token } } : {}) }) as unknown as APIGatewayProxyEventV2;

describe('Powertools logger behind the Logger port', () => {
  it('puts the request id and cold start in every line, cold only on the first invocation', async () => {
    // Lambda sets this for on-demand environments; Powertools reports a cold start only then.
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const telemetry = powertoolsTelemetry({ cluster: 'blue', functionName: 'node-webhook' });
    const handler = webhook(telemetry);
    const first = lambdaContext('podroute-blue-node-webhook');
    const second = lambdaContext('podroute-blue-node-webhook');
    await handler(unauthenticated(), first);
    const afterFirst = logLines().length;
    await handler(unauthenticated(), second);
    const all = logLines();
    expect(afterFirst).toBe(1);
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ level: 'WARN', message: 'webhook.rejected', status: 401, cluster: 'blue', function: 'node-webhook' });
    expect(all.map((line) => [line.function_request_id, line.cold_start])).toEqual([
      [first.awsRequestId, true],
      [second.awsRequestId, false],
    ]);
  });

  it('never writes a presented token', async () => {
    const handler = webhook(powertoolsTelemetry({ cluster: 'blue', functionName: 'node-webhook' }));
    await handler(unauthenticated('wrong-token-7c1d5e'), lambdaContext('fn'));
    expect(out.join('')).toContain('webhook.rejected');
    expect(out.join('')).not.toContain('wrong-token-7c1d5e');
    expect(out.join('')).not.toContain('the-shared-secret-value');
  });

  it.each([
    ['POWERTOOLS_LOG_LEVEL', 'WARN', ['warn', 'error']],
    ['LOG_LEVEL', 'DEBUG', ['debug', 'info', 'warn', 'error']],
    ['LOG_LEVEL', 'ERROR', ['error']],
    ['POWERTOOLS_LOG_LEVEL', '', ['info', 'warn', 'error']],
  ] as const)('%s=%s keeps %j', (variable, value, kept) => {
    vi.stubEnv(variable, value);
    const { log } = powertoolsTelemetry({ cluster: 'blue', functionName: 'reconcile' });
    for (const level of ['debug', 'info', 'warn', 'error'] as const) log.log(level, `event.${level}`, { node: 'n1' });
    expect(logLines().map((line) => line.message)).toEqual(kept.map((level) => `event.${level}`));
  });

  it('writes errors as name, message and cause', () => {
    const { log } = powertoolsTelemetry({ cluster: 'blue', functionName: 'reconcile' });
    log.log('error', 'step.failed', { error: new Error('outer', { cause: new Error('inner') }) });
    expect(logLines()[0]).toMatchObject({ message: 'step.failed', error: { name: 'Error', message: 'outer', cause: 'inner' } });
  });
});

describe('Powertools metrics behind the Logger port', () => {
  function counting(telemetry: Telemetry, fail = false) {
    return middy<unknown, string>()
      .use(telemetryMiddlewares(telemetry))
      .handler(async () => {
        telemetry.log.metric('MessagesRejected', 1);
        telemetry.log.metric('MessagesRejected', 1);
        telemetry.log.metric('NodesTotal', 7);
        telemetry.log.metric('PlanMs', 12, 'Milliseconds');
        telemetry.log.metric('RouteTableHeadroom', 80.5, 'Percent');
        if (fail) throw new Error('boom');
        return 'done';
      });
  }

  it('flushes one EMF document per invocation, namespace podroute, dimensions cluster and function', async () => {
    const telemetry = powertoolsTelemetry({ cluster: 'blue', functionName: 'route-worker' });
    const handler = counting(telemetry);
    await handler({}, lambdaContext('fn'));
    expect(emfLines()).toHaveLength(1);
    await handler({}, lambdaContext('fn'));
    const emf = emfLines();
    expect(emf).toHaveLength(2);
    for (const doc of emf) {
      expect(doc._aws).toMatchObject({
        CloudWatchMetrics: [
          {
            Namespace: 'podroute',
            Dimensions: [['cluster', 'function']],
            Metrics: expect.arrayContaining([
              { Name: 'MessagesRejected', Unit: 'Count' },
              { Name: 'NodesTotal', Unit: 'Count' },
              { Name: 'PlanMs', Unit: 'Milliseconds' },
              { Name: 'RouteTableHeadroom', Unit: 'Percent' },
            ]),
          },
        ],
      });
      expect(typeof (doc._aws as { Timestamp: unknown }).Timestamp).toBe('number');
      expect(doc).toMatchObject({ cluster: 'blue', function: 'route-worker', MessagesRejected: [1, 1], NodesTotal: 7, PlanMs: 12, RouteTableHeadroom: 80.5 });
      expect(doc).not.toHaveProperty('service');
    }
  });

  it('flushes when the handler throws, and writes nothing when no metric was recorded', async () => {
    const telemetry = powertoolsTelemetry({ cluster: 'blue', functionName: 'reconcile' });
    await expect(counting(telemetry, true)({}, lambdaContext('fn'))).rejects.toThrow('boom');
    expect(emfLines()).toHaveLength(1);
    const quiet = middy<unknown, string>().use(telemetryMiddlewares(telemetry)).handler(async () => 'nothing');
    await quiet({}, lambdaContext('fn'));
    expect(lines()).toHaveLength(1);
  });

  it('gives a metric with extra dimensions its own document, with cluster and function too', async () => {
    const telemetry = powertoolsTelemetry({ cluster: 'blue', functionName: 'route-worker' });
    telemetry.log.metric('RouteTableFull', 1, 'Count', { routeTableId: 'rtb-1' });
    const [doc] = emfLines();
    expect(doc?._aws).toMatchObject({ CloudWatchMetrics: [{ Namespace: 'podroute', Dimensions: [['cluster', 'function', 'routeTableId']] }] });
    expect(doc).toMatchObject({ cluster: 'blue', function: 'route-worker', routeTableId: 'rtb-1', RouteTableFull: 1 });
  });
});
