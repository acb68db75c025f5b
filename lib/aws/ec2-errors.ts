/**
 * The one place where EC2 failures become podroute errors. It decides by the error's code
 * (`error.name` on SDK v3 service exceptions) for EC2's own codes and by the classification all AWS
 * adapters share (lib/aws/aws-errors.ts) for the rest, never by message text.
 */
import { PodrouteError } from '../errors.ts';
import { awsErrorCode, classifyAwsError } from './aws-errors.ts';
import { ResourceNotFoundError, RouteTableFullError } from '../usecases/port-errors.ts';

// The port errors this adapter throws, re-exported for its callers and tests.
export { RouteConflictError, RouteTableFullError, mayBeLaunchLag } from '../usecases/port-errors.ts';

/** What an EC2 failure means to podroute. */
type Ec2FailureKind =
  | 'route-exists' // RouteAlreadyExists: the destination already has a route
  | 'route-missing' // InvalidRoute.NotFound: nothing to delete
  | 'throttled' // RequestLimitExceeded / Throttling: retry later
  | 'server' // a 5xx from EC2: retry later
  | 'transport' // no answer (timeout, reset) or a transient 5xx, also after the SDK's retries: retry later
  | 'aborted' // podroute cut the call at the invocation's deadline: retry later
  | 'denied' // UnauthorizedOperation: the role lacks the permission, retrying cannot help
  | 'route-quota' // RouteLimitExceeded: the table is full, retrying will not help
  | 'not-found' // another Invalid*.NotFound: the resource is gone
  | 'rejected'; // any other client error

/** The EC2 error code of a failure (`RouteAlreadyExists`, ...), or undefined when EC2 did not answer. */
const ec2ErrorCode = awsErrorCode;

/**
 * EC2's own codes first, then the classification every AWS adapter shares (lib/aws/aws-errors.ts:
 * the SDK's throttling, transient and server-error checks).
 */
export function classifyEc2Error(error: unknown): Ec2FailureKind {
  const code = ec2ErrorCode(error);
  if (code === 'RouteAlreadyExists') return 'route-exists';
  if (code === 'InvalidRoute.NotFound') return 'route-missing';
  if (code === 'RouteLimitExceeded') return 'route-quota';
  const kind = classifyAwsError(error);
  // A transient failure EC2 answered is a 5xx (500, 502, 503, 504); without an answer it is the transport.
  if (kind === 'transient') return code === undefined ? 'transport' : 'server';
  if (kind !== 'rejected') return kind;
  if (code !== undefined && /^Invalid\w+\.NotFound$/.test(code)) return 'not-found';
  return 'rejected';
}

/** Any EC2 failure podroute could not absorb. `code` is EC2's error code when EC2 answered. */
export class Ec2Error extends PodrouteError {
  override name = 'Ec2Error';
  readonly code: string | undefined;
  readonly kind: Ec2FailureKind;
  readonly operation: string;
  constructor(message: string, options: { kind: Ec2FailureKind; operation: string; code: string | undefined; retryable: boolean; cause: unknown }) {
    super(message, { retryable: options.retryable, cause: options.cause });
    this.code = options.code;
    this.kind = options.kind;
    this.operation = options.operation;
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
  const code = ec2ErrorCode(error);
  const where = [context.operation, context.routeTableId, context.subject].filter((part) => part !== undefined).join(' ');
  const what = code ?? (error instanceof Error ? error.name : 'unknown error');
  switch (kind) {
    case 'route-quota':
      // CreateRoute's `RouteLimitExceeded` (EC2 API reference, "Error codes": the table holds as many
      // routes as the account's "Routes per route table" quota allows, 50 by default, up to 1,000).
      return new RouteTableFullError(`EC2 ${where}: route table is full (RouteLimitExceeded); raise the "Routes per route table" quota or use prefixes mode`, {
        operation: context.operation,
        routeTableId: context.routeTableId,
        code: 'RouteLimitExceeded',
        cause: error,
      });
    case 'not-found':
      return new Ec2NotFoundError(`EC2 ${where}: ${what}`, { kind, operation: context.operation, code, retryable: false, cause: error });
    case 'throttled':
    case 'server':
    case 'transport':
    case 'aborted':
      return new Ec2Error(`EC2 ${where}: ${what} (retryable)`, { kind, operation: context.operation, code, retryable: true, cause: error });
    case 'route-exists':
    case 'route-missing':
    case 'denied':
    case 'rejected':
      return new Ec2Error(`EC2 ${where}: ${what}`, { kind, operation: context.operation, code, retryable: false, cause: error });
  }
}
