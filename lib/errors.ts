/**
 * The one error base of podroute. `retryable` tells a handler whether to let the platform retry
 * (throttling, a transient outage) or to acknowledge, report and move on (bad input, a quota).
 */
export class PodrouteError extends Error {
  override name = 'PodrouteError';
  readonly retryable: boolean;
  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? false;
  }
}

/** Input that can never succeed as given: a malformed file, event, node or message. */
export class InvalidInputError extends PodrouteError {
  override name = 'InvalidInputError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, ...options });
  }
}

/**
 * A failure named by a sentinel code (upstream's cidrset and node-sync errors), for callers that
 * branch on the code. Not retryable: the same input fails the same way.
 */
export class CodedError<Code extends string> extends PodrouteError {
  override name = 'CodedError';
  constructor(
    readonly code: Code,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { retryable: false, ...options });
  }
}

/** An error's message for a report or a log field (a thrown non-Error as its string). */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
