/**
 * The HTTPS transport of the Kubernetes adapters: one REST call to the current cluster with the
 * kubeconfig's TLS and credentials, and the mapping of a failed call to a typed error by HTTP
 * status only (never by message text).
 */
// The module object, not a named binding: X-Ray's capture patches `https.request` on it, which an
// ESM named import taken before the patch would not see (functions/tracing.ts).
import https, { type RequestOptions } from 'node:https';
import packageJson from '../../package.json' with { type: 'json' };
import * as z from '../util/zod-mini.ts';
import { InvalidInputError, type PodrouteError } from '../errors.ts';
import { KubeApiError } from './kube-errors.ts';
import { currentAbortSignal, retryWaitsAllowed } from '../util/abort-scope.ts';

const statusBodySchema = z.onFirstUse(() => z.looseObject({ message: z.optional(z.string()), reason: z.optional(z.string()) }));

export type Target = { verb: string; resource: string; name?: string };

/**
 * What the adapter needs of a kubeconfig: the current cluster's server, and the TLS and
 * credential options of a request to it. @kubernetes/client-node's KubeConfig has both
 * (`getCurrentCluster`, `applyToHTTPSOptions`: CA, client certificate, bearer token or an
 * authenticator's header, proxy agent); so does the EKS one of kube-config.ts.
 */
export interface KubeEndpoint {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}

/** The `message` of a Status body (metav1.Status), or the start of a body that is not one. */
function statusMessage(body: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body.length > 0 ? body.slice(0, 300) : undefined;
  }
  const parsed = statusBodySchema().safeParse(value);
  return parsed.success ? parsed.data.message : undefined;
}

