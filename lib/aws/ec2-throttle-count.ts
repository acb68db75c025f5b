/**
 * Counts EC2 throttling: every attempt EC2 answered with a throttling code (RequestLimitExceeded,
 * ...), also those the SDK's retry then recovered from, so the dashboard shows the API budget
 * running short before calls start to fail. A middleware placed just inside the SDK's retry
 * middleware (smithy `retryMiddleware`, step finalizeRequest) sees each attempt's error before the
 * retry decides; it only observes and rethrows.
 */
import type { EC2Client, ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/client-ec2';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import { classifyEc2Error } from './ec2-errors.ts';

const THROTTLE_COUNTER_NAME = 'podrouteEc2ThrottleCounter';

type Middleware = FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes>;

export function countEc2Throttles(client: EC2Client, onThrottle: (action: string) => void): EC2Client {
  const counter: Middleware = (next, context) => async (args) => {
    try {
      return await next(args);
    } catch (error) {
      if (classifyEc2Error(error) === 'throttled') onThrottle(typeof context.commandName === 'string' ? context.commandName : 'unknown');
      throw error;
    }
  };
  client.middlewareStack.addRelativeTo(counter, { relation: 'after', toMiddleware: 'retryMiddleware', name: THROTTLE_COUNTER_NAME, override: true });
  return client;
}
