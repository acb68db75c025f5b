/**
 * The one classification of AWS SDK failures that every AWS adapter (EC2, DynamoDB, SQS, Secrets
 * Manager, SSM) builds on: whether the same request can succeed later. It asks the SDK's own checks
 * (`@smithy/core/retry`: `isThrottlingError`, `isTransientError`, `isServerError`, the ones its
 * retry strategies use) instead of keeping code lists here, so a connection reset, a socket timeout
 * or a 5xx that is still failing after the SDK's own retries stays retryable, whichever client
 * threw it. Adapters add only their service's special codes on top (EC2's `RouteAlreadyExists`...).
 * Never reads message text.
 */
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import type { SdkError } from '@smithy/types';

/**
 * What an AWS failure means:
 * - `throttled`: the service asked to slow down (429, `RequestLimitExceeded`, `ThrottlingException`...);
 * - `transient`: no answer (reset, refused, timeout, DNS) or a 500/502/503/504; the SDK retries these;
 * - `server`: another 5xx;
 * - `aborted`: podroute aborted the call itself (the invocation's deadline: `AbortError`);
 * - `denied`: the caller lacks the permission (IAM, KMS key policy); retrying cannot help;
 * - `rejected`: any other answer of the service (bad input, not found, a quota).
 */
export type AwsFailureKind = 'throttled' | 'transient' | 'server' | 'aborted' | 'denied' | 'rejected';

/**
 * Codes of a refused permission. AWS IAM User Guide, "Troubleshoot access denied error messages":
 * most services answer `AccessDenied` or `AccessDeniedException`; EC2 answers
 * `UnauthorizedOperation` (EC2 API Reference, "Error codes"); SQS's JSON protocol names
 * `KmsAccessDenied` for a key policy that refuses it (SQS API Reference, SendMessageBatch errors).
 */
const DENIED_CODES: ReadonlySet<string> = new Set(['AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation', 'KmsAccessDenied', 'KMSAccessDeniedException']);

interface ErrorShape {
  name?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

const shapeOf = (error: unknown): ErrorShape => (typeof error === 'object' && error !== null ? (error as ErrorShape) : {});

/**
 * The service's error code when the service answered (`error.name` on an SDK service exception,
 * which carries the HTTP status or a fault), undefined for a failure without an answer. The SDK
 * puts `$metadata` (attempts, retry delay) on transport errors too, so `$metadata` alone proves
 * nothing.
 */
export function awsErrorCode(error: unknown): string | undefined {
  const shape = shapeOf(error);
  const answered = typeof shape.$metadata?.httpStatusCode === 'number' || shape.$fault === 'client' || shape.$fault === 'server';
  return answered && typeof shape.name === 'string' ? shape.name : undefined;
}

export function classifyAwsError(error: unknown): AwsFailureKind {
  if (typeof error !== 'object' || error === null) return 'rejected';
  const shape = shapeOf(error);
  const name = typeof shape.name === 'string' ? shape.name : '';
  if (name === 'AbortError') return 'aborted';
  const code = awsErrorCode(error);
  if (code !== undefined && DENIED_CODES.has(code)) return 'denied';
  const sdkError = error as SdkError;
  // Before the status: SQS's query protocol answers its throttling (`RequestThrottled`) with a 403.
  if (isThrottlingError(sdkError)) return 'throttled';
  if (shape.$metadata?.httpStatusCode === 403) return 'denied';
  if (isTransientError(sdkError)) return 'transient';
  if (isServerError(sdkError) || shape.$fault === 'server') return 'server';
  return 'rejected';
}

/**
 * Whether the same request may succeed later. An aborted call is: podroute cut it at the
 * invocation's deadline, the work itself was not refused.
 */
export function isRetryableAwsError(error: unknown): boolean {
  const kind = classifyAwsError(error);
  return kind === 'throttled' || kind === 'transient' || kind === 'server' || kind === 'aborted';
}
