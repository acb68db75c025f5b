/**
 * The WorkQueue port: where the reconcile function and the node webhook hand route work to the
 * worker. Adapters: `SqsWorkQueue` (lib/aws/sqs-work-queue.ts), `MemoryWorkQueue` (below).
 */
import { messageKey, type RouteMessage } from './route-message.ts';

export interface SendResult {
  /** Messages accepted by the queue (after deduplication). */
  readonly sent: number;
  /** Messages dropped because an earlier message in the same call had the same `messageKey`. */
  readonly duplicates: number;
}

export interface SendOptions {
  /**
   * Hold the messages back this many seconds (0..900) before the worker may see them (SQS
   * SendMessageBatch `DelaySeconds`). The webhook uses it so the worker reads a node the API server
   * has had time to store.
   */
  readonly delaySeconds?: number;
  /**
   * The id that ties the messages to what sent them (an admission's uid, a reconcile run's request
   * id), carried beside the body, never in it: a worker of any release reads the body as before.
   */
  readonly correlationId?: string;
}

/** The SQS message attribute that carries `SendOptions.correlationId`. */
export const CORRELATION_ATTRIBUTE = 'correlationId';

export interface WorkQueue {
  send(messages: readonly RouteMessage[], options?: SendOptions): Promise<SendResult>;
  /**
   * Makes a received message visible again after `seconds` instead of after the queue's visibility
   * timeout, so a retryable failure is retried soon (with backoff) rather than minutes later.
   */
  retryAfter?(receiptHandle: string, seconds: number): Promise<void>;
  /** Messages waiting, in flight or delayed (approximate, as SQS counts them). */
  backlog?(): Promise<number>;
}

/** Seconds before a retryable failure's next delivery: 2, 4, 8, ... capped at 60 (and the queue's own timeout). */
export const retryBackoffSeconds = (receiveCount: number): number => Math.min(60, 2 ** Math.max(1, Math.floor(receiveCount)));

/**
 * Collapses messages with the same `messageKey`, keeping the first position. When a create and a
 * replace name the same work, the replace wins: a create would leave a wrong route in place
 * (`RouteAlreadyExists` is success), a replace converges either way.
 */
export function dedupeMessages(messages: readonly RouteMessage[]): { unique: RouteMessage[]; duplicates: number } {
  const byKey = new Map<string, RouteMessage>();
  let duplicates = 0;
  for (const message of messages) {
    const key = messageKey(message);
    const seen = byKey.get(key);
    if (seen === undefined) {
      byKey.set(key, message);
      continue;
    }
    duplicates += 1;
    if (seen.kind === 'create' && message.kind === 'replace') byKey.set(key, message);
  }
  return { unique: [...byKey.values()], duplicates };
}

/** The queue, every send of it tagged with `correlationId`. */
export function correlatedQueue(queue: WorkQueue, correlationId: string): WorkQueue {
  return {
    send: (messages, options) => queue.send(messages, { ...options, correlationId }),
    ...(queue.retryAfter ? { retryAfter: queue.retryAfter.bind(queue) } : {}),
    ...(queue.backlog ? { backlog: queue.backlog.bind(queue) } : {}),
  };
}

/** In-memory WorkQueue for tests and the CLI: records what was sent. */
export class MemoryWorkQueue implements WorkQueue {
  readonly sent: RouteMessage[] = [];
  async send(messages: readonly RouteMessage[]): Promise<SendResult> {
    const { unique, duplicates } = dedupeMessages(messages);
    this.sent.push(...unique);
    return { sent: unique.length, duplicates };
  }
}
