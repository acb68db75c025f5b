/**
 * DynamoDB SDK errors mapped to podroute's typed errors by the classification every AWS adapter
 * shares (lib/aws/aws-errors.ts) over DynamoDB's own codes (lib/aws/aws-error-codes.ts), never by
 * message text. A failed condition is not an error here: callers test for it with
 * `isConditionalCheckFailed` and treat it as control flow.
 */
import type { PodrouteError } from '../errors.ts';
import { DYNAMODB_ERROR_CODES } from './aws-error-codes.ts';
import { awsErrorCode, failureName, isRetryableAwsError, toAwsError } from './aws-errors.ts';

export const isConditionalCheckFailed = (error: unknown): boolean => awsErrorCode(error) === 'ConditionalCheckFailedException';

/** Wraps an SDK error for `action` (e.g. `PutItem`), keeping it as the cause. */
export function dynamoDbError(action: string, error: unknown): PodrouteError {
  const retryable = isRetryableAwsError(error, DYNAMODB_ERROR_CODES);
  return toAwsError(error, DYNAMODB_ERROR_CODES, { operation: action, message: `DynamoDB ${action} failed (${failureName(error)}${retryable ? ', retryable' : ''})` });
}
