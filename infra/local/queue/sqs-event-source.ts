/**
 * A local stand-in for Lambda's SQS event source mapping: it long-polls a queue and invokes an
 * SQS-triggered handler the way AWS does, so the worker can run against a local SQS (fauxqs) with
 * the real SQSClient.
 *
 * What it reproduces (per the Lambda and SQS documentation):
 * - up to `batchSize` (1..10) records per invocation, built as Lambda builds `SQSRecord`s;
 * - `maximumConcurrency` (2..1000) pollers, so at most that many invocations run at once;
 * - partial batch responses (`ReportBatchItemFailures`): only records not listed in
 *   `batchItemFailures` are deleted; an item identifier that is empty or not in the batch makes the
 *   whole batch fail; an empty or absent list means success;
 * - a handler that throws, or runs past the function timeout, deletes nothing: every record becomes
 *   visible again once its visibility timeout expires (nothing is hastened). A timed-out invocation
 *   is failed at its timeout as Lambda fails it ("Task timed out"); its promise cannot be killed
 *   in-process, so whatever it still does afterwards is ignored;
 * - redrive: a message received more than `maxReceiveCount` times is moved to `dlqUrl` instead of
 *   being delivered, as an SQS RedrivePolicy does on receive. This poller moves it itself (a copy
 *   of body and attributes to the DLQ, then a delete) so it can count it. Do not also give the
 *   queue its own RedrivePolicy with a lower maxReceiveCount, or the emulator moves it first.
 * Sources: AWS Lambda Developer Guide, "Using Lambda with Amazon SQS" (batching, scaling and
 * maximum concurrency; "Handling errors for an SQS event source": partial batch responses and the
 * rules for invalid `itemIdentifier`s), "Configuring Lambda function timeout" (a timed-out invocation
 * fails); Amazon SQS Developer Guide, "Amazon SQS visibility timeout" and "Using dead-letter queues"
 * (a message whose ReceiveCount exceeds maxReceiveCount moves to the dead-letter queue).
 * Not reproduced: batching windows, FIFO ordering semantics beyond what the queue itself enforces,
 * scaling of pollers.
 *
 * Polling, and what it costs: each of the `maximumConcurrency` pollers loops on ReceiveMessage with
 * `WaitTimeSeconds`, so an idle queue gets one (empty, billed) receive per poller per wait. AWS
 * Lambda Developer Guide, "Configuring scaling behavior for SQS event source mappings": for a
 * standard queue "Lambda uses long polling to poll a queue until it becomes active", starts with
 * five concurrent batches, and at low traffic scales back to five, optimising down to as few as two
 * "to reduce the SQS calls and corresponding costs" -- an optimisation not available when maximum
 * concurrency is set (podroute sets it: serverless.yml `maximumConcurrency`). So at idle production
 * keeps five pollers, as this stand-in does with its default sandbox concurrency of 5. The guide does
 * not give the wait time Lambda's pollers use; SQS caps a long poll at 20 s (SQS Developer Guide,
 * "Amazon SQS short and long polling"), the least a long-polling poller can ask for. The sandbox
 * waits 1 s (its clocks run fast); the cost model scales its measured receives to 20 s
 * (bench/cost.ts).
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { lambdaContext } from '../lambda-context.ts';
import type { Context, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface EventSourceStats {
  /** Handler invocations. */
  batches: number;
  /** Records delivered to the handler (a redelivery counts again). */
  records: number;
  /** Records that failed (listed in batchItemFailures, or all records of a failed invocation). */
  failures: number;
  /** Messages moved to the DLQ. */
  redriven: number;
  /** Queue calls that failed (receive, delete, redrive); the poller backs off and goes on. */
  errors: number;
  /** Invocations failed because they ran past the function timeout. */
  timeouts: number;
}

export interface BatchReport {
  readonly messageIds: readonly string[];
  readonly failedIds: readonly string[];
  /** 'ok': all deleted; 'partial': batchItemFailures; 'failed': handler threw or answered invalidly. */
  readonly outcome: 'ok' | 'partial' | 'failed';
  readonly error?: unknown;
  readonly stats: Readonly<EventSourceStats>;
}

export interface SqsEventSourceOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly handler: SqsHandler;
  /** Records per invocation, 1..10 (default 10). */
  readonly batchSize?: number;
  /** Concurrent invocations, 2..1000 as on AWS (default 2). */
  readonly maximumConcurrency?: number;
  /** Visibility timeout for received messages; default: the queue's own. */
  readonly visibilityTimeoutSeconds?: number;
  /** Receives before a message is moved to the DLQ (default 3); needs `dlqUrl`. */
  readonly maxReceiveCount?: number;
  readonly dlqUrl?: string;
  /**
   * The client that moves a message to `dlqUrl` (default `client`). On AWS the queue's RedrivePolicy
   * moves it, SQS itself, with no request from any caller; a separate client keeps those moves apart.
   */
  readonly redriveClient?: SQSClient;
  /** Long-poll wait per receive, 0..20 (default 1, short for tests). */
  readonly waitTimeSeconds?: number;
  /** As the mapping's FunctionResponseTypes: ['ReportBatchItemFailures'] (default true). */
  readonly reportBatchItemFailures?: boolean;
  readonly functionName?: string;
  /**
   * The function timeout, 1..900 s as on AWS (default 30): feeds `context.getRemainingTimeInMillis()`
   * and fails an invocation still running after it, as Lambda does.
   */
  readonly functionTimeoutSeconds?: number;
  readonly onBatch?: (report: BatchReport) => void;
  readonly onError?: (error: unknown) => void;
}

