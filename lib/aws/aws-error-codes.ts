/**
 * Each AWS service's own error codes, by what they mean to podroute, for the one classifier
 * (./aws-errors.ts `classifyAwsError`). Only codes the SDK's own checks do not already place:
 * throttling codes, HTTP 429 and the 5xx answers are the SDK's (`@smithy/core/retry`), and the
 * codes of a refused permission are shared by every service.
 */
import type { ServiceErrorCodes } from './aws-errors.ts';

/**
 * EC2 API Reference, "Error codes" (client errors):
 * - `RouteLimitExceeded`: the route table holds as many routes as its quota ("Routes per route
 *   table", an adjustable VPC quota; podroute reads the account's from config, ROUTE_QUOTA in
 *   lib/config.ts); `PrivateIpAddressLimitExceeded`: the interface holds as
 *   many addresses and prefixes as the instance type allows; `InsufficientCidrBlocks`: the subnet
 *   has no free block of the size asked for;
 * - `RouteAlreadyExists`: the destination already has a route in the table;
 * - `Invalid<Resource>.NotFound` (`InvalidRoute.NotFound`, `InvalidRouteTableID.NotFound`,
 *   `InvalidInstanceID.NotFound`, ...): the resource named does not exist (or, for a resource just
 *   created, not yet: EC2 Developer Guide, "Eventual consistency in the Amazon EC2 API");
 * - `InvalidParameterValue`, `InvalidParameterCombination`, `InvalidParameter`,
 *   `MissingParameter`, `UnknownParameter` and `Invalid<Resource>.Malformed`: a request EC2 cannot
 *   accept as written.
 */
export const EC2_ERROR_CODES: ServiceErrorCodes = {
  service: 'EC2',
  quota: new Set(['RouteLimitExceeded', 'PrivateIpAddressLimitExceeded', 'InsufficientCidrBlocks']),
  conflict: new Set(['RouteAlreadyExists']),
  notFoundPattern: /^Invalid\w+\.NotFound$/,
  invalid: new Set(['InvalidParameterValue', 'InvalidParameterCombination', 'InvalidParameter', 'MissingParameter', 'UnknownParameter']),
  invalidPattern: /^Invalid\w+\.Malformed$/,
};

/**
 * Amazon DynamoDB Developer Guide, "Error handling with DynamoDB" (the 400 codes that are not OK to
 * retry; its retryable ones, `ProvisionedThroughputExceededException`, `RequestLimitExceeded`,
 * `ThrottlingException`, `LimitExceededException`, are the SDK's throttling codes):
 * - `ConditionalCheckFailedException`: a condition evaluated to false (callers treat it as control flow);
 * - `ResourceInUseException`: the table is being created, updated or deleted;
 * - `ResourceNotFoundException`: the table does not exist, or is not ACTIVE;
 * - `ValidationException`: a required parameter is missing or a value is out of range.
 */
export const DYNAMODB_ERROR_CODES: ServiceErrorCodes = {
  service: 'DynamoDB',
  conflict: new Set(['ConditionalCheckFailedException', 'ResourceInUseException']),
  notFound: new Set(['ResourceNotFoundException']),
  invalid: new Set(['ValidationException']),
};

/**
 * Amazon SQS API Reference, the errors of SendMessageBatch, GetQueueAttributes and
 * ChangeMessageVisibility:
 * - `KmsThrottled`: the queue's KMS key throttled the request; not among the SDK's throttling codes;
 * - `QueueDoesNotExist` (`AWS.SimpleQueueService.NonExistentQueue` in the query protocol);
 * - `BatchEntryIdsNotDistinct`, `BatchRequestTooLong`, `EmptyBatchRequest`, `InvalidBatchEntryId`,
 *   `TooManyEntriesInBatchRequest`, `InvalidAddress`, `UnsupportedOperation`,
 *   `InvalidAttributeName`, `ReceiptHandleIsInvalid`: a request SQS cannot accept as written.
 */
export const SQS_ERROR_CODES: ServiceErrorCodes = {
  service: 'SQS',
  throttled: new Set(['KmsThrottled']),
  notFound: new Set(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue']),
  invalid: new Set([
    'BatchEntryIdsNotDistinct',
    'BatchRequestTooLong',
    'EmptyBatchRequest',
    'InvalidBatchEntryId',
    'TooManyEntriesInBatchRequest',
    'InvalidAddress',
    'UnsupportedOperation',
    'InvalidAttributeName',
    'ReceiptHandleIsInvalid',
  ]),
};

/**
 * AWS Secrets Manager API Reference, GetSecretValue errors: `ResourceNotFoundException` (no such
 * secret, or no version with the stage asked for); `InvalidParameterException`,
 * `InvalidRequestException`: a request it cannot accept as written (a secret marked for deletion).
 */
export const SECRETS_MANAGER_ERROR_CODES: ServiceErrorCodes = {
  service: 'Secrets Manager',
  notFound: new Set(['ResourceNotFoundException']),
  invalid: new Set(['InvalidParameterException', 'InvalidRequestException']),
};

/**
 * AWS Systems Manager API Reference, GetParameter errors: `ParameterNotFound`,
 * `ParameterVersionNotFound` (the version asked for does not exist, or was pruned).
 */
export const SSM_ERROR_CODES: ServiceErrorCodes = {
  service: 'SSM',
  notFound: new Set(['ParameterNotFound', 'ParameterVersionNotFound']),
};
