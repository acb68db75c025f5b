/**
 * DynamoDB SDK errors mapped to PodrouteErrors, by the exception name and the HTTP status the SDK
 * puts on the error, never by message text. A failed condition is not an error here: callers test
 * for it with `isConditionalCheckFailed` and treat it as control flow.
 */
import { PodrouteError } from '../errors.ts';

/** Throttling and capacity errors: the same request can succeed later. */
const RETRYABLE_NAMES: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

const errorName = (error: unknown): string =>
  error instanceof Error ? error.name : typeof error === 'string' ? error : 'UnknownError';

function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata: unknown = error.$metadata;
  if (typeof metadata !== 'object' || metadata === null || !('httpStatusCode' in metadata)) return undefined;
  return typeof metadata.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

export const isConditionalCheckFailed = (error: unknown): boolean =>
  errorName(error) === 'ConditionalCheckFailedException';

/** True for throttling and for server-side (5xx) failures. */
function isRetryableDynamoDbError(error: unknown): boolean {
  if (RETRYABLE_NAMES.has(errorName(error))) return true;
  const status = httpStatusOf(error);
  return status !== undefined && status >= 500;
}

/** Wraps an SDK error for `action` (e.g. `PutItem`), keeping it as the cause. */
export function dynamoDbError(action: string, error: unknown): PodrouteError {
  const retryable = isRetryableDynamoDbError(error);
  return new PodrouteError(
    `DynamoDB ${action} failed (${errorName(error)}${retryable ? ', retryable' : ''})`,
    { retryable, cause: error },
  );
}
