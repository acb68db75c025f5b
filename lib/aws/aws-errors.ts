/**
 * The one classification of AWS SDK failures that every AWS adapter builds on, and the typed error
 * it maps them to. It asks the SDK's own checks (`@smithy/core/retry`: `isThrottlingError`,
 * `isTransientError`, `isServerError`), so a reset, a timeout or a 5xx still failing after the SDK's
 * retries stays retryable; each service adds only its codes (./aws-error-codes.ts). No message text.
 */
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import type { SdkError } from '@smithy/types';
import { PodrouteError } from '../errors.ts';

/**
 * What an AWS failure means. Retryable, the same request may succeed later:
 * - `throttled`: the service asked to slow down (429, `RequestLimitExceeded`, `ThrottlingException`...);
 * - `transport`: no answer (reset, refused, timeout, DNS), also after the SDK's own retries;
 * - `server`: a 5xx answer (500, 502, 503, 504 included: the SDK retried those already);
 * - `aborted`: podroute aborted the call itself (the invocation's deadline: `AbortError`).
 * Terminal, retrying cannot help:
 * - `denied`: the caller lacks the permission (IAM, KMS key policy);
 * - `quota`: an account or resource limit is reached (a full route table);
 * - `invalid`: the request itself is malformed (validation);
 * - `not-found`: the resource named does not exist;
 * - `conflict`: the resource is not in the state the request needs (it exists already, a condition failed);
 * - `rejected`: any other answer of the service, or a failure that is no AWS error at all (a bug).
 */
export type AwsFailureKind = 'throttled' | 'transport' | 'server' | 'aborted' | 'denied' | 'quota' | 'invalid' | 'not-found' | 'conflict' | 'rejected';

const RETRYABLE_KINDS: ReadonlySet<AwsFailureKind> = new Set(['throttled', 'transport', 'server', 'aborted']);

/** Whether a failure of this kind may succeed when the same request is sent again later. */
export const isRetryableKind = (kind: AwsFailureKind): boolean => RETRYABLE_KINDS.has(kind);

/** A service's own error codes, by what they mean; a pattern matches codes of one shape (`Invalid*.NotFound`). */
export interface ServiceErrorCodes {
  readonly service: string;
  readonly throttled?: ReadonlySet<string>;
  readonly quota?: ReadonlySet<string>;
  readonly invalid?: ReadonlySet<string>;
  readonly invalidPattern?: RegExp;
  readonly notFound?: ReadonlySet<string>;
  readonly notFoundPattern?: RegExp;
  readonly conflict?: ReadonlySet<string>;
}

/**
 * Codes of a refused permission, whatever the service. AWS IAM User Guide, "Troubleshoot access
 * denied error messages": most services answer `AccessDenied` or `AccessDeniedException`; EC2
 * answers `UnauthorizedOperation` (EC2 API Reference, "Error codes"); SQS's JSON protocol names
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

/** The service's own meaning of `code`, when its table names it. */
function serviceKind(code: string, codes: ServiceErrorCodes): AwsFailureKind | undefined {
  if (codes.throttled?.has(code)) return 'throttled';
  if (codes.quota?.has(code)) return 'quota';
  if (codes.conflict?.has(code)) return 'conflict';
  if (codes.notFound?.has(code) || codes.notFoundPattern?.test(code)) return 'not-found';
  if (codes.invalid?.has(code) || codes.invalidPattern?.test(code)) return 'invalid';
  return undefined;
}

/** What `error` means, by the service's own codes (`codes`) first, then the SDK's checks. */
export function classifyAwsError(error: unknown, codes?: ServiceErrorCodes): AwsFailureKind {
  if (typeof error !== 'object' || error === null) return 'rejected';
  const shape = shapeOf(error);
  if (shape.name === 'AbortError') return 'aborted';
  const code = awsErrorCode(error);
  const own = code !== undefined && codes !== undefined ? serviceKind(code, codes) : undefined;
  if (own !== undefined) return own;
  if (code !== undefined && DENIED_CODES.has(code)) return 'denied';
  const sdkError = error as SdkError;
  // Before the status: SQS's query protocol answers its throttling (`RequestThrottled`) with a 403.
  if (isThrottlingError(sdkError)) return 'throttled';
  if (shape.$metadata?.httpStatusCode === 403) return 'denied';
  // A transient failure the service answered is a 5xx (500, 502, 503, 504); without an answer it is the transport.
  if (isTransientError(sdkError)) return code === undefined ? 'transport' : 'server';
  if (isServerError(sdkError) || shape.$fault === 'server') return 'server';
  return 'rejected';
}

/**
 * Whether the same request may succeed later. An aborted call is: podroute cut it at the
 * invocation's deadline, the work itself was not refused.
 */
export function isRetryableAwsError(error: unknown, codes?: ServiceErrorCodes): boolean {
  return isRetryableKind(classifyAwsError(error, codes));
}

/** Any AWS failure podroute could not absorb. `code` is the service's error code when it answered. */
export class AwsError extends PodrouteError {
  override name = 'AwsError';
  readonly service: string;
  readonly operation: string;
  readonly code: string | undefined;
  readonly kind: AwsFailureKind;
  constructor(message: string, options: { service: string; operation: string; code: string | undefined; kind: AwsFailureKind; cause: unknown }) {
    super(message, { retryable: isRetryableKind(options.kind), cause: options.cause });
    this.service = options.service;
    this.operation = options.operation;
    this.code = options.code;
    this.kind = options.kind;
  }
}

/** The code to name a failure by in a message: the service's, else the error's own name. */
export function failureName(error: unknown): string {
  const code = awsErrorCode(error);
  if (code !== undefined) return code;
  return error instanceof Error ? error.name : 'UnknownError';
}

/**
 * Any failure of an AWS call as an AwsError with the failure as its cause (a PodrouteError is
 * passed on as it is). The message is `<service> <operation>: <code>`, or `message` when given.
 */
export function toAwsError(error: unknown, codes: ServiceErrorCodes, context: { operation: string; message?: string }): PodrouteError {
  if (error instanceof PodrouteError) return error;
  const kind = classifyAwsError(error, codes);
  const message = context.message ?? `${codes.service} ${context.operation}: ${failureName(error)}${isRetryableKind(kind) ? ' (retryable)' : ''}`;
  return new AwsError(message, { service: codes.service, operation: context.operation, code: awsErrorCode(error), kind, cause: error });
}
