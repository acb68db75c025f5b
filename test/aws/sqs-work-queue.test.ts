import {
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  SQSServiceException,
  type Message,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PodrouteError } from '../../lib/errors.ts';
import { SqsWorkQueue } from '../../lib/aws/sqs-work-queue.ts';
import { messageKey, parseWorkMessage, type WorkMessage } from '../../lib/messages/work-message.ts';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';

/** What the adapter's WorkQueueError carries besides the base error's `retryable` and `cause`. */
type WorkQueueError = PodrouteError & { code: string; sent: number; failed: number };

const RTB_A = 'rtb-0000000000000000a';
const RTB_B = 'rtb-0000000000000000b';
const instance = (i: number): string => `i-${i.toString(16).padStart(17, '0')}`;

/** n distinct create messages, alternating between two route tables. */
const creates = (n: number, offset = 0): WorkMessage[] =>
  Array.from({ length: n }, (_, k) => {
    const i = k + offset;
    return {
      v: 1,
      kind: 'create',
      routeTableId: i % 2 === 0 ? RTB_A : RTB_B,
      destinationCidr: `10.${Math.floor(i / 256)}.${i % 256}.0/24`,
      node: `node-${i}`,
      instanceId: instance(i + 1),
    };
  });

async function drain(client: SQSClient, queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const { Messages } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (!Messages || Messages.length === 0) return all;
    all.push(...Messages);
  }
}

describe('SqsWorkQueue against fauxqs', () => {
  let sqs: LocalSqs;
  let client: SQSClient;
  let n = 0;
  const batchSizes: number[] = [];

  beforeAll(async () => {
    sqs = await startLocalSqs();
    client = sqs.createClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageBatchCommand') {
          const input = args.input as { Entries?: SendMessageBatchRequestEntry[] };
          batchSizes.push(input.Entries?.length ?? 0);
          const ids = new Set(input.Entries?.map((e) => e.Id));
          expect(ids.size).toBe(input.Entries?.length);
        }
        return next(args);
      },
      { step: 'initialize', name: 'countBatches' },
    );
  });
  afterAll(async () => {
    await sqs.stop();
  });
  beforeEach(() => {
    batchSizes.length = 0;
  });

  const newQueue = async () => (await sqs.createQueue(`work-${++n}`)).queueUrl;

  it('sends 25 messages as 3 batches, all received intact, with no message attributes', async () => {
    const queueUrl = await newQueue();
    const messages = creates(25);
    const result = await new SqsWorkQueue(client, queueUrl).send(messages);
    expect(result).toEqual({ sent: 25, duplicates: 0 });
    expect(batchSizes.sort((a, b) => b - a)).toEqual([10, 10, 5]);

    const received = await drain(client, queueUrl);
    expect(received).toHaveLength(25);
    const parsed = received.map((m) => parseWorkMessage(m.Body ?? ''));
    const byKey = (a: WorkMessage, b: WorkMessage) => messageKey(a).localeCompare(messageKey(b));
    expect([...parsed].sort(byKey)).toEqual([...messages].sort(byKey));
    for (const m of received) expect(m.MessageAttributes).toBeUndefined();
  });

  it('retryAfter makes a received message visible again after the given seconds, not the queue timeout', async () => {
    const queueUrl = await newQueue();
    const queue = new SqsWorkQueue(client, queueUrl);
    await queue.send(creates(1));
    const first = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, VisibilityTimeout: 300, WaitTimeSeconds: 1 }));
    const handle = first.Messages?.[0]?.ReceiptHandle;
    expect(handle).toBeDefined();
    const hidden = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(hidden.Messages ?? []).toHaveLength(0);
    await queue.retryAfter(handle ?? '', 0);
    const again = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
    expect(again.Messages?.[0]?.Body).toBe(first.Messages?.[0]?.Body);
  });

  it('backlog counts waiting and in-flight messages', async () => {
    const queueUrl = await newQueue();
    const queue = new SqsWorkQueue(client, queueUrl);
    expect(await queue.backlog()).toBe(0);
    await queue.send(creates(3));
    await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 300, WaitTimeSeconds: 1 }));
    expect(await queue.backlog()).toBe(3);
  });

  it('collapses duplicates within one send', async () => {
    const queueUrl = await newQueue();
    const base = creates(12);
    const replaceOf0 = { ...base[0], kind: 'replace', reason: 'blackhole' } as WorkMessage;
    const messages = [...base, ...creates(5), replaceOf0, { v: 1, kind: 'sync-node', node: 'n' }, { v: 1, kind: 'sync-node', node: 'n' }] as WorkMessage[];
    const result = await new SqsWorkQueue(client, queueUrl).send(messages);
    expect(result).toEqual({ sent: 13, duplicates: 7 });
    expect(batchSizes.sort((a, b) => b - a)).toEqual([10, 3]);
    const parsed = (await drain(client, queueUrl)).map((m) => parseWorkMessage(m.Body ?? ''));
    expect(parsed).toHaveLength(13);
    expect(new Set(parsed.map(messageKey)).size).toBe(13);
    // the replace won over the create of the same target
    expect(parsed.find((m) => messageKey(m) === messageKey(replaceOf0))?.kind).toBe('replace');
  });

  it('sends nothing for an empty list', async () => {
    const queueUrl = await newQueue();
    expect(await new SqsWorkQueue(client, queueUrl).send([])).toEqual({ sent: 0, duplicates: 0 });
    expect(batchSizes).toEqual([]);
  });

  it('maps a missing queue to a non-retryable WorkQueueError with its cause', async () => {
    const missing = `${sqs.endpoint}/000000000000/no-such-queue`;
    const error = await new SqsWorkQueue(client, missing).send(creates(3)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PodrouteError);
    expect(error).toMatchObject({ name: 'WorkQueueError', code: 'QueueDoesNotExist', retryable: false, sent: 0, failed: 3 });
    expect((error as Error).cause).toBeInstanceOf(SQSServiceException);
  });

  it('names GetQueueAttributes, not a send, when the backlog cannot be read', async () => {
    const missing = `${sqs.endpoint}/000000000000/no-such-queue`;
    const error = await new SqsWorkQueue(client, missing).backlog().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'WorkQueueError', code: 'QueueDoesNotExist', retryable: false });
    expect((error as Error).message).toMatch(/^SQS GetQueueAttributes on .*no-such-queue failed with QueueDoesNotExist \(not retryable\)/);
    expect((error as Error).message).not.toContain('sent');
  });
});

