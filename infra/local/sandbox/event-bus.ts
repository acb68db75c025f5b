/**
 * The sandbox's EventBridge bus: the EC2 emulator's events (instance state changes, route writes
 * via CloudTrail) go to the cloud-events handler, one at a time in the order sent, as the two rules
 * of serverless.yml would route them (only the states and event names the rules' patterns pass).
 * Tests and scenarios may also put events of their own (a forged or a stale one) on it.
 */
import type { Context, EventBridgeEvent } from 'aws-lambda';
import type { CloudEventResult } from '../../../lib/usecases/cloud-events.ts';
import { LEAVING_STATES, ROUTE_WRITES } from '../../../lib/events/cloud-event.ts';
import { lambdaContext } from '../lambda-context.ts';

export interface Delivered {
  /** When the event was put on the bus and when the handler answered (performance.now()). */
  putAt: number;
  doneAt: number;
  event: Record<string, unknown>;
  result: CloudEventResult | { status: 'failed'; error: string };
}

export interface EventBus {
  /** Puts an event on the bus; resolves with what the handler made of it, or null when no rule matched. */
  put(event: Record<string, unknown>): Promise<Delivered | null>;
  /** Every delivery so far. */
  readonly delivered: readonly Delivered[];
  /** Events put and not answered yet. */
  pending(): number;
}

type Handler = (event: EventBridgeEvent<string, unknown>, context: Context) => Promise<CloudEventResult>;

/** What the rules' patterns pass (serverless.yml, cloudEvents events). */
function matches(event: Record<string, unknown>): boolean {
  const detail = typeof event.detail === 'object' && event.detail !== null ? (event.detail as Record<string, unknown>) : {};
  if (event.source !== 'aws.ec2') return false;
  if (event['detail-type'] === 'EC2 Instance State-change Notification') return (LEAVING_STATES as readonly unknown[]).includes(detail.state);
  if (event['detail-type'] === 'AWS API Call via CloudTrail') return detail.eventSource === 'ec2.amazonaws.com' && (ROUTE_WRITES as readonly unknown[]).includes(detail.eventName);
  return false;
}

export function createEventBus(handler: Handler, functionName: string): EventBus {
  const delivered: Delivered[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  let pending = 0;
  return {
    delivered,
    pending: () => pending,
    put(event) {
      if (!matches(event)) return Promise.resolve(null);
      const putAt = performance.now();
      pending += 1;
      const run = chain.then(async (): Promise<Delivered> => {
        let result: Delivered['result'];
        try {
          result = await handler(event as unknown as EventBridgeEvent<string, unknown>, lambdaContext(functionName));
        } catch (error) {
          result = { status: 'failed', error: error instanceof Error ? error.message : String(error) };
        }
        const done = { putAt, doneAt: performance.now(), event, result };
        delivered.push(done);
        pending -= 1;
        return done;
      });
      chain = run;
      return run;
    },
  };
}
