/**
 * node-webhook: the HTTP API Lambda for node join and leave (lib/usecases/node-webhook.ts), on
 * `POST /webhook/{token}` (an EKS API server can send no credential but its URL) and `POST /webhook`
 * (a Bearer token, or an event signed with the signing key). Every request is authenticated before
 * its body is read; only the caller's faults (4xx) are explained, anything else is a plain 500 or 503.
 * A review's sends and lines carry its uid as the correlation id; in observe mode a review is
 * allowed untouched and an event is answered without acting.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { PodrouteError } from '../lib/errors.ts';
import { admit, handleNodeEvent } from '../lib/usecases/node-webhook.ts';
import { admissionBudgetMs, admissionResponse, classifyRequest } from '../lib/webhook/index.ts';
import { withAbortSignal } from '../lib/util/abort-scope.ts';
import { SIGNATURE_HEADER } from '../lib/webhook/events.ts';
import type { WebhookSecrets } from '../lib/aws/webhook-secrets.ts';
import type { Telemetry } from '../lib/log.ts';
import { correlated, telemetryFromEnv, telemetryMiddlewares, wiringOptions } from './telemetry.ts';
import { once, useCaseDeps, wiringFromEnv } from './wiring.ts';
import type { Wiring } from './wiring.ts';

export function createNodeWebhookHandler(getWiring: () => Promise<Wiring>, telemetry?: Telemetry) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>().use(telemetryMiddlewares(telemetry)).handler(async (event, context) => {
    const wiring = await getWiring();
    const read = await readSecrets(event, wiring);
    if (read === null) return json(503, { message: 'service unavailable' });
    const { secrets, keys } = read;
    const request = classifyRequest(
      {
        headers: event.headers,
        rawBody: event.body ?? null,
        isBase64Encoded: event.isBase64Encoded,
        query: event.queryStringParameters ?? null,
        pathParameters: event.pathParameters ?? null,
      },
      { secret: secrets.current, previousSecret: secrets.previous, signingKey: keys?.current ?? null, previousSigningKey: keys?.previous ?? null, now: wiring.now },
    );
    if (request.kind === 'rejected') {
      wiring.log.log('warn', 'webhook.rejected', { status: request.status, reason: request.status === 401 ? 'unauthorized' : request.message });
      wiring.log.metric('WebhookRejected', 1);
      return json(request.status, { message: request.message });
    }
    if (request.kind === 'admission') {
      const { uid, name, operation } = request.review.request;
      if (wiring.observe === true) {
        wiring.log.log('info', 'webhook.observed', { correlationId: uid, node: name, operation });
        return json(200, admissionResponse(uid));
      }
      const deps = correlated(useCaseDeps(wiring), uid);
      const budgetMs = admissionBudgetMs(event.queryStringParameters?.timeout, context.getRemainingTimeInMillis());
      return json(200, await admitWithin(budgetMs, (deadline) => admit(request.review, deps, deadline)));
    }
    if (wiring.observe === true) {
      wiring.log.log('info', 'webhook.observed', { type: request.event.type, node: request.event.nodeName });
      return json(200, { message: `observe mode: ${request.event.type} of node ${request.event.nodeName} not acted on` });
    }
    const deps = correlated(useCaseDeps(wiring), context?.awsRequestId);
    try {
      const result = await handleNodeEvent(request.event, deps);
      wiring.log.log('info', 'webhook.event', { type: request.event.type, node: request.event.nodeName, status: result.status });
      return json(result.status, { message: result.message });
    } catch (error) {
      const retryable = error instanceof PodrouteError && error.retryable;
      wiring.log.log('error', 'webhook.event-failed', { type: request.event.type, node: request.event.nodeName, error });
      return json(retryable ? 503 : 500, { message: retryable ? 'temporarily unavailable, retry later' : 'internal error' });
    }
  });
}

/**
 * Runs an admission against its deadline: every adapter call it makes is aborted then, and none
 * waits out a Retry-After (lib/util/abort-scope.ts), so the API server gets an answer in time.
 */
async function admitWithin<T>(budgetMs: number, work: (deadline: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), budgetMs);
  try {
    return await withAbortSignal(controller.signal, () => work(controller.signal), { retryWaits: false });
  } finally {
    clearTimeout(timer);
  }
}

const pair = (read: string | WebhookSecrets): WebhookSecrets => (typeof read === 'string' ? { current: read, previous: null } : read);

/**
 * The token (null when it cannot be read: 503) and, for a signed request only, the signing key
 * (null when it cannot be read: classifyRequest answers that request 503, reviews are not affected).
 */
async function readSecrets(event: APIGatewayProxyEventV2, wiring: Wiring): Promise<{ secrets: WebhookSecrets; keys: WebhookSecrets | null } | null> {
  const signed = Object.keys(event.headers ?? {}).some((name) => name.toLowerCase() === SIGNATURE_HEADER);
  const [token, signingKey] = await Promise.allSettled([
    wiring.webhookSecret(),
    signed ? (wiring.eventSigningKey?.() ?? Promise.reject(new Error('no event signing key is configured'))) : Promise.resolve(null),
  ]);
  if (token.status === 'rejected') {
    wiring.log.log('error', 'webhook.secret-unavailable', { which: 'token', error: token.reason });
    return null;
  }
  if (signingKey.status === 'rejected') wiring.log.log('error', 'webhook.secret-unavailable', { which: 'signing-key', error: signingKey.reason });
  return { secrets: pair(token.value), keys: signingKey.status === 'fulfilled' && signingKey.value !== null ? pair(signingKey.value) : null };
}

function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

const telemetry = telemetryFromEnv('node-webhook', process.env);
export const handler = createNodeWebhookHandler(once(() => wiringFromEnv(process.env, wiringOptions(telemetry))), telemetry);