describe('SqsWorkQueue with a mocked client', () => {
  const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/work';
  const client = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
  const sqsMock = mockClient(client);
  beforeEach(() => sqsMock.reset());

  const entriesOf = (call: number): SendMessageBatchRequestEntry[] =>
    (sqsMock.commandCalls(SendMessageBatchCommand)[call]?.args[0].input.Entries ?? []);

  it('resends entries reported in Failed with backoff, then succeeds', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [],
        Failed: [
          { Id: 'm1', Code: 'InternalError', SenderFault: false },
          { Id: 'm3', Code: 'InternalError', SenderFault: false },
        ],
      })
      .resolves({ Successful: [], Failed: [] });
    const sleeps: number[] = [];
    const queue = new SqsWorkQueue(client, QUEUE, { sleep: async (ms) => void sleeps.push(ms), baseDelayMs: 50 });
    const messages = creates(4);
    expect(await queue.send(messages)).toEqual({ sent: 4, duplicates: 0 });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
    const first = entriesOf(0);
    const resent = entriesOf(1);
    expect(resent.map((e) => e.Id)).toEqual(['m1', 'm3']);
    expect(resent.map((e) => e.MessageBody)).toEqual([first[1]?.MessageBody, first[3]?.MessageBody]);
    expect(sleeps).toEqual([50]);
    // the queue is standard: no FIFO fields, and no message attributes
    expect(first[0]?.MessageGroupId).toBeUndefined();
    expect(first[0]?.MessageDeduplicationId).toBeUndefined();
    expect(first[0]?.MessageAttributes).toBeUndefined();
  });

  it('gives up after maxAttempts with a retryable error carrying counts and the first code', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: 'm0', Code: 'ServiceUnavailable', Message: 'try later', SenderFault: false }],
    });
    const sleeps: number[] = [];
    const queue = new SqsWorkQueue(client, QUEUE, { maxAttempts: 3, baseDelayMs: 10, sleep: async (ms) => void sleeps.push(ms) });
    const error = await queue.send(creates(12)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'WorkQueueError' });
    const e = error as WorkQueueError;
    expect(e.retryable).toBe(true);
    expect(e.code).toBe('ServiceUnavailable');
    // two batches (10 + 2): m0 of each fails three times
    expect(e.failed).toBe(2);
    expect(e.sent).toBe(10);
    expect(e.message).toContain('2 of 12');
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(6);
    expect(sleeps.sort((a, b) => a - b)).toEqual([10, 10, 20, 20]);
  });

  it('does not resend sender faults and reports them as not retryable', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: 'm2', Code: 'InvalidParameterValue', SenderFault: true }],
    });
    const error = await new SqsWorkQueue(client, QUEUE, { sleep: async () => {} }).send(creates(3)).catch((e: unknown) => e);
    const e = error as WorkQueueError;
    expect(e).toMatchObject({ name: 'WorkQueueError' });
    expect(e.retryable).toBe(false);
    expect(e.code).toBe('InvalidParameterValue');
    expect({ sent: e.sent, failed: e.failed }).toEqual({ sent: 2, failed: 1 });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(1);
  });

  it('is retryable when any failure is a service fault', async () => {
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [
        { Id: 'm0', Code: 'InvalidParameterValue', SenderFault: true },
        { Id: 'm1', Code: 'InternalError', SenderFault: false },
      ],
    });
    const error = await new SqsWorkQueue(client, QUEUE, { maxAttempts: 2, sleep: async () => {} }).send(creates(2)).catch((e: unknown) => e);
    const e = error as WorkQueueError;
    expect(e.retryable).toBe(true);
    expect(e.code).toBe('InvalidParameterValue');
    expect(e.failed).toBe(2);
  });

  it('never has more than `concurrency` batches in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    sqsMock.on(SendMessageBatchCommand).callsFake(async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return { Successful: [], Failed: [] };
    });
    const result = await new SqsWorkQueue(client, QUEUE, { concurrency: 3 }).send(creates(95));
    expect(result).toEqual({ sent: 95, duplicates: 0 });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(10);
    expect(peak).toBe(3);
  });

  const entryBytes = (e: SendMessageBatchRequestEntry): number =>
    Buffer.byteLength(e.MessageBody ?? '') +
    Object.entries(e.MessageAttributes ?? {}).reduce(
      (a, [k, v]) => a + Buffer.byteLength(k) + Buffer.byteLength(v.DataType ?? '') + Buffer.byteLength(v.StringValue ?? ''),
      0,
    );

  it.each<[string, number | undefined, number]>([
    ['entry count alone (default 256 KiB)', undefined, 3],
    ['a 1 KiB byte limit', 1024, 5],
    ['a 512 B byte limit', 512, 10],
  ])('cuts batches by %s', async (_name, maxBatchBytes, batchCount) => {
    sqsMock.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await new SqsWorkQueue(client, QUEUE, { concurrency: 1, ...(maxBatchBytes ? { maxBatchBytes } : {}) }).send(creates(30));
    const batches = sqsMock.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries ?? []);
    expect(batches).toHaveLength(batchCount);
    expect(batches.flat()).toHaveLength(30);
    const limit = maxBatchBytes ?? 256 * 1024;
    batches.forEach((batch, i) => {
      expect(batch.length).toBeLessThanOrEqual(10);
      const bytes = batch.reduce((sum, e) => sum + entryBytes(e), 0);
      expect(bytes).toBeLessThanOrEqual(limit);
      const next = batches[i + 1]?.[0];
      // greedy: a batch is cut only when the next entry would not fit
      if (next && batch.length < 10) expect(bytes + entryBytes(next)).toBeGreaterThan(limit);
      expect(new Set(batch.map((e) => e.Id)).size).toBe(batch.length);
    });
  });

  it('rejects a single message larger than the batch limit', async () => {
    const error = await new SqsWorkQueue(client, QUEUE, { maxBatchBytes: 100 }).send(creates(1)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'WorkQueueError' });
    expect((error as WorkQueueError).retryable).toBe(false);
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  const sdkError = (name: string, status: number, fault: 'client' | 'server' = status >= 500 ? 'server' : 'client') =>
    new SQSServiceException({ name, $fault: fault, $metadata: { httpStatusCode: status }, message: `${name} happened` });

  it.each<[string, Error, boolean]>([
    ['RequestThrottled', sdkError('RequestThrottled', 400), true],
    ['ThrottlingException', sdkError('ThrottlingException', 400), true],
    ['KmsThrottled', sdkError('KmsThrottled', 400), true],
    ['InternalError 500', sdkError('InternalError', 500), true],
    ['unknown 503', sdkError('SomethingNew', 503), true],
    ['AccessDenied', sdkError('AccessDenied', 403), false],
    ['AccessDeniedException', sdkError('AccessDeniedException', 400), false],
    ['QueueDoesNotExist', sdkError('QueueDoesNotExist', 400), false],
    ['NonExistentQueue (query code)', sdkError('AWS.SimpleQueueService.NonExistentQueue', 400), false],
    ['InvalidSecurity', sdkError('InvalidSecurity', 403), false],
    ['KmsAccessDenied', sdkError('KmsAccessDenied', 400), false],
    ['unknown 400', sdkError('SomethingNew', 400), false],
    ['connection refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), true],
    ['a plain error', new Error('boom'), false],
  ])('maps %s (retryable: %s)', async (name, thrown, retryable) => {
    sqsMock.on(SendMessageBatchCommand).rejects(thrown);
    const error = await new SqsWorkQueue(client, QUEUE).send(creates(3)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'WorkQueueError' });
    const e = error as WorkQueueError;
    expect(e.retryable).toBe(retryable);
    expect(e.cause).toBe(thrown);
    expect(e.code).toBe(thrown.name);
    expect(e.failed).toBe(3);
    expect(e.message).toContain(thrown.name);
    void name;
  });

  it('stops starting batches after an SDK error and counts what was sent', async () => {
    sqsMock
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Successful: [], Failed: [] })
      .rejects(sdkError('AccessDenied', 403));
    const error = await new SqsWorkQueue(client, QUEUE, { concurrency: 1 }).send(creates(40)).catch((e: unknown) => e);
    const e = error as WorkQueueError;
    expect(e.code).toBe('AccessDenied');
    expect({ sent: e.sent, failed: e.failed }).toEqual({ sent: 10, failed: 30 });
    expect(sqsMock.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });
});
