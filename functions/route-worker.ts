/**
 * route-worker: the SQS-triggered Lambda. Each record settles on its own (lib/usecases/route-worker.ts
 * decides how) and the handler reports partial batch failures, answering before the function times
 * out: a timeout would fail the whole batch and count a receive on every record. Records still
 * running when the budget ends are answered as failures of their own; redelivery converges. Each
 * record's lines carry the correlation id its sender attached (lib/messages/work-queue.ts). In
 * observe mode every record is acknowledged unread: the reconcile that follows plans its work again.
 */
import { setMaxListeners } from 'node:events';
import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { RouteTableView, handleWorkMessage } from '../lib/usecases/route-worker.ts';
import type { RouteWorkerDeps, WorkResult } from '../lib/usecases/route-worker.ts';
import { type Delivery, DeadlineExceededError, outcomeOf } from '../lib/usecases/delivery-outcome.ts';
import { PodrouteError } from '../lib/errors.ts';
import type { Telemetry } from '../lib/log.ts';
import { CORRELATION_ATTRIBUTE, retryBackoffSeconds } from '../lib/messages/work-queue.ts';
import { withFields } from '../lib/log.ts';
import { withAbortSignal } from '../lib/util/abort-scope.ts';
import { telemetryFromEnv, telemetryMiddlewares, wiringOptions } from './telemetry.ts';
import { once, wiringFromEnv } from './wiring.ts';
import type { Wiring } from './wiring.ts';

/**
 * The per-record outcome the middleware turns into `batchItemFailures`: the queue delivers it again.
 * Exported for test/errors.test.ts (the error base).
 */
export class RetryLater extends PodrouteError {
  override name = 'RetryLater';
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

/** Time kept back from the function timeout to answer: a third of what is left, at most 5 s. */
const reserveMs = (remainingMs: number): number => Math.min(5000, remainingMs / 3);

type Settled = PromiseSettledResult<string>;
type Targets = NonNullable<RouteWorkerDeps['targets']>;

export function createRouteWorkerHandler(getWiring: () => Promise<Wiring>, telemetry?: Telemetry) {
  // Route targets stay known for the container's life (an instance's primary interface is fixed).
  const targets: Targets = new Map();
  return middy<SQSEvent, unknown, Error, Context>()
    .use(telemetryMiddlewares(telemetry))
    .use(
      // The worker logs each failed record itself (with its outcome); the middleware only reports.
      sqsPartialBatchFailure({ logger: () => undefined }),
    )
    .handler(async (event, context) => {
      const wiring = await getWiring();
      const records = Array.isArray(event.Records) ? event.Records : [];
      const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 30_000;
      return runBatch(records, wiring, targets, Math.max(0, remaining - reserveMs(remaining)));
    });
}

/**
 * Runs every record of the batch at once until they all settle or `budgetMs` runs out, then aborts
 * what still runs and answers each record on its own.
 */
async function runBatch(records: readonly SQSRecord[], wiring: Wiring, targets: Targets, budgetMs: number): Promise<Settled[]> {
  // One listing of the route tables for the whole batch, taken when a message first needs it.
  const view = new RouteTableView(wiring.routeTables);
  const settled: Array<Settled | undefined> = records.map(() => undefined);
  // Aborted at the deadline: every EC2, DynamoDB and Kubernetes call of the batch still under
  // way (or started later) rejects at once, and no SDK retry wakes up after the invocation.
  const controller = new AbortController();
  // Every call under way listens on it (the SDK removes its listener when the call ends), and
  // a batch runs many at once: no listener cap on a signal that lives one invocation.
  setMaxListeners(0, controller.signal);
  const deps = routeWorkerDeps(wiring, targets, view, controller.signal);
  const work = records.map((record, index) => withAbortSignal(controller.signal, () => runRecord(record, wiring, deps, settled, index)));

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, budgetMs);
  });
  await Promise.race([Promise.all(work), deadline]);
  clearTimeout(timer);
  const cut = new DeadlineExceededError(budgetMs);
  if (wiring.abortAtDeadline !== false) controller.abort(cut);
  records.forEach((record, index) => {
    if (settled[index] === undefined) settled[index] = answerAtDeadline(record, wiring, cut);
  });
  return settled.map((answer): Settled => answer ?? { status: 'rejected', reason: new RetryLater('unanswered') });
}

