/**
 * How podroute's EC2 client retries. EC2 throttles each API with its own token bucket (CreateRoute:
 * 50 tokens, 5 a second); many workers at once empty it in a moment. The SDK's adaptive retry mode
 * adds a client-side rate limiter that backs off when EC2 throttles and ramps up again after, so a
 * worker waits for tokens inside its invocation instead of failing the message back to the queue
 * (where it would wait out the visibility timeout).
 */
import type { EC2ClientConfig } from '@aws-sdk/client-ec2';

export const EC2_MAX_ATTEMPTS = 8;

export function ec2ClientConfig(config: EC2ClientConfig = {}): EC2ClientConfig {
  return { retryMode: 'adaptive', maxAttempts: EC2_MAX_ATTEMPTS, ...config };
}
