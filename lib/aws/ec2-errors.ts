/**
 * The one place where EC2 failures become podroute errors. It decides by the error's code
 * (`error.name` on SDK v3 service exceptions) and its HTTP status, never by message text.
 */
import { PodrouteError } from '../errors.ts';
import { ResourceNotFoundError, RouteTableFullError } from '../usecases/port-errors.ts';

// The port errors this adapter throws, re-exported for its callers and tests.
export { RouteConflictError, RouteTableFullError, mayBeLaunchLag } from '../usecases/port-errors.ts';

/** What an EC2 failure means to podroute. */
type Ec2FailureKind =
  | 'route-exists' // RouteAlreadyExists: the destination already has a route
  | 'route-missing' // InvalidRoute.NotFound: nothing to delete
  | 'throttled' // RequestLimitExceeded / Throttling: retry later
  | 'server' // a 5xx from EC2: retry later
  | 'transport' // no answer at all (timeout, reset): retry later
  | 'route-quota' // RouteLimitExceeded: the table is full, retrying will not help
  | 'not-found' // another Invalid*.NotFound: the resource is gone
  | 'rejected'; // any other client error

const THROTTLING_CODES = new Set(['RequestLimitExceeded', 'Throttling', 'ThrottlingException', 'RequestThrottled', 'TooManyRequestsException']);
const TRANSPORT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED']);

interface ErrorShape {
  name?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

const shapeOf = (error: unknown): ErrorShape => (typeof error === 'object' && error !== null ? (error as ErrorShape) : {});

/** The EC2 error code of a failure (`RouteAlreadyExists`, ...), or undefined for a non-service error. */
function ec2ErrorCode(error: unknown): string | undefined {
  const shape = shapeOf(error);
  return shape.$metadata !== undefined && typeof shape.name === 'string' ? shape.name : undefined;
}

export function classifyEc2Error(error: unknown): Ec2FailureKind {
  const shape = shapeOf(error);
  const name = typeof shape.name === 'string' ? shape.name : '';
  const status = typeof shape.$metadata?.httpStatusCode === 'number' ? shape.$metadata.httpStatusCode : undefined;
  if (name === 'RouteAlreadyExists') return 'route-exists';
  if (name === 'InvalidRoute.NotFound') return 'route-missing';
  if (name === 'RouteLimitExceeded') return 'route-quota';
  if (THROTTLING_CODES.has(name)) return 'throttled';
  if ((status !== undefined && status >= 500) || shape.$fault === 'server') return 'server';
  if (/^Invalid\w+\.NotFound$/.test(name)) return 'not-found';
  if (shape.$metadata === undefined) {
    const code = typeof shape.code === 'string' ? shape.code : '';
    if (name === 'TimeoutError' || name === 'AbortError' || TRANSPORT_CODES.has(code)) return 'transport';
  }
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
      return new Ec2Error(`EC2 ${where}: ${what} (retryable)`, { kind, operation: context.operation, code, retryable: true, cause: error });
    case 'route-exists':
    case 'route-missing':
    case 'rejected':
      return new Ec2Error(`EC2 ${where}: ${what}`, { kind, operation: context.operation, code, retryable: false, cause: error });
  }
}
