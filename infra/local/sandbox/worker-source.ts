/**
 * The route worker's SQS event source, as Lambda runs it: batches of 10, `maximumConcurrency`
 * invocations at most, a function timeout of a sixth of the visibility timeout, and the queue
 * depths the sandbox watches while it settles.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import type { Logger } from '../../../lib/log.ts';
import { startSqsEventSource } from '../queue/sqs-event-source.ts';
import type { SqsEventSource } from '../queue/sqs-event-source.ts';
import { isBatchResponse } from './events.ts';
import type { QueueDepth } from './types.ts';

export interface WorkerSourceOptions {
  /** The event source's client (Lambda's pollers: receives, deletes, redrives). */
  sqsClient: SQSClient;
  /** The sandbox's client for queue depths (not a request production makes). */
  observer: SQSClient;
  /** Moves messages to the DLQ, as the queue's RedrivePolicy does on AWS (not the event source's requests). */
  redriveClient: SQSClient;
  queueUrl: string;
  dlqUrl: string;
  maximumConcurrency: number;
  maxReceiveCount: number;
  visibilityTimeoutSeconds: number;
  handler: (event: SQSEvent, context: Context) => Promise<unknown>;
  log: Logger;
}

export interface WorkerSource {
  eventSource: SqsEventSource;
  depth(): Promise<QueueDepth>;
  dlqDepth(): Promise<number>;
}

const DEPTHS = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;

export async function startWorkerSource(options: WorkerSourceOptions): Promise<WorkerSource> {
  const { sqsClient, observer, log } = options;
  let running = 0;
  const eventSource = await startSqsEventSource({
    client: sqsClient,
    queueUrl: options.queueUrl,
    dlqUrl: options.dlqUrl,
    redriveClient: options.redriveClient,
    batchSize: 10,
    maximumConcurrency: options.maximumConcurrency,
    maxReceiveCount: options.maxReceiveCount,
    waitTimeSeconds: 1,
    functionName: 'podroute-route-worker',
    // Production: 30 s, a sixth of the 180 s visibility timeout; scaled alike.
    functionTimeoutSeconds: Math.max(1, Math.round(options.visibilityTimeoutSeconds / 6)),
    handler: async (event: SQSEvent, context: Context) => {
      running += 1;
      try {
        const result: unknown = await options.handler(event, context);
        return isBatchResponse(result) ? result : undefined;
      } finally {
        running -= 1;
      }
    },
    onError: (error) => log.log('warn', 'sandbox.event-source-error', { error }),
    // A whole batch that failed (a crash or a timeout, as Lambda reports in the function's log).
    onBatch: (report) => {
      if (report.outcome === 'failed') log.log('error', 'sandbox.batch-failed', { error: report.error, messageIds: report.messageIds });
    },
  });

  const depth = async (): Promise<QueueDepth> => {
    const out = await observer.send(new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: [...DEPTHS] }));
    const attr = (name: (typeof DEPTHS)[number]) => Number(out.Attributes?.[name] ?? '0');
    return { visible: attr(DEPTHS[0]), inFlight: attr(DEPTHS[1]), delayed: attr(DEPTHS[2]), running };
  };
  const dlqDepth = async (): Promise<number> => {
    const out = await observer.send(new GetQueueAttributesCommand({ QueueUrl: options.dlqUrl, AttributeNames: [...DEPTHS] }));
    return Object.values(out.Attributes ?? {}).reduce((sum, value) => sum + Number(value), 0);
  };
  return { eventSource, depth, dlqDepth };
}
