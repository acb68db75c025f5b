import { ReceiveMessageCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { SqsWorkQueue } from '../../lib/aws/sqs-work-queue.ts';
import { memoryLogger } from '../../lib/log.ts';
import { messageKey, parseWorkMessage, type WorkMessage } from '../../lib/messages/work-message.ts';
import type { LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { useLocalSqs } from '../support/local-sqs.ts';
import { throttledWorkerWiring } from '../support/throttled-worker.ts';
import {
  judgeResponse,
  startSqsEventSource,
  type BatchReport,
  type SqsEventSource,
  type SqsEventSourceOptions,
} from '../../infra/local/queue/sqs-event-source.ts';

let sqs: LocalSqs;
let client: SQSClient;
let n = 0;

useLocalSqs((started) => {
  sqs = started;
  client = sqs.createClient();
});

async function sendBodies(queueUrl: string, bodies: string[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const entries = bodies.slice(i, i + 10).map((body, k) => ({
      Id: `e${k}`,
      MessageBody: body,
      MessageAttributes: { origin: { DataType: 'String', StringValue: `test-${i + k}` } },
    }));
    const response = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    expect(response.Failed ?? []).toEqual([]);
  }
}

async function receiveAll(queueUrl: string): Promise<{ body: string; origin: string | undefined }[]> {
  const out: { body: string; origin: string | undefined }[] = [];
  for (;;) {
    const { Messages } = await client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
    );
    if (!Messages?.length) return out;
    out.push(...Messages.map((m) => ({ body: m.Body ?? '', origin: m.MessageAttributes?.origin?.StringValue })));
  }
}

/** Runs an event source until the queue is drained, then stops it. */
async function runToDrain(
  options: Omit<SqsEventSourceOptions, 'client'>,
): Promise<{ source: SqsEventSource; reports: BatchReport[] }> {
  const reports: BatchReport[] = [];
  const source = await startSqsEventSource({
    client,
    visibilityTimeoutSeconds: 1,
    waitTimeSeconds: 1,
    ...options,
    onBatch: (report) => reports.push(report),
  });
  try {
    await source.drained();
  } finally {
    await source.stop();
  }
  return { source, reports };
}

const newQueues = async () => {
  const id = ++n;
  const main = await sqs.createQueue(`events-${id}`);
  const dlq = await sqs.createQueue(`events-${id}-dlq`);
  return { queueUrl: main.queueUrl, queueArn: main.queueArn, dlqUrl: dlq.queueUrl };
};

describe('startSqsEventSource against fauxqs', () => {
  it('delivers every message once in batches of at most batchSize, as real SQSRecords', async () => {
    const { queueUrl, queueArn, dlqUrl } = await newQueues();
    const bodies = Array.from({ length: 23 }, (_, i) => `message-${i}`);
    await sendBodies(queueUrl, bodies);
    const seen: SQSRecord[] = [];
    const sizes: number[] = [];
    const { source } = await runToDrain({
      queueUrl,
      dlqUrl,
      batchSize: 4,
      handler: async (event: SQSEvent) => {
        sizes.push(event.Records.length);
        seen.push(...event.Records);
      },
    });
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(seen.map((r) => r.body).sort()).toEqual([...bodies].sort());
    expect(new Set(seen.map((r) => r.messageId)).size).toBe(23);
    expect(source.stats).toEqual({ batches: sizes.length, records: 23, failures: 0, redriven: 0, errors: 0, timeouts: 0 });
    for (const record of seen) {
      expect(record).toMatchObject({
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: 'us-east-1',
        attributes: { ApproximateReceiveCount: '1' },
      });
      expect(record.receiptHandle).not.toBe('');
      expect(record.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
      expect(Number(record.attributes.SentTimestamp)).toBeGreaterThan(0);
      const index = bodies.indexOf(record.body);
      expect(record.messageAttributes.origin).toEqual({
        stringValue: `test-${index}`,
        stringListValues: [],
        binaryListValues: [],
        dataType: 'String',
      });
    }
    expect(await receiveAll(dlqUrl)).toEqual([]);
  });

  it('redelivers only the records reported in batchItemFailures, which then succeed', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    await sendBodies(queueUrl, ['a', 'b', 'c', 'd', 'e']);
    const deliveries: { body: string; receives: string }[] = [];
    const failedOnce = new Set<string>();
    const { source, reports } = await runToDrain({
      queueUrl,
      dlqUrl,
      handler: async (event): Promise<SQSBatchResponse> => {
        const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
        for (const record of event.Records) {
          deliveries.push({ body: record.body, receives: record.attributes.ApproximateReceiveCount });
          if ((record.body === 'b' || record.body === 'd') && !failedOnce.has(record.body)) {
            failedOnce.add(record.body);
            batchItemFailures.push({ itemIdentifier: record.messageId });
          }
        }
        return { batchItemFailures };
      },
    });
    const count = (body: string) => deliveries.filter((d) => d.body === body).length;
    expect(['a', 'b', 'c', 'd', 'e'].map(count)).toEqual([1, 2, 1, 2, 1]);
    expect(deliveries.filter((d) => d.body === 'b').map((d) => d.receives)).toEqual(['1', '2']);
    expect(source.stats).toMatchObject({ records: 7, failures: 2, redriven: 0 });
    expect(reports.filter((r) => r.outcome === 'partial').flatMap((r) => r.failedIds)).toHaveLength(2);
    expect(await receiveAll(dlqUrl)).toEqual([]);
  });

  it('moves a poison message to the DLQ after maxReceiveCount receives', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    await sendBodies(queueUrl, ['ok-1', 'poison', 'ok-2']);
    const poisonReceives: string[] = [];
    sqs.stats.reset();
    const { source } = await runToDrain({
      queueUrl,
      dlqUrl,
      maxReceiveCount: 3,
      redriveClient: sqs.createClient('redrive'),
      handler: async (event) => {
        const failures = event.Records.filter((r) => r.body === 'poison');
        poisonReceives.push(...failures.map((r) => r.attributes.ApproximateReceiveCount));
        return { batchItemFailures: failures.map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    expect(poisonReceives).toEqual(['1', '2', '3']);
    expect(source.stats).toMatchObject({ records: 5, failures: 3, redriven: 1 });
    expect(await receiveAll(dlqUrl)).toEqual([{ body: 'poison', origin: 'test-1' }]);
    expect(await receiveAll(queueUrl)).toEqual([]);
    // The move is the redrive client's (the queue's RedrivePolicy on AWS), not the pollers' requests.
    expect(sqs.stats.total(['redrive']).calls).toEqual({ SendMessage: 1, DeleteMessageBatch: 1 });
    expect(sqs.stats.total(['local']).calls.SendMessage).toBeUndefined();
  });

  it('redelivers the whole batch when the handler throws', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    await sendBodies(queueUrl, ['x', 'y', 'z']);
    const invocations: { ids: string[]; receives: string[] }[] = [];
    const { source, reports } = await runToDrain({
      queueUrl,
      dlqUrl,
      handler: async (event) => {
        invocations.push({
          ids: event.Records.map((r) => r.messageId),
          receives: event.Records.map((r) => r.attributes.ApproximateReceiveCount),
        });
        if (invocations.length === 1) throw new Error('handler crashed');
      },
    });
    const first = invocations[0];
    expect(first).toBeDefined();
    const later = invocations.slice(1);
    for (const id of first?.ids ?? []) {
      const again = later.filter((inv) => inv.ids.includes(id));
      expect(again).toHaveLength(1);
      expect(again[0]?.receives[again[0].ids.indexOf(id)]).toBe('2');
    }
    // reports arrive in completion order, so look the failed one up
    const failedReports = reports.filter((r) => r.outcome === 'failed');
    expect(failedReports).toHaveLength(1);
    expect(failedReports[0]).toMatchObject({ failedIds: first?.ids, messageIds: first?.ids });
    expect((failedReports[0]?.error as Error).message).toBe('handler crashed');
    expect(source.stats.failures).toBe(first?.ids.length);
    expect(source.stats.records).toBe(3 + (first?.ids.length ?? 0));
  });

  it('treats an unknown itemIdentifier as a failure of the whole batch', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    await sendBodies(queueUrl, ['p', 'q']);
    let calls = 0;
    const bodies: string[] = [];
    const { reports } = await runToDrain({
      queueUrl,
      dlqUrl,
      handler: async (event) => {
        calls++;
        bodies.push(...event.Records.map((r) => r.body));
        return calls === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined;
      },
    });
    const failedReports = reports.filter((r) => r.outcome === 'failed');
    expect(failedReports).toHaveLength(1);
    expect((failedReports[0]?.error as Error).message).toMatch(/not-in-this-batch/);
    // every record of the failed batch came back
    const failedSize = failedReports[0]?.failedIds.length ?? 0;
    expect(failedSize).toBe(failedReports[0]?.messageIds.length);
    expect(bodies).toHaveLength(2 + failedSize);
  });

  it('never runs more than maximumConcurrency invocations at once', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    await sendBodies(queueUrl, Array.from({ length: 30 }, (_, i) => `c-${i}`));
    let inFlight = 0;
    let peak = 0;
    const { source } = await runToDrain({
      queueUrl,
      dlqUrl,
      batchSize: 1,
      maximumConcurrency: 3,
      handler: async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 10));
        inFlight--;
      },
    });
    expect(source.stats.records).toBe(30);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
  });

  it('feeds route messages sent by SqsWorkQueue to a worker-shaped handler', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    const messages: WorkMessage[] = Array.from({ length: 12 }, (_, i) => ({
      v: 1,
      kind: 'delete',
      routeTableId: 'rtb-0123456789abcdef0',
      destinationCidr: `10.1.${i}.0/24`,
      reason: 'no-owner',
    }));
    await new SqsWorkQueue(client, queueUrl).send(messages);
    const got: WorkMessage[] = [];
    await runToDrain({
      queueUrl,
      dlqUrl,
      handler: async (event) => {
        for (const record of event.Records) {
          const message = parseWorkMessage(record.body);
          expect(record.messageAttributes).toEqual({});
          got.push(message);
        }
      },
    });
    expect(got.map(messageKey).sort()).toEqual(messages.map(messageKey).sort());
  });

  // Lambda fails an invocation that runs past its timeout ("Configuring Lambda function timeout"); for
  // an SQS event source the whole batch returns after its visibility timeout ("Using Lambda with Amazon
  // SQS": a failed invocation deletes nothing).
  it('fails the whole batch of an invocation that runs past the function timeout', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    await sendBodies(queueUrl, ['slow', 'fast']);
    const receives: string[] = [];
    const { source, reports } = await runToDrain({
      queueUrl,
      dlqUrl,
      batchSize: 10,
      functionTimeoutSeconds: 1,
      handler: async (event) => {
        receives.push(...event.Records.map((r) => `${r.body}:${r.attributes.ApproximateReceiveCount}`));
        if (receives.length <= event.Records.length) await new Promise((resolve) => setTimeout(resolve, 1500));
        return { batchItemFailures: [] };
      },
    });
    const failed = reports.filter((r) => r.outcome === 'failed');
    expect(failed).toHaveLength(1);
    expect((failed[0]?.error as Error).message).toBe('Task timed out after 1.00 seconds');
    expect(source.stats.timeouts).toBe(1);
    expect(receives.filter((r) => r.endsWith(':2')).length).toBe(failed[0]?.messageIds.length);
    expect(await receiveAll(dlqUrl)).toEqual([]);
  });

  // The worker's promise: a retryable failure is retried through the queue, and one receive before the
  // last (ApproximateReceiveCount = maxReceiveCount - 1, the RedrivePolicy's) it is acknowledged and
  // handed back to reconcile, so nothing reaches the DLQ ("Using dead-letter queues": a message moves there only
  // once its ReceiveCount exceeds maxReceiveCount).
  it('the real route-worker handler never lets a retryable failure reach the DLQ', async () => {
    const { queueUrl, dlqUrl } = await newQueues();
    const message: WorkMessage = { v: 1, kind: 'delete', routeTableId: 'rtb-0123456789abcdef0', destinationCidr: '10.244.1.0/24', reason: 'no-owner' };
    await new SqsWorkQueue(client, queueUrl).send([message]);
    const log = memoryLogger();
    const wiring = throttledWorkerWiring(new SqsWorkQueue(client, queueUrl), log);
    const worker = createRouteWorkerHandler(async () => wiring);
    const { source } = await runToDrain({
      queueUrl,
      dlqUrl,
      maxReceiveCount: 3,
      visibilityTimeoutSeconds: 30,
      handler: async (event, context) => (await worker(event, context)) as SQSBatchResponse,
    });
    expect(log.lines.filter((l) => l.event === 'message.failed').map((l) => [l.receiveCount, l.outcome])).toEqual([
      [1, 'retry'],
      [2, 'handed-back'],
    ]);
    expect(source.stats).toMatchObject({ records: 2, failures: 1, redriven: 0, timeouts: 0 });
    expect(await receiveAll(dlqUrl)).toEqual([]);
  });

  it.each<[string, Partial<SqsEventSourceOptions>]>([
    ['functionTimeoutSeconds 0', { functionTimeoutSeconds: 0 }],
    ['batchSize 0', { batchSize: 0 }],
    ['batchSize 11', { batchSize: 11 }],
    ['maximumConcurrency 1', { maximumConcurrency: 1 }],
    ['waitTimeSeconds 21', { waitTimeSeconds: 21 }],
  ])('rejects %s', async (_name, bad) => {
    await expect(
      startSqsEventSource({ client, queueUrl: 'http://127.0.0.1:1/000000000000/none', handler: async () => {}, ...bad }),
    ).rejects.toThrow(RangeError);
  });
});

