/**
 * A deployed handler with a bad configuration: its first invocation fails with the config's one
 * clear error (lib/config.ts `loadConfig`), before any client is made, though the handler module
 * builds neither its schemas nor its telemetry when it is imported.
 */
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { handler as cloudEvents } from '../../functions/cloud-events.ts';
import { handler as nodeWebhook } from '../../functions/node-webhook.ts';
import { handler as reconcile } from '../../functions/reconcile.ts';
import { handler as routeWorker } from '../../functions/route-worker.ts';

const saved = { ...process.env };
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

const context = {
  awsRequestId: 'req-1',
  functionName: 'podroute-test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:podroute-test',
  memoryLimitInMB: '512',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

const HANDLERS = [
  ['reconcile', (event: unknown) => reconcile(event as never, context)],
  ['node-webhook', (event: unknown) => nodeWebhook(event as never, context)],
  ['cloud-events', (event: unknown) => cloudEvents(event as never, context)],
] as const;

function badConfig(): void {
  process.env.CLUSTER_NAME = 'demo';
  process.env.CLUSTER_CIDRS = '0.0.0.0/0';
  process.env.QUEUE_URL = 'http://127.0.0.1:9/queue';
  process.env.CIDR_TABLE_NAME = 'leases';
}

describe('a handler with a bad configuration', () => {
  it.each(HANDLERS)('%s fails its first invocation with the configuration error', async (_name, invoke) => {
    badConfig();
    await expect(invoke({ Records: [] })).rejects.toThrow(/^invalid podroute configuration: CLUSTER_CIDRS 0\.0\.0\.0\/0 is too broad/);
  });

  it('route-worker answers every record of its batch as failed (the partial-batch middleware catches the error)', async () => {
    badConfig();
    const record = { messageId: 'm1', receiptHandle: 'h1', body: '{}', attributes: { ApproximateReceiveCount: '1' }, messageAttributes: {} };
    await expect(routeWorker({ Records: [record] } as never, context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
  });
});
