/**
 * The WorkQueue port over Amazon SQS (a standard queue, serverless.yml): one `send` collapses
 * duplicate work by `messageKey`, cuts the rest into SendMessageBatch requests (at most 10 entries
 * and 256 KiB each), sends `concurrency` at a time, resends `Failed` entries with a bounded backoff,
 * and maps SDK errors by name and HTTP status. A repeat delivery converges: a message is a hint.
 */
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type BatchResultErrorEntry,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { PodrouteError } from '../errors.ts';
import { SQS_ERROR_CODES } from './aws-error-codes.ts';
import { type AwsFailureKind, classifyAwsError, failureName, isRetryableKind } from './aws-errors.ts';
import { serializeWorkMessage, type WorkMessage } from '../messages/work-message.ts';
import { forEachLimit } from '../util/concurrency.ts';
import { CORRELATION_ATTRIBUTE, dedupeMessages } from '../messages/work-queue.ts';
import type { SendOptions, SendResult, WorkQueue } from '../usecases/ports.ts';

/** SQS limits for one SendMessageBatch request. */
const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;

interface SqsWorkQueueOptions {
  /** Batches in flight at once (default 4). */
  readonly concurrency?: number;
  /** Tries per entry, the first send included, when SQS reports it in `Failed` (default 3). */
  readonly maxAttempts?: number;
  /** Backoff before the n-th resend: baseDelayMs * 2^(n-1) (default 100 ms). */
  readonly baseDelayMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Payload bytes per batch (default and maximum: the SQS limit of 256 KiB). */
  readonly maxBatchBytes?: number;
}

/** A send that did not (fully) reach the queue. `code` is the SDK error name or the first `Failed` code. */
class WorkQueueError extends PodrouteError {
  override name = 'WorkQueueError';
  readonly code: string;
  /** Messages accepted before the failure (they stay on the queue). */
  readonly sent: number;
  /** Messages not accepted. */
  readonly failed: number;
  /** What the SDK failure means (lib/aws/aws-errors.ts); absent when SQS answered but refused entries. */
  readonly kind: AwsFailureKind | undefined;
  constructor(
    message: string,
    details: { code: string; sent: number; failed: number; retryable: boolean; kind?: AwsFailureKind; cause?: unknown },
  ) {
    super(message, { retryable: details.retryable, cause: details.cause });
    this.code = details.code;
    this.kind = details.kind;
    this.sent = details.sent;
    this.failed = details.failed;
  }
}

/** Maps an error thrown by the SQS client to a WorkQueueError with its cause. */
function mapSqsError(error: unknown, context: { operation: 'SendMessageBatch' | 'GetQueueAttributes' | 'ChangeMessageVisibility'; sent: number; failed: number; queueUrl: string }): WorkQueueError {
  const name = failureName(error);
  const kind = classifyAwsError(error, SQS_ERROR_CODES);
  const retryable = isRetryableKind(kind);
  const detail = error instanceof Error && error.message !== '' && error.message !== name ? `: ${error.message}` : '';
  const counts = context.operation === 'SendMessageBatch' ? `; ${context.sent} sent, ${context.failed} not sent` : '';
  return new WorkQueueError(
    `SQS ${context.operation} on ${context.queueUrl} failed with ${name} (${retryable ? 'retryable' : 'not retryable'})${detail}${counts}`,
    { code: name, sent: context.sent, failed: context.failed, retryable, kind, cause: error },
  );
}

interface Prepared {
  readonly entry: Omit<SendMessageBatchRequestEntry, 'Id'>;
  readonly bytes: number;
}

export class SqsWorkQueue implements WorkQueue {
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxBatchBytes: number;