describe('judgeResponse (ReportBatchItemFailures semantics)', () => {
  const ids = new Set(['m1', 'm2', 'm3']);
  it.each<[string, unknown, string[], boolean]>([
    ['undefined', undefined, [], false],
    ['null', null, [], false],
    ['empty object', {}, [], false],
    ['empty list', { batchItemFailures: [] }, [], false],
    ['null list', { batchItemFailures: null }, [], false],
    ['two failures', { batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm3' }] }, ['m1', 'm3'], false],
    ['unknown id', { batchItemFailures: [{ itemIdentifier: 'm9' }] }, ['m1', 'm2', 'm3'], true],
    ['empty id', { batchItemFailures: [{ itemIdentifier: '' }] }, ['m1', 'm2', 'm3'], true],
    ['null id', { batchItemFailures: [{ itemIdentifier: null }] }, ['m1', 'm2', 'm3'], true],
    ['wrong key', { batchItemFailures: [{ itemIdentifer: 'm1' }] }, ['m1', 'm2', 'm3'], true],
    ['not a list', { batchItemFailures: 'm1' }, ['m1', 'm2', 'm3'], true],
    ['a string', 'ok', ['m1', 'm2', 'm3'], true],
  ])('%s', (_name, response, failed, invalid) => {
    const judged = judgeResponse(response, ids);
    expect([...judged.failedIds].sort()).toEqual(failed);
    expect(judged.invalid !== undefined).toBe(invalid);
  });

  it('ignores the answer when ReportBatchItemFailures is off', () => {
    expect([...judgeResponse({ batchItemFailures: [{ itemIdentifier: 'm1' }] }, ids, false).failedIds]).toEqual([]);
  });
});