export interface SqsEventSource {
  /** Pollers running (each one ReceiveMessage at a time): `maximumConcurrency`. */
  readonly pollers: number;
  /** The long-poll wait of each receive, in seconds. */
  readonly waitTimeSeconds: number;
  /** Stops polling, lets running invocations finish, and resolves when every poller has ended. */
  stop(): Promise<void>;
  /** A snapshot of the counters. */
  readonly stats: Readonly<EventSourceStats>;
  /**
   * Resolves once the queue has no visible, delayed or in-flight messages and no invocation is
   * running; rejects after `timeoutMs` (default 20 s) with what is left.
   */
  drained(options?: { timeoutMs?: number; pollMs?: number }): Promise<void>;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startSqsEventSource(options: SqsEventSourceOptions): Promise<SqsEventSource> {
  const {
    client,
    queueUrl,
    handler,
    batchSize = 10,
    maximumConcurrency = 2,
    visibilityTimeoutSeconds,
    maxReceiveCount = 3,
    dlqUrl,
    redriveClient = client,
    waitTimeSeconds = 1,
    reportBatchItemFailures = true,
    functionName = 'local-function',
    functionTimeoutSeconds = 30,
    onBatch,
    onError,
  } = options;
  requireInt('batchSize', batchSize, 1, 10);
  requireInt('maximumConcurrency', maximumConcurrency, 2, 1000);
  requireInt('maxReceiveCount', maxReceiveCount, 1, 1000);
  requireInt('waitTimeSeconds', waitTimeSeconds, 0, 20);
  requireInt('functionTimeoutSeconds', functionTimeoutSeconds, 1, 900);
  if (visibilityTimeoutSeconds !== undefined) requireInt('visibilityTimeoutSeconds', visibilityTimeoutSeconds, 0, 43200);

  const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const eventSourceARN = Attributes?.QueueArn;
  if (!eventSourceARN) throw new Error(`queue ${queueUrl} has no QueueArn`);
  const awsRegion = await client.config.region();

  const stats: EventSourceStats = { batches: 0, records: 0, failures: 0, redriven: 0, errors: 0, timeouts: 0 };
  const abort = new AbortController();
  let stopped = false;
  let invocations = 0;

  const reportError = (error: unknown): void => {
    stats.errors += 1;
    onError?.(error);
  };

  const toRecord = (message: Message): SQSRecord | null => {
    if (!message.MessageId || !message.ReceiptHandle) return null;
    const a = message.Attributes ?? {};
    const attributes: SQSRecord['attributes'] = {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? '0',
      SenderId: a.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? '0',
      ...(a.AWSTraceHeader ? { AWSTraceHeader: a.AWSTraceHeader } : {}),
      ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      ...(a.MessageDeduplicationId ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
    };
    return {
      messageId: message.MessageId,
      receiptHandle: message.ReceiptHandle,
      body: message.Body ?? '',
      attributes,
      messageAttributes: toRecordAttributes(message.MessageAttributes),
      md5OfBody: message.MD5OfBody ?? '',
      ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
      eventSource: 'aws:sqs',
      eventSourceARN,
      awsRegion,
    };
  };

  const newContext = (): Context => lambdaContext(functionName, { timeoutSeconds: functionTimeoutSeconds, region: awsRegion });

  const deleteMessages = async (messages: readonly Message[], via: SQSClient = client): Promise<void> => {
    const entries = messages.flatMap((m, i) => (m.ReceiptHandle ? [{ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle }] : []));
    for (let i = 0; i < entries.length; i += 10) {
      const response = await via.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries.slice(i, i + 10) }));
      const failed = response.Failed ?? [];
      if (failed.length > 0) reportError(new Error(`DeleteMessageBatch failed for ${failed.length} entries: ${failed[0]?.Code}`));
    }
  };

  const redrive = async (message: Message): Promise<void> => {
    if (!dlqUrl) return;
    const fifo = dlqUrl.endsWith('.fifo');
    await redriveClient.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: message.Body ?? '',
        ...(message.MessageAttributes ? { MessageAttributes: forwardAttributes(message.MessageAttributes) } : {}),
        ...(fifo
          ? { MessageGroupId: message.Attributes?.MessageGroupId ?? 'redrive', MessageDeduplicationId: message.MessageId }
          : {}),
      }),
    );
    await deleteMessages([message], redriveClient);
    stats.redriven += 1;
  };

  /** Invokes the handler with one batch; returns the messages to delete and the failed ids. */
  const invoke = async (messages: readonly Message[]): Promise<void> => {
    const records = messages.flatMap((m) => {
      const record = toRecord(m);
      return record ? [record] : [];
    });
    if (records.length === 0) return;
    const ids = new Set(records.map((r) => r.messageId));
    let failedIds: Set<string>;
    let outcome: BatchReport['outcome'];
    let error: unknown;
    invocations += 1;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timedOut = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          stats.timeouts += 1;
          reject(new Error(`Task timed out after ${functionTimeoutSeconds}.00 seconds`));
        }, functionTimeoutSeconds * 1000);
      });
      const response = await Promise.race([handler({ Records: records }, newContext()), timedOut]);
      const judged = judgeResponse(response, ids, reportBatchItemFailures);
      failedIds = judged.failedIds;
      outcome = judged.failedIds.size === 0 ? 'ok' : judged.invalid ? 'failed' : 'partial';
      if (judged.invalid) error = new Error(`invalid batch response: ${judged.invalid}`);
    } catch (thrown) {
      failedIds = ids;
      outcome = 'failed';
      error = thrown;
    } finally {
      clearTimeout(timer);
      invocations -= 1;
    }
    stats.batches += 1;
    stats.records += records.length;
    stats.failures += failedIds.size;
    try {
      await deleteMessages(messages.filter((m) => m.MessageId !== undefined && !failedIds.has(m.MessageId)));
    } catch (deleteError) {
      reportError(deleteError);
    }
    onBatch?.({
      messageIds: records.map((r) => r.messageId),
      failedIds: records.map((r) => r.messageId).filter((id) => failedIds.has(id)),
      outcome,
      ...(error === undefined ? {} : { error }),
      stats: { ...stats },
    });
  };

  const poll = async (): Promise<void> => {
    while (!stopped) {
      let messages: Message[];
      try {
        const response = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: batchSize,
            WaitTimeSeconds: waitTimeSeconds,
            ...(visibilityTimeoutSeconds === undefined ? {} : { VisibilityTimeout: visibilityTimeoutSeconds }),
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        messages = response.Messages ?? [];
      } catch (error) {
        if (stopped) return;
        reportError(error);
        await delay(200);
        continue;
      }
      const deliver: Message[] = [];
      for (const message of messages) {
        const receives = Number(message.Attributes?.ApproximateReceiveCount ?? '1');
        if (dlqUrl && receives > maxReceiveCount) {
          try {
            await redrive(message);
          } catch (error) {
            reportError(error);
          }
        } else {
          deliver.push(message);
        }
      }
      if (deliver.length > 0) await invoke(deliver);
    }
  };

  const pollers = Array.from({ length: maximumConcurrency }, () => poll());

  const queueDepth = async (): Promise<Record<string, number>> => {
    const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
    const response = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }));
    return Object.fromEntries(names.map((name) => [name, Number(response.Attributes?.[name] ?? '0')]));
  };

  return {
    pollers: pollers.length,
    waitTimeSeconds,
    get stats() {
      return { ...stats };
    },
    async stop() {
      stopped = true;
      abort.abort();
      await Promise.all(pollers);
    },
    async drained({ timeoutMs = 20_000, pollMs = 50 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const depth = await queueDepth();
        const left = Object.values(depth).reduce((sum, n) => sum + n, 0);
        if (left === 0 && invocations === 0) return;
        if (Date.now() >= deadline) {
          throw new Error(`queue not drained after ${timeoutMs} ms: ${JSON.stringify(depth)}, ${invocations} invocations running`);
        }
        await delay(pollMs);
      }
    },
  };
}

