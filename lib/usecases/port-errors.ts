/**
 * The errors the ports (ports.ts) reject with. Use cases decide on these; the adapters in lib/aws and
 * lib/kube map their SDK's failures onto them (by status or code, never by message text).
 */
import { PodrouteError } from '../errors.ts';

/** NodeSource.getNode: the node does not exist (Kubernetes answers 404). Not retryable: the node is gone. */
export class NodeNotFoundError extends PodrouteError {
  override name = 'NodeNotFoundError';
  readonly nodeName: string;
  constructor(nodeName: string, options: { cause?: unknown } = {}) {
    super(`node ${JSON.stringify(nodeName)} not found`, { retryable: false, cause: options.cause });
    this.nodeName = nodeName;
  }
}

/** RouteTables.createRoute: the destination already routes to another target; a replace is needed. Not retryable as is. */
export class RouteConflictError extends PodrouteError {
  override name = 'RouteConflictError';
  constructor(
    readonly routeTableId: string,
    readonly destinationCidr: string,
    readonly wanted: string,
    readonly existing: { networkInterfaceId?: string; instanceId?: string; gatewayId?: string; state?: string },
    options: { cause?: unknown } = {},
  ) {
    const target = existing.networkInterfaceId ?? existing.instanceId ?? existing.gatewayId ?? 'another target';
    super(`route ${destinationCidr} in ${routeTableId} already targets ${target}${existing.state === 'blackhole' ? ' (blackhole)' : ''}, not ${wanted}`, {
      retryable: false,
      ...options,
    });
  }
}

/**
 * RouteTables.replaceRoute: the destination has no route to replace (it vanished since it was
 * read). The caller creates it instead. Not retryable as is.
 */
export class RouteMissingError extends PodrouteError {
  override name = 'RouteMissingError';
  constructor(
    readonly routeTableId: string,
    readonly destinationCidr: string,
    options: { cause?: unknown } = {},
  ) {
    super(`route ${destinationCidr} in ${routeTableId} is gone: nothing to replace`, { retryable: false, ...options });
  }
}

/**
 * RouteTables.createRoute: the table holds no more routes. A quota, not a fault: not retryable.
 * Carries the table so the worker can report and mark it; `code` is the cloud's own for it.
 */
export class RouteTableFullError extends PodrouteError {
  override name = 'RouteTableFullError';
  readonly routeTableId: string | undefined;
  readonly operation: string;
  readonly code: string | undefined;
  constructor(message: string, options: { operation: string; routeTableId: string | undefined; code?: string; cause: unknown }) {
    super(message, { retryable: false, cause: options.cause });
    this.routeTableId = options.routeTableId;
    this.operation = options.operation;
    this.code = options.code;
  }
}

/**
 * The cloud does not know a resource a port was asked about (an instance, an interface, a table).
 * `code` is the cloud's own when it said so. Not retryable by itself; `mayBeLaunchLag` is the
 * adapter's word that, right after a launch, this answer may only be eventual consistency.
 */
export class ResourceNotFoundError extends PodrouteError {
  override name = 'ResourceNotFoundError';
  readonly operation: string;
  readonly code: string | undefined;
  readonly mayBeLaunchLag: boolean;
  constructor(message: string, options: { operation: string; code: string | undefined; mayBeLaunchLag: boolean; retryable?: boolean; cause: unknown }) {
    super(message, { retryable: options.retryable ?? false, cause: options.cause });
    this.operation = options.operation;
    this.code = options.code;
    this.mayBeLaunchLag = options.mayBeLaunchLag;
  }
}

/** Whether this failure is a resource not found that, for a new instance, may be launch lag. */
export function mayBeLaunchLag(error: unknown): error is ResourceNotFoundError {
  return error instanceof ResourceNotFoundError && error.mayBeLaunchLag;
}

/**
 * EniPrefixes.assignPrefix: EC2 refused the named prefix (`InvalidParameterValue`: it is already
 * delegated to some interface, or holds an address in use). The block cannot be had now; the caller
 * moves on to another. Not retryable as is.
 */
export class PrefixUnavailableError extends PodrouteError {
  override name = 'PrefixUnavailableError';
  readonly prefix: string;
  /** The cloud's own error code, when it answered one. */
  readonly code: string | undefined;
  constructor(message: string, options: { prefix: string; code?: string; cause?: unknown }) {
    super(message, { retryable: false, cause: options.cause });
    this.prefix = options.prefix;
    this.code = options.code;
  }
}