  constructor(
    private readonly client: SQSClient,
    readonly queueUrl: string,
    options: SqsWorkQueueOptions = {},
  ) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.maxBatchBytes = Math.min(options.maxBatchBytes ?? MAX_BATCH_BYTES, MAX_BATCH_BYTES);
  }

  async send(messages: readonly WorkMessage[], options: SendOptions = {}): Promise<SendResult> {
    const { unique, duplicates } = dedupeMessages(messages);
    if (unique.length === 0) return { sent: 0, duplicates };
    const batches = chunk(unique.map((message) => this.prepare(message, options)), this.maxBatchBytes);

    const progress = { sent: 0 };
    const failures: BatchResultErrorEntry[] = [];
    let thrown: unknown;
    // After an SDK error no batch starts; those in flight finish, so `sent` is exact.
    await forEachLimit(batches, this.concurrency, async (batch) => {
      if (thrown !== undefined) return;
      try {
        failures.push(...(await this.sendBatch(batch, progress)));
      } catch (error) {
        thrown ??= error;
      }
    });

    const sent = progress.sent;
    if (thrown !== undefined) {
      throw mapSqsError(thrown, { operation: 'SendMessageBatch', sent, failed: unique.length - sent, queueUrl: this.queueUrl });
    }
    const first = failures[0];
    if (first) {
      const retryable = failures.some((failure) => failure.SenderFault === false);
      throw new WorkQueueError(
        `SQS rejected ${failures.length} of ${unique.length} messages to ${this.queueUrl} ` +
          `(first: ${first.Code}${first.Message ? `: ${first.Message}` : ''}); ${sent} sent`,
        { code: first.Code ?? 'Unknown', sent, failed: failures.length, retryable },
      );
    }
    return { sent, duplicates };
  }

  async backlog(): Promise<number> {
    try {
      const out = await this.client.send(
        new GetQueueAttributesCommand({
          QueueUrl: this.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const count = (name: string) => Number(out.Attributes?.[name as keyof typeof out.Attributes] ?? 0) || 0;
      return count('ApproximateNumberOfMessages') + count('ApproximateNumberOfMessagesNotVisible') + count('ApproximateNumberOfMessagesDelayed');
    } catch (error) {
      throw mapSqsError(error, { operation: 'GetQueueAttributes', sent: 0, failed: 0, queueUrl: this.queueUrl });
    }
  }

  async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    try {
      await this.client.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: Math.max(0, Math.min(43_200, Math.round(seconds))) }),
      );
    } catch (error) {
      throw mapSqsError(error, { operation: 'ChangeMessageVisibility', sent: 0, failed: 0, queueUrl: this.queueUrl });
    }
  }

  private prepare(message: WorkMessage, options: SendOptions): Prepared {
    const body = serializeWorkMessage(message);
    const { delaySeconds, correlationId } = options;
    const entry: Omit<SendMessageBatchRequestEntry, 'Id'> = {
      MessageBody: body,
      ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}),
      ...(correlationId ? { MessageAttributes: { [CORRELATION_ATTRIBUTE]: { DataType: 'String', StringValue: correlationId } } } : {}),
    };
    // An attribute's name, type and value count towards the size limit with the body (Amazon SQS
    // API Reference, MessageAttributeValue).
    const bytes = Buffer.byteLength(body) + (correlationId ? Buffer.byteLength(CORRELATION_ATTRIBUTE) + Buffer.byteLength('String') + Buffer.byteLength(correlationId) : 0);
    if (bytes > this.maxBatchBytes) {
      throw new WorkQueueError(`route message of ${bytes} bytes exceeds the batch limit of ${this.maxBatchBytes}`, {
        code: 'MessageTooLong',
        sent: 0,
        failed: 1,
        retryable: false,
      });
    }
    return { entry, bytes };
  }

  /**
   * Sends one batch, resending entries that failed on the service side (SenderFault false) until
   * `maxAttempts`; returns the entries that never made it. Adds accepted entries to `progress.sent`
   * as they are accepted, so an SDK error thrown later still leaves an exact count.
   */
  private async sendBatch(batch: readonly Prepared[], progress: { sent: number }): Promise<BatchResultErrorEntry[]> {
    let pending: SendMessageBatchRequestEntry[] = batch.map((prepared, index) => ({ ...prepared.entry, Id: `m${index}` }));
    const terminal: BatchResultErrorEntry[] = [];
    for (let attempt = 1; ; attempt++) {
      const response = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: pending }));
      const pendingIds = new Set(pending.map((entry) => entry.Id));
      const failed = (response.Failed ?? []).filter((failure) => pendingIds.has(failure.Id));
      progress.sent += pending.length - failed.length;
      // A sender fault (a bad entry) fails the same way again: it is reported, not resent.
      terminal.push(...failed.filter((failure) => failure.SenderFault !== false));
      const resendable = failed.filter((failure) => failure.SenderFault === false);
      if (resendable.length === 0) return terminal;
      if (attempt >= this.maxAttempts) return [...terminal, ...resendable];
      await this.sleep(this.baseDelayMs * 2 ** (attempt - 1));
      const ids = new Set(resendable.map((failure) => failure.Id));
      pending = pending.filter((entry) => ids.has(entry.Id));
    }
  }
}

/** Cuts entries into batches of at most MAX_BATCH_ENTRIES entries and maxBytes bytes. */
function chunk(entries: readonly Prepared[], maxBytes: number): Prepared[][] {
  const batches: Prepared[][] = [];
  let current: Prepared[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (current.length === MAX_BATCH_ENTRIES || (current.length > 0 && bytes + entry.bytes > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