/**
 * Lambda's reading of a handler's answer with ReportBatchItemFailures: nothing, null, or an empty
 * list is success; a list of valid message ids fails those; anything malformed fails the batch.
 */
export function judgeResponse(
  response: unknown,
  ids: ReadonlySet<string>,
  reportBatchItemFailures = true,
): { failedIds: Set<string>; invalid?: string } {
  if (!reportBatchItemFailures || response === undefined || response === null) return { failedIds: new Set() };
  if (typeof response !== 'object') return { failedIds: new Set(ids), invalid: 'not an object' };
  const list = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (list === undefined || list === null) return { failedIds: new Set() };
  if (!Array.isArray(list)) return { failedIds: new Set(ids), invalid: 'batchItemFailures is not a list' };
  const failedIds = new Set<string>();
  for (const item of list) {
    const id = typeof item === 'object' && item !== null ? (item as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== 'string' || id === '' || !ids.has(id)) {
      return { failedIds: new Set(ids), invalid: `itemIdentifier ${JSON.stringify(id)} is not a message of the batch` };
    }
    failedIds.add(id);
  }
  return { failedIds };
}

function toRecordAttributes(attributes: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    out[name] = {
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined ? {} : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
      dataType: value.DataType ?? 'String',
    };
  }
  return out;
}

function forwardAttributes(attributes: Record<string, MessageAttributeValue>): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    out[name] = {
      DataType: value.DataType ?? 'String',
      ...(value.StringValue === undefined ? {} : { StringValue: value.StringValue }),
      ...(value.BinaryValue === undefined ? {} : { BinaryValue: value.BinaryValue }),
    };
  }
  return out;
}

function requireInt(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in ${min}..${max}, got ${value}`);
  }
}
