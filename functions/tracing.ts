/**
 * X-Ray tracing of the handlers: Powertools Tracer (a subsegment per invocation, one per AWS SDK
 * call of a captured client, one per HTTPS request, so the Kubernetes API's too). The tracer and
 * the X-Ray SDK under it are imported only where they trace, so a local run, a test or a function
 * with tracing switched off never loads them (docs/decisions/0027-tracing-and-correlation.md).
 */
import type middy from '@middy/core';

export interface Tracing {
  /** First in the middy chain: opens the invocation's subsegment, closes it after the handler. */
  middleware: middy.MiddlewareObj;
  /** The client, its calls traced once the tracer is loaded (the wiring is built after `before`). */
  capture<T>(client: T): T;
}

/**
 * Whether Powertools traces in this environment: inside Lambda (AWS_EXECUTION_ENV), not in SAM or
 * Amplify's local emulation, and unless POWERTOOLS_TRACE_ENABLED is `false` (Powertools for AWS
 * Lambda (TypeScript), Tracer: "Auto-disable tracing when not running in the Lambda environment",
 * and the POWERTOOLS_TRACE_ENABLED setting). The same rule as Tracer's own, checked before the import.
 */
export function tracesIn(env: Record<string, string | undefined>): boolean {
  if ((env.POWERTOOLS_TRACE_ENABLED ?? '').toLowerCase() === 'false') return false;
  const execution = env.AWS_EXECUTION_ENV ?? '';
  return execution !== '' && execution !== 'AWS_Lambda_amplify-mock' && (env.AWS_SAM_LOCAL ?? '') === '';
}

interface Loaded {
  capture<T>(client: T): T;
  middleware: middy.MiddlewareObj;
}

/** Imports the tracer (a chunk of its own in the bundle); null when it cannot be loaded: the function runs untraced. */
async function loadTracer(): Promise<Loaded | null> {
  try {
    const [{ Tracer }, { captureLambdaHandler }] = await Promise.all([import('@aws-lambda-powertools/tracer'), import('@aws-lambda-powertools/tracer/middleware')]);
    const tracer = new Tracer({ serviceName: 'podroute' });
    // No response as metadata: an admission's answer is a patch, and a trace needs no copy of it.
    return { capture: (client) => tracer.captureAWSv3Client(client), middleware: captureLambdaHandler(tracer, { captureResponse: false }) };
  } catch {
    return null;
  }
}

/** The handler's tracing, or undefined where Powertools would not trace. */
export function tracingFromEnv(env: Record<string, string | undefined>): Tracing | undefined {
  if (!tracesIn(env)) return undefined;
  // Started at module scope, in the init phase; the first invocation waits for it in `before`.
  const loading = loadTracer();
  let loaded: Loaded | null = null;
  return {
    middleware: {
      before: async (request) => {
        loaded ??= await loading;
        return loaded?.middleware.before?.(request);
      },
      after: async (request) => loaded?.middleware.after?.(request),
      onError: async (request) => loaded?.middleware.onError?.(request),
    },
    capture: (client) => (loaded ? loaded.capture(client) : client),
  };
}
