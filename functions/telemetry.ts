/**
 * Logging, metrics and tracing in the handlers' middy chains: the Lambda context goes into every log
 * line (request id, cold start: Powertools' own middy middleware) but never the event, the
 * invocation's metrics are flushed once, when the handler returns or throws, and the invocation is
 * traced where Powertools traces (./tracing.ts). A handler built without telemetry (tests, the
 * sandbox) gets no middleware at all. `correlated` tags a use case's sends and lines with one id.
 */
import type middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { powertoolsTelemetry, withFields } from '../lib/log.ts';
import type { FunctionName, Logger, Telemetry } from '../lib/log.ts';
import { correlatedQueue } from '../lib/messages/work-queue.ts';
import { tracingFromEnv } from './tracing.ts';
import type { Tracing } from './tracing.ts';
import type { WorkQueue } from '../lib/usecases/ports.ts';

/** A Lambda's telemetry: logs and metrics, and its tracing where it traces. */
export type LambdaTelemetry = Telemetry & { tracing?: Tracing };

/** The middlewares for one handler; an empty list without telemetry. */
export function telemetryMiddlewares(telemetry: LambdaTelemetry | undefined): middy.MiddlewareObj[] {
  if (!telemetry) return [];
  const tracing = telemetry.tracing ? [telemetry.tracing.middleware] : [];
  // logEvent false whatever POWERTOOLS_LOGGER_LOG_EVENT says (the option wins over the variable,
  // Powertools Logger `shouldLogEvent`): a webhook event carries its token in rawPath,
  // pathParameters and the Authorization header, and never goes to a log.
  const logContext = onFirstInvocation(() => injectLambdaContext(telemetry.logger, { resetKeys: true, logEvent: false }));
  return [...tracing, logContext, flushMetrics(telemetry)];
}

/** The middleware `build` returns, built when the first invocation reaches it (not at import). */
function onFirstInvocation(build: () => middy.MiddlewareObj): middy.MiddlewareObj {
  let middleware: middy.MiddlewareObj | undefined;
  const built = (): middy.MiddlewareObj => (middleware ??= build());
  return {
    before: async (request) => built().before?.(request),
    after: async (request) => built().after?.(request),
    onError: async (request) => built().onError?.(request),
  };
}

/**
 * Writes the invocation's metrics (one EMF line) after the handler, also when it throws. Nothing is
 * written when no metric was recorded (Powertools would warn on every such invocation).
 */
function flushMetrics(telemetry: Pick<Telemetry, 'metrics'>): middy.MiddlewareObj {
  const flush = async (): Promise<void> => {
    if (telemetry.metrics.hasStoredMetrics()) telemetry.metrics.publishStoredMetrics();
  };
  return { after: flush, onError: flush };
}

/**
 * The Lambda's telemetry, from its environment (the cluster name is validated later, by the config).
 * The Powertools logger and metrics are built on first use, in the first invocation, so that
 * importing the handler builds none of them.
 */
export function telemetryFromEnv(functionName: FunctionName, env: Record<string, string | undefined>): LambdaTelemetry {
  const tracing = tracingFromEnv(env);
  let built: Telemetry | undefined;
  const powertools = (): Telemetry => (built ??= powertoolsTelemetry({ cluster: env.CLUSTER_NAME ?? 'unknown', functionName }));
  return {
    get log() {
      return powertools().log;
    },
    get logger() {
      return powertools().logger;
    },
    get metrics() {
      return powertools().metrics;
    },
    ...(tracing ? { tracing } : {}),
  };
}

/** What `wiringFromEnv` takes from the telemetry: the log port, and the tracer's client capture. */
export function wiringOptions(telemetry: LambdaTelemetry): { log: Logger; capture?: <T>(client: T) => T } {
  return { log: telemetry.log, ...(telemetry.tracing ? { capture: telemetry.tracing.capture } : {}) };
}

/**
 * The deps with every message they send and every line they log tagged with `correlationId`: an
 * admission's uid, a reconcile run's request id. The worker logs the id it receives (functions/route-worker.ts).
 */
export function correlated<D extends { queue: WorkQueue; log: Logger }>(deps: D, correlationId: string | undefined): D {
  if (!correlationId) return deps;
  return { ...deps, queue: correlatedQueue(deps.queue, correlationId), log: withFields(deps.log, { correlationId }) };
}
