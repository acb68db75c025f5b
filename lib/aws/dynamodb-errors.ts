/**
 * DynamoDB SDK errors mapped to PodrouteErrors by the classification every AWS adapter shares
 * (lib/aws/aws-errors.ts: throttling, transport failures and 5xx are retryable), never by message text. A failed condition is not an error here: callers test
 * for it with `isConditionalCheckFailed` and treat it as control flow.
 */
import { PodrouteError } from '../errors.ts';
import { isRetryableAwsError } from './aws-errors.ts';

const errorName = (error: unknown): string =>
  error instanceof Error ? error.name : typeof error === 'string' ? error : 'UnknownError';

export const isConditionalCheckFailed = (error: unknown): boolean =>
  errorName(error) === 'ConditionalCheckFailedException';

/** Wraps an SDK error for `action` (e.g. `PutItem`), keeping it as the cause. */
export function dynamoDbError(action: string, error: unknown): PodrouteError {
  const retryable = isRetryableAwsError(error);
  return new PodrouteError(
    `DynamoDB ${action} failed (${errorName(error)}${retryable ? ', retryable' : ''})`,
    { retryable, cause: error },
  );
}
