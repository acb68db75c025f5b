/**
 * The one place where EC2 failures become podroute errors: the classification every AWS adapter
 * shares (lib/aws/aws-errors.ts) over EC2's own codes (lib/aws/aws-error-codes.ts), never message
 * text. A full route table and a resource not found become the port errors the use cases decide on.
 */
import { PodrouteError } from '../errors.ts';
import { EC2_ERROR_CODES } from './aws-error-codes.ts';
import { AwsError, type AwsFailureKind, awsErrorCode, classifyAwsError, failureName, isRetryableKind } from './aws-errors.ts';
import { ResourceNotFoundError, RouteTableFullError } from '../usecases/port-errors.ts';

// The port errors this adapter throws, re-exported for its callers and tests.
export { RouteConflictError, RouteTableFullError, mayBeLaunchLag } from '../usecases/port-errors.ts';

/** What an EC2 failure means to podroute (lib/aws/aws-errors.ts, `AwsFailureKind`). */
type Ec2FailureKind = AwsFailureKind;

/** The shared classification over EC2's own codes. */
export function classifyEc2Error(error: unknown): Ec2FailureKind {
  return classifyAwsError(error, EC2_ERROR_CODES);
}

/** Any EC2 failure podroute could not absorb. `code` is EC2's error code when EC2 answered. */
export class Ec2Error extends AwsError {
  override name = 'Ec2Error';
  constructor(message: string, options: { kind: Ec2FailureKind; operation: string; code: string | undefined; cause: unknown }) {
    super(message, { service: 'EC2', ...options });
  }
}

/**
 * Codes EC2 may answer for an instance or interface that exists but has not propagated yet. EC2
 * Developer Guide, "Eventual consistency in the Amazon EC2 API": after RunInstances, another command
 * with the new instance id may fail with `InvalidInstanceID.NotFound`, which "does not mean the
 * instance does not exist"; a resource just created may be reported as not existing by commands that
 * describe or modify it (its interfaces: `InvalidNetworkInterfaceID.NotFound`).
 */
const LAUNCH_LAG_CODES: ReadonlySet<string> = new Set(['InvalidInstanceID.NotFound', 'InvalidNetworkInterfaceID.NotFound']);

/**
 * The EC2 resource named in the call (instance, interface, table) was not found; `code` is EC2's
 * (`InvalidInstanceID.NotFound`, ...) when EC2 said so, undefined when podroute concluded it (an
 * instance described without a primary interface). It may be launch lag only for the codes below.
 */
export class Ec2NotFoundError extends ResourceNotFoundError {
  override name = 'Ec2NotFoundError';
  readonly kind: Ec2FailureKind = 'not-found';
  constructor(message: string, options: { kind: 'not-found'; operation: string; code: string | undefined; retryable: boolean; cause: unknown }) {
    const mayBeLaunchLag = options.code !== undefined && LAUNCH_LAG_CODES.has(options.code);
    super(message, { operation: options.operation, code: options.code, mayBeLaunchLag, retryable: options.retryable, cause: options.cause });
  }
}

/** Turns any failure of an EC2 call into a PodrouteError with the failure as its cause. */
export function toPodrouteError(error: unknown, context: { operation: string; routeTableId?: string; subject?: string }): PodrouteError {
  if (error instanceof PodrouteError) return error;
  const kind = classifyEc2Error(error);
  const code = awsErrorCode(error);
  const where = [context.operation, context.routeTableId, context.subject].filter((part) => part !== undefined).join(' ');
  const what = failureName(error);
  if (kind === 'quota' && code === 'RouteLimitExceeded') {
    return new RouteTableFullError(`EC2 ${where}: route table is full (RouteLimitExceeded); raise the "Routes per route table" quota or use prefixes mode`, {
      operation: context.operation,
      routeTableId: context.routeTableId,
      code,
      cause: error,
    });
  }
  if (kind === 'not-found') return new Ec2NotFoundError(`EC2 ${where}: ${what}`, { kind, operation: context.operation, code, retryable: false, cause: error });
  return new Ec2Error(`EC2 ${where}: ${what}${isRetryableKind(kind) ? ' (retryable)' : ''}`, { kind, operation: context.operation, code, cause: error });
}
