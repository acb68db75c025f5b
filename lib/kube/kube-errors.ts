/**
 * Typed errors of the Kubernetes adapter, mapped from the HTTP status of the API server's answer
 * (`ApiException.code`), never from message text.
 */
import { PodrouteError } from '../errors.ts';

// The port error this adapter throws for a missing node, re-exported for its callers and tests.
export { NodeNotFoundError } from '../usecases/port-errors.ts';

/** A call the API server refused or failed; `status` is the HTTP code, absent for network faults. */
export class KubeApiError extends PodrouteError {
  override name = 'KubeApiError';
  readonly status: number | undefined;
  readonly verb: string;
  readonly resource: string;
  constructor(message: string, options: { status?: number; verb: string; resource: string; retryable: boolean; cause?: unknown }) {
    super(message, { retryable: options.retryable, cause: options.cause });
    this.status = options.status;
    this.verb = options.verb;
    this.resource = options.resource;
  }
}

/** The node already has other pod CIDRs; the Kubernetes API never lets them change, so neither do we. */
export class PodCidrConflictError extends PodrouteError {
  override name = 'PodCidrConflictError';
  readonly nodeName: string;
  readonly existing: string[];
  readonly wanted: string[];
  constructor(nodeName: string, existing: string[], wanted: string[], options: { cause?: unknown } = {}) {
    super(
      `node ${JSON.stringify(nodeName)} already has pod CIDRs ${existing.join(',')}; refusing to set ${wanted.join(',')} (spec.podCIDR is immutable once set)`,
      { retryable: false, cause: options.cause },
    );
    this.nodeName = nodeName;
    this.existing = existing;
    this.wanted = wanted;
  }
}
