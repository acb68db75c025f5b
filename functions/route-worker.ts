/**
 * route-worker: the SQS-triggered Lambda. Applies each route message idempotently and reports
 * partial batch failures, so only the messages that failed retryably come back
 * (lib/usecases/route-worker.ts decides which).
 */
import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { handleRouteMessage } from '../lib/usecases/route-worker.ts';
import type { Logger, Telemetry } from '../lib/log.ts';
import { retryBackoffSeconds } from '../lib/messages/work-queue.ts';
import { telemetryFromEnv, telemetryMiddlewares } from './telemetry.ts';
import { once, wiringFromEnv } from './wiring.ts';
import type { Wiring } from './wiring.ts';

/** The per-record outcome the middleware turns into `batchItemFailures`. */
export class RetryLater extends Error {
  override name = 'RetryLater';
}

export function createRouteWorkerHandler(getWiring: () => Promise<Wiring>, telemetry?: Telemetry) {
  let log: Logger | undefined;
  // Route targets stay known for the container's life (an instance's primary interface is fixed).
  const targets = new Map<string, { primaryEniId: string; at: number }>();
  return middy<SQSEvent, unknown>()
    .use(telemetryMiddlewares(telemetry))
    .use(
      sqsPartialBatchFailure({
        // Only the id: a record's body is never logged whole.
        logger: (_reason: unknown, record: SQSRecord) => log?.log('warn', 'record.retry', { messageId: record.messageId }),
      }),
    )
    .handler(async (event) => {
      const wiring = await getWiring();
      log = wiring.log;
      const records = Array.isArray(event.Records) ? event.Records : [];
      return Promise.allSettled(
        records.map(async (record) => {
          const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
          const result = await handleRouteMessage(
            record.body,
            { receiveCount: Number.isFinite(receiveCount) ? receiveCount : 1, maxReceiveCount: wiring.config.maxReceiveCount },
            {
              clusterCidrs: wiring.config.clusterCidrs,
              routeTables: wiring.routeTables,
              nodes: wiring.nodes,
              nodeSelector: wiring.config.nodeSelector,
              cidrSets: wiring.cidrSets,
              log: wiring.log,
              now: wiring.now,
              targets,
            },
          );
          if (result.outcome === 'retry') {
            // Come back soon, with backoff, rather than after the queue's whole visibility timeout.
            if (result.status !== 'dead-letter' && wiring.queue.retryAfter) {
              await wiring.queue
                .retryAfter(record.receiptHandle, retryBackoffSeconds(receiveCount))
                .catch((error: unknown) => wiring.log.log('warn', 'retry-after.failed', { messageId: record.messageId, error }));
            }
            throw new RetryLater(result.status);
          }
          return result.status;
        }),
      );
    });
}

const telemetry = telemetryFromEnv('route-worker', process.env);
export const handler = createRouteWorkerHandler(once(() => wiringFromEnv(process.env, { log: telemetry.log })), telemetry);
