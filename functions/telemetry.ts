/**
 * Logging and metrics in the handlers' middy chains: the Lambda context goes into every log line
 * (request id, cold start: Powertools' own middy middleware) but never the event, and the invocation's metrics are
 * flushed once, when the handler returns or throws. A handler built without telemetry (tests,
 * the sandbox) gets no middleware at all.
 */
import type middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { powertoolsTelemetry } from '../lib/log.ts';
import type { FunctionName, Telemetry } from '../lib/log.ts';

/** The middlewares for one handler; an empty list without telemetry. */
export function telemetryMiddlewares(telemetry: Telemetry | undefined): middy.MiddlewareObj[] {
  if (!telemetry) return [];
  // logEvent false whatever POWERTOOLS_LOGGER_LOG_EVENT says (the option wins over the variable,
  // Powertools Logger `shouldLogEvent`): a webhook event carries its token in rawPath,
  // pathParameters and the Authorization header, and never goes to a log.
  return [injectLambdaContext(telemetry.logger, { resetKeys: true, logEvent: false }), flushMetrics(telemetry)];
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

/** The Lambda's telemetry, from its environment (the cluster name is validated later, by the config). */
export function telemetryFromEnv(functionName: FunctionName, env: Record<string, string | undefined>): Telemetry {
  return powertoolsTelemetry({ cluster: env.CLUSTER_NAME ?? 'unknown', functionName });
}