/** An answer outside 2xx: its status and body (a metav1.Status, as a rule). Mapped by `mapHttpFailure`. */
export class KubeHttpStatusError extends Error {
  override name = 'KubeHttpStatusError';
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}`);
  }
}

/**
 * How long a request may sit with nothing sent or received (connect, TLS, or a silent server)
 * before it is abandoned as unreachable (retryable). A socket idle time, not a total: a large list
 * page that keeps arriving is not cut. Below the webhook's 10 s (the API server's default
 * admission timeout) and the functions' own timeouts, so a hung API server ends in a mapped error,
 * not in a Lambda timeout.
 */
const REQUEST_IDLE_TIMEOUT_MS = 8_000;

/** A request abandoned after `REQUEST_IDLE_TIMEOUT_MS` without traffic. */
class KubeRequestTimeoutError extends Error {
  override name = 'KubeRequestTimeoutError';
}

export type Call = { method: 'GET' | 'PATCH' | 'POST'; path: string; query?: Record<string, string | number | undefined>; body?: unknown; contentType?: string };

/**
 * Who podroute is to the API server. The server records each writer in managedFields under the
 * request's `fieldManager`, else the User-Agent's part before `/`, else `unknown` (Kubernetes docs,
 * "Server-Side Apply: Field management"; apiserver handlers `prefixFromUserAgent`); podroute sends
 * both, so its writes are its own.
 */
export const USER_AGENT = `podroute/${packageJson.version}`;
export const FIELD_MANAGER = 'podroute';

/** An answer: status, body (empty when a 2xx body went to a sink) and the Retry-After header (of a 429 or 503), if any. */
export type Answer = { status: number; text: string; retryAfter?: string };

/** Takes a 2xx answer's body part by part as it arrives; what it throws ends the request (`BodySinkError`). */
export type BodySink = (part: Buffer) => void;

/** The error a body sink threw, which ended the request: the answer arrived but could not be read. */
export class BodySinkError extends Error {
  override name = 'BodySinkError';
}

/**
 * The connections to the API server, kept open between calls (Node.js docs, "Class: http.Agent",
 * `keepAlive`) and pooled by each request's TLS options (CA, client certificate, server name), so
 * calls with different TLS credentials never share one; a bearer token is a header of each
 * request. The agent's `timeout` bounds a socket being connected, as REQUEST_IDLE_TIMEOUT_MS
 * bounds one in use, and closes a free socket after as long, or sooner when the server announces
 * its own idle time (`Keep-Alive: timeout=`, which Node's agent honours less one second). A free
 * socket does not keep a process alive. Why: docs/decisions/0034.
 */
const KEEP_ALIVE_AGENT = new https.Agent({ keepAlive: true, timeout: REQUEST_IDLE_TIMEOUT_MS });

/**
 * The agent a call goes through: a proxy agent the kubeconfig asked for as given, else the shared
 * keep-alive one, or for a call sent once more, a new agent of Node's defaults (`agent: false`),
 * which opens a new connection whatever other sockets the pool holds.
 */
const agentFor = (given: RequestOptions['agent'], fresh: boolean): RequestOptions['agent'] => {
  const plain = given === undefined || given === false || Object.getPrototypeOf(given) === https.Agent.prototype;
  if (!plain) return given;
  return fresh ? false : KEEP_ALIVE_AGENT;
};

/** A request that failed before any answer arrived, and whether it went over a socket an earlier call had used. */
class NoAnswerError extends Error {
  override name = 'NoAnswerError';
  constructor(
    readonly reusedSocket: boolean,
    override readonly cause: unknown,
  ) {
    super('no answer', { cause });
  }
}

/** Whether a failed call is sent once more: a GET whose kept-alive socket was reset before any answer. */
const resendable = (call: Call, error: NoAnswerError): boolean =>
  call.method === 'GET' && error.reusedSocket && error.cause instanceof Error && 'code' in error.cause && error.cause.code === 'ECONNRESET';

/**
 * One HTTPS request to the current cluster with the kubeconfig's TLS and credentials. With a
 * `sink`, a 2xx answer's body goes to it as it arrives and is not kept; any other answer's body is
 * kept as text, for its error. A kept-alive socket the server closed just as it was reused gives
 * ECONNRESET before any answer; Node's docs (`request.reusedSocket`) name that case, and a GET is
 * then sent once more on a new connection. A write is not: the server may have applied it. Any
 * other failure is returned as it is.
 */
export async function send(endpoint: KubeEndpoint, call: Call, idleTimeoutMs = REQUEST_IDLE_TIMEOUT_MS, sink?: BodySink): Promise<Answer> {
  for (let fresh = false; ; fresh = true) {
    try {
      return await sendOnce(endpoint, call, idleTimeoutMs, sink, fresh);
    } catch (error) {
      if (!(error instanceof NoAnswerError)) throw error;
      if (fresh || !resendable(call, error)) throw error.cause;
    }
  }
}

async function sendOnce(endpoint: KubeEndpoint, call: Call, idleTimeoutMs: number, sink: BodySink | undefined, fresh: boolean): Promise<Answer> {
  const cluster = endpoint.getCurrentCluster();
  if (!cluster) throw new InvalidInputError('the kubeconfig has no current cluster');
  // The server URL may carry a path prefix (an API proxy); the API path goes after it.
  const url = new URL(cluster.server);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${call.path}`;
  for (const [key, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
  if (call.method !== 'GET') url.searchParams.set('fieldManager', FIELD_MANAGER);
  const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body), 'utf8');
  // The abort signal of the work under way (the route worker's deadline, lib/util/abort-scope.ts).
  const signal = currentAbortSignal();
  const opts: RequestOptions = {
    ...(signal === undefined ? {} : { signal }),
    method: call.method,
    headers: {
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
      ...(payload ? { 'Content-Type': call.contentType ?? 'application/json', 'Content-Length': payload.length } : {}),
    },
  };
  await endpoint.applyToHTTPSOptions(opts);
  opts.agent = agentFor(opts.agent, fresh);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = https.request(url, opts, (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      const streamed = sink !== undefined && status >= 200 && status <= 299;
      let sinkError: BodySinkError | undefined;
      res.on('data', (chunk: Buffer) => {
        if (!streamed) chunks.push(chunk);
        else if (sinkError === undefined) {
          try {
            sink(chunk);
          } catch (cause) {
            sinkError = new BodySinkError('the answer could not be read', { cause });
            req.destroy(sinkError);
          }
        }
      });
      res.on('error', (error) => reject(sinkError ?? error));
      res.on('end', () => {
        if (sinkError !== undefined) {
          reject(sinkError);
          return;
        }
        const retryAfter = res.headers['retry-after'];
        resolve({ status, text: Buffer.concat(chunks).toString('utf8'), ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
      });
    });
    req.on('error', (error) => reject(answered ? error : new NoAnswerError(req.reusedSocket, error)));
    req.setTimeout(idleTimeoutMs, () => req.destroy(new KubeRequestTimeoutError(`no answer from ${url.host} within ${idleTimeoutMs} ms of silence`)));
    req.end(payload);
  });
}

/** Longest wait podroute grants one Retry-After, so a throttled call stays inside a function's time. */
export const MAX_RETRY_AFTER_MS = 5_000;

/**
 * How long to wait before retrying a 429, from its Retry-After header (RFC 9110 section 10.2.3:
 * delay-seconds or an HTTP date), bounded by MAX_RETRY_AFTER_MS; null when the header is absent
 * or unreadable (then the 429 is not retried here, as client-go retries only with the header).
 */