function routeWorkerDeps(wiring: Wiring, targets: Targets, view: RouteTableView, signal: AbortSignal): RouteWorkerDeps {
  return {
    clusterCidrs: wiring.config.clusterCidrs,
    routeTables: wiring.routeTables,
    routeTargets: wiring.routeTargets,
    nodes: wiring.nodes,
    nodeSelector: wiring.config.nodeSelector,
    migrationMaskSizes: wiring.config.migrationMaskSizes,
    cidrSets: wiring.cidrSets,
    leaseGraceSeconds: wiring.config.leaseGraceSeconds,
    log: wiring.log,
    now: wiring.now,
    targets,
    view,
    plane: wiring.plane,
    signal,
    ...(wiring.claimCensus ? { claimCensus: wiring.claimCensus } : {}),
  };
}

/** The record's correlation id (a message attribute; absent on messages of older senders). */
function correlationOf(record: SQSRecord): string | undefined {
  const value = record.messageAttributes?.[CORRELATION_ATTRIBUTE]?.stringValue;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Handles one record and answers it in `settled[index]`, unless the deadline answered it first. */
async function runRecord(record: SQSRecord, wiring: Wiring, batchDeps: RouteWorkerDeps, settled: Array<Settled | undefined>, index: number): Promise<void> {
  const delivery = deliveryOf(record, wiring);
  const correlationId = correlationOf(record);
  const log = correlationId === undefined ? wiring.log : withFields(wiring.log, { correlationId });
  if (wiring.observe === true) {
    log.log('info', 'message.observed', { messageId: record.messageId });
    settled[index] = { status: 'fulfilled', value: 'ignored:observe' };
    return;
  }
  const deps = { ...batchDeps, log };
  let result: WorkResult;
  try {
    result = await handleWorkMessage(record.body, delivery, deps);
  } catch (error) {
    // handleWorkMessage never throws; should it, this record alone fails, as `outcomeOf` decides.
    const outcome = outcomeOf(error, delivery);
    log.log('error', 'message.failed', { messageId: record.messageId, error, outcome, receiveCount: delivery.receiveCount });
    log.metric(outcome === 'retry' ? 'MessagesRetried' : outcome === 'handed-back' ? 'MessagesHandedBack' : 'MessagesFailed', 1);
    result = outcome === 'retry' ? { outcome: 'retry', status: 'crashed' } : { outcome: 'ack', status: `crashed:${outcome}` };
  }
  if (settled[index] !== undefined) return; // answered already, at the deadline
  if (result.outcome === 'ack') {
    settled[index] = { status: 'fulfilled', value: result.status };
  } else {
    settled[index] = { status: 'rejected', reason: new RetryLater(result.status) };
    await retryLater(record, wiring);
  }
}

/**
 * The answer for a record still running at the deadline, as `outcomeOf` decides it for the cut:
 * retried, or handed back to reconcile when its receives are nearly used up.
 */
function answerAtDeadline(record: SQSRecord, wiring: Wiring, cut: DeadlineExceededError): Settled {
  const delivery = deliveryOf(record, wiring);
  const outcome = outcomeOf(cut, delivery);
  const correlationId = correlationOf(record);
  wiring.log.log(outcome === 'retry' ? 'warn' : 'error', 'message.failed', {
    ...(correlationId === undefined ? {} : { correlationId }),
    messageId: record.messageId,
    error: cut,
    retryable: true,
    outcome,
    receiveCount: delivery.receiveCount,
  });
  wiring.log.metric(outcome === 'retry' ? 'MessagesRetried' : 'MessagesHandedBack', 1);
  // No visibility change here: the answer must not wait on the queue. The record comes back
  // after the visibility timeout (six function timeouts), so its running work has ended by then.
  return outcome === 'retry' ? { status: 'rejected', reason: new RetryLater('deadline') } : { status: 'fulfilled', value: 'handed-back' };
}

function deliveryOf(record: SQSRecord, wiring: Wiring): Delivery {
  const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
  return { receiveCount: Number.isFinite(receiveCount) && receiveCount >= 1 ? receiveCount : 1, maxReceiveCount: wiring.config.maxReceiveCount };
}

/**
 * Comes back soon, with backoff, rather than after the queue's whole visibility timeout. The backoff
 * is production's, divided by the wiring's time scale (the sandbox runs its clocks faster).
 */
async function retryLater(record: SQSRecord, wiring: Wiring): Promise<void> {
  if (!wiring.queue.retryAfter) return;
  const seconds = retryBackoffSeconds(deliveryOf(record, wiring).receiveCount) / (wiring.timeScale ?? 1);
  await wiring.queue
    .retryAfter(record.receiptHandle, seconds)
    .catch((error: unknown) => wiring.log.log('warn', 'retry-after.failed', { messageId: record.messageId, error }));
}

const telemetry = telemetryFromEnv('route-worker', process.env);
export const handler = createRouteWorkerHandler(once(() => wiringFromEnv(process.env, wiringOptions(telemetry))), telemetry);
