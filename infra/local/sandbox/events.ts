/** The Lambda events the sandbox hands its handlers, and what it reads back from them. */
import type { ScheduledEvent, SQSBatchResponse } from 'aws-lambda';

const REGION = 'us-east-1';

/** One EventBridge schedule delivery, as the reconcile function receives it. */
export function scheduledEvent(n: number): ScheduledEvent {
  return {
    version: '0',
    id: `local-tick-${n}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:000000000000:rule/podroute-reconcile`],
    detail: {},
  };
}

export function isBatchResponse(value: unknown): value is SQSBatchResponse {
  return typeof value === 'object' && value !== null && 'batchItemFailures' in value;
}
