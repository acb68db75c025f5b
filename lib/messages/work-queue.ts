/**
 * What the WorkQueue port (lib/usecases/ports.ts) shares: deduplication by `messageKey`, retry
 * backoff, and an in-memory queue. Adapters: `SqsWorkQueue` (lib/aws/sqs-work-queue.ts),
 * `MemoryWorkQueue` (below).
 */
import { messageKey, type WorkMessage } from './work-message.ts';
import type { SendResult, WorkQueue } from '../usecases/ports.ts';

/** The SQS message attribute that carries `SendOptions.correlationId`. */
export const CORRELATION_ATTRIBUTE = 'correlationId';

/** The work queue's visibility timeout (serverless.yml WorkQueue; test/infra/serverless-template.test.ts holds them equal). */
export const WORK_QUEUE_VISIBILITY_SECONDS = 180;
/** Deliveries before the work queue moves a message to its DLQ (serverless.yml RedrivePolicy; config MAX_RECEIVE_COUNT's default). */
export const DEFAULT_MAX_RECEIVE_COUNT = 3;
/** The route worker's function timeout (serverless.yml routeWorker; held equal by the same test). */
export const WORKER_TIMEOUT_SECONDS = 30;

/**
 * Pure: how long after its first receive a message may still be running: `maxReceiveCount`
 * deliveries, the next one a visibility timeout after the last at most (retryBackoffSeconds is
 * shorter), then the last one's run of one function timeout at most. Amazon SQS Developer Guide:
 * "Amazon SQS visibility timeout" (a received message not deleted is visible again once its
 * timeout ends) and "Using dead-letter queues" (after `maxReceiveCount` receives it is moved).
 */
export const messageLifetimeMs = (maxReceiveCount: number): number => (maxReceiveCount * WORK_QUEUE_VISIBILITY_SECONDS + WORKER_TIMEOUT_SECONDS) * 1000;

/** Seconds before a retryable failure's next delivery: 2, 4, 8, ... capped at 60 (and the queue's own timeout). */
export const retryBackoffSeconds = (receiveCount: number): number => Math.min(60, 2 ** Math.max(1, Math.floor(receiveCount)));

/**
 * Collapses messages with the same `messageKey`, keeping the first position. When a create and a
 * replace name the same work, the replace wins: a create would leave a wrong route in place
 * (`RouteAlreadyExists` is success), a replace converges either way.
 */
export function dedupeMessages(messages: readonly WorkMessage[]): { unique: WorkMessage[]; duplicates: number } {
  const byKey = new Map<string, WorkMessage>();
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
  readonly sent: WorkMessage[] = [];
  async send(messages: readonly WorkMessage[]): Promise<SendResult> {
    const { unique, duplicates } = dedupeMessages(messages);
    this.sent.push(...unique);
    return { sent: unique.length, duplicates };
  }
}