export function retryAfterMs(header: string | undefined, now: Date): number | null {
  if (header === undefined) return null;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    // An HTTP-date (IMF-fixdate) ends in GMT; anything else is not a Retry-After.
    const at = /GMT$/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(at)) return null;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * Maps a failed call to a typed error by HTTP status only: an answer outside 2xx
 * (`KubeHttpStatusError`), or anything else (no answer: network, TLS, credentials).
 */
export function mapError(error: unknown, target: Target): PodrouteError {
  if (!(error instanceof KubeHttpStatusError)) {
    const what = `${target.verb} ${target.resource}${target.name ? ` ${JSON.stringify(target.name)}` : ''}`;
    return new KubeApiError(`${what}: the Kubernetes API could not be reached`, { verb: target.verb, resource: target.resource, cause: error, retryable: true });
  }
  return mapHttpFailure(error.status, error.body, target, error);
}

/** A typed error from an answer's HTTP status and its Status body. */
function mapHttpFailure(status: number, body: string, target: Target, cause: unknown): PodrouteError {
  const what = `${target.verb} ${target.resource}${target.name ? ` ${JSON.stringify(target.name)}` : ''}`;
  const base = { verb: target.verb, resource: target.resource, cause };
  const detail = statusMessage(body);
  const suffix = detail ? `: ${detail}` : '';
  if (status === 401) {
    return new KubeApiError(`${what}: 401 Unauthorized, the API server rejected podroute's credentials (check the token or the EKS access entry of the Lambda role)`, {
      ...base,
      status,
      retryable: false,
    });
  }
  if (status === 403) {
    return new KubeApiError(`${what}: 403 Forbidden, RBAC does not allow verb "${target.verb}" on resource "${target.resource}"; grant it in podroute's ClusterRole${suffix}`, {
      ...base,
      status,
      retryable: false,
    });
  }
  const retryable = status === 409 || status === 429 || status >= 500;
  return new KubeApiError(`${what}: HTTP ${status}${suffix}`, { ...base, status, retryable });
}

/** Retries of a call the API server answered 429 with a Retry-After (each wait bounded by MAX_RETRY_AFTER_MS). */
const RATE_LIMIT_RETRIES = 3;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One API call: its parsed JSON answer, or a typed error for any failure. A 429 with a Retry-After
 * is retried after that wait (bounded: `retryAfterMs`), up to RATE_LIMIT_RETRIES times, as client-go
 * does (API Priority and Fairness answers 429 with the header); then it is a retryable error. Work
 * run with `retryWaits: false` (lib/util/abort-scope.ts) gets that error at the first 429.
 */
export async function callJson(endpoint: KubeEndpoint, target: Target, call: Call, options: CallOptions): Promise<unknown> {
  const text = await callText(endpoint, target, call, options);
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new KubeApiError(`${target.verb} ${target.resource}: the answer is not JSON`, { verb: target.verb, resource: target.resource, retryable: true, cause });
  }
}

/** As `callJson`, but the answer's text, unparsed. */
export async function callText(endpoint: KubeEndpoint, target: Target, call: Call, options: CallOptions): Promise<string> {
  return (await answerOf(endpoint, target, call, options)).text;
}

/**
 * As `callText`, but a 2xx body goes to `sink` part by part as it arrives (a list page is read item
 * by item: ./list-stream.ts) and is never held whole. What the sink throws is thrown as is.
 */
export async function callStreamed(endpoint: KubeEndpoint, target: Target, call: Call, options: CallOptions, sink: BodySink): Promise<void> {
  await answerOf(endpoint, target, call, options, sink);
}

type CallOptions = { clock: () => Date; sleep?: (ms: number) => Promise<void> };

/** One call's 2xx answer, after the 429 retries; anything else as a typed error. */
async function answerOf(endpoint: KubeEndpoint, target: Target, call: Call, options: CallOptions, sink?: BodySink): Promise<Answer> {
  let answer: Answer;
  for (let retries = 0; ; retries++) {
    try {
      answer = await send(endpoint, call, REQUEST_IDLE_TIMEOUT_MS, sink);
    } catch (error) {
      if (error instanceof BodySinkError) throw error.cause;
      throw mapError(error, target);
    }
    // Not inside work that may not wait (an admission review: lib/util/abort-scope.ts).
    const wait = answer.status === 429 && retries < RATE_LIMIT_RETRIES && retryWaitsAllowed() ? retryAfterMs(answer.retryAfter, options.clock()) : null;
    if (wait === null) break;
    await (options.sleep ?? sleep)(wait);
  }
  if (answer.status < 200 || answer.status > 299) throw mapError(new KubeHttpStatusError(answer.status, answer.text), target);
  return answer;
}
