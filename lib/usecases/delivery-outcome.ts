/**
 * The delivery outcome of a failed route-worker message: the typed errors the worker's use cases
 * throw when a message should come back or be let go, and `outcomeOf`, the one pure decider of
 * what becomes of the message. The use cases never read the receive count; only `outcomeOf` does.
 */
import { PodrouteError } from '../errors.ts';
import { MessageRefusedError } from './route-worker-claims.ts';

export interface Delivery {
  /** How often the queue has delivered this message, this time included (SQS `ApproximateReceiveCount`). */
  receiveCount: number;
  /** Deliveries after which the queue moves the message to the dead-letter queue (redrive `maxReceiveCount`). */
  maxReceiveCount: number;
}

/**
 * A `sync-node` whose node is not stored (yet): admission runs before the Node is persisted
 * (Kubernetes docs, "Dynamic Admission Control"), so a first receive is retried shortly and a later
 * one finds the node gone. Retryable; `outcomeOf` decides which, from the receive.
 */
export class NodeNotStoredError extends PodrouteError {
  override name = 'NodeNotStoredError';
  constructor(
    readonly node: string,
    message = `node ${node} is not stored yet`,
  ) {
    super(message, { retryable: true });
  }
}

/**
 * A `node-left` check whose node is still being deleted (`metadata.deletionTimestamp` set, a
 * finalizer pending). Retryable: the check comes back; waiting on a finalizer is no failure, so
 * when the receives run low it is deferred to reconcile's reclaim of vanished nodes' leases.
 */
export class NodeStillDeletingError extends PodrouteError {
  override name = 'NodeStillDeletingError';
  constructor(readonly node: string) {
    super(`node ${node} is still being deleted; checking again later`, { retryable: true });
  }
}

/** A record still running when the invocation's time budget ran out (functions/route-worker.ts). */
export class DeadlineExceededError extends PodrouteError {
  override name = 'DeadlineExceededError';
  constructor(readonly budgetMs: number) {
    super(`still running ${budgetMs} ms into the invocation`, { retryable: true });
  }
}

/**
 * What becomes of a failed message. Acknowledged: `handed-back` (retryable, but its receives are
 * nearly used up: the next reconcile re-plans it), `failed` (retrying cannot help: reported),
 * `refused` (it contradicts the authority: nothing done, no node told), `gone` (its node was never
 * stored: stale), `deferred` (its node is still being deleted: left to reconcile's reclaim).
 * Not acknowledged: `retry` (the queue delivers it again, with backoff).
 */
export type FailureOutcome = 'retry' | 'handed-back' | 'failed' | 'refused' | 'gone' | 'deferred';

/**
 * The one decider of a failed message's fate, from the typed failure and which receive this is.
 * The handler asks it too for a record still running at the deadline.
 *
 * Thresholds, from what SQS counts. `ApproximateReceiveCount` counts every receive of the message,
 * this one included, and a message received more than the redrive policy's `maxReceiveCount` times
 * is moved to the dead-letter queue (Amazon SQS Developer Guide, "Using dead-letter queues"). An
 * invocation that crashes or times out answers nothing, yet its receive is counted: its messages
 * come back after the visibility timeout (AWS Lambda Developer Guide, "Handling errors for an SQS
 * event source in Lambda").
 * - Retryable failures are retried until the last receive but one (`maxReceiveCount - 1`), then
 *   handed back: the last receive is kept as the margin for a crash, so a message reaches the
 *   dead-letter queue only when its invocations crash or time out again and again.
 * - A node still being deleted is retried the same way and deferred at that same receive.
 * - A node not stored is waited for on the first receive only: the API server stores a node right
 *   after its admission answers, far sooner than a redelivery's backoff (at least 2 s), so at a
 *   later receive the create was refused and the node will never appear. On that first receive it
 *   is a retryable failure like any other (handed back when `maxReceiveCount` is 1 or 2).
 * - A refused message, and any failure that is not a retryable PodrouteError, is never retried.
 */
export function outcomeOf(error: unknown, delivery: Delivery): FailureOutcome {
  if (error instanceof MessageRefusedError) return 'refused';
  if (error instanceof NodeNotStoredError && !awaitsStoredNode(delivery)) return 'gone';
  if (!(error instanceof PodrouteError && error.retryable)) return 'failed';
  if (delivery.receiveCount < delivery.maxReceiveCount - 1) return 'retry';
  return error instanceof NodeStillDeletingError ? 'deferred' : 'handed-back';
}

/**
 * Whether a node not stored yet is still waited for at this delivery (the first receive only, as
 * `outcomeOf` says), so a `sync-node` that carries what its admission knew routes from that now.
 * Without a delivery (a direct call, not a queue's) it is waited for.
 */
export function awaitsStoredNode(delivery: Delivery | undefined): boolean {
  return delivery === undefined || delivery.receiveCount <= 1;
}
