/**
 * The request layer of the node webhook: authenticate, bound, decode and validate one HTTP request
 * (API Gateway HTTP API, payload format 2.0) and say what it is. Pure: secrets and the clock come in
 * as arguments. An AdmissionReview carries the webhook token, a NodeEvent an HMAC signature
 * (./events.ts); the order of checks and why: docs/decisions/0014-webhook-request.md.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { PodrouteError } from '../errors.ts';
import { admissionReviewSchema, looksLikeAdmissionReview, type AdmissionReview } from './admission.ts';
import { MAX_CLOCK_SKEW_SECONDS, SIGNATURE_HEADER, TIMESTAMP_HEADER, eventSignature, nodeEventSchema, type NodeEvent } from './events.ts';
import { describeFirstIssue, issueWording } from './validation.ts';

/** 1 MiB: the largest body the webhook reads (a Node object is a few KiB). */
const MAX_BODY_BYTES = 1024 * 1024;
/** The path parameter that carries the API server's token (and the query parameter refused). */
const TOKEN_PARAMETER = 'token';

type Values = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The parts of an HTTP API (payload 2.0) event the webhook reads. */
type WebhookRequest = {
  /** Names in any case; a value list (or differing duplicates) makes that header ambiguous. */
  headers?: Values | null;
  /** The body as received: bytes, or the event's `body` string. Absent means empty. */
  rawBody?: Buffer | string | null;
  /** HTTP API sets this when `body` is base64 of the bytes sent. */
  isBase64Encoded?: boolean;
  /** `queryStringParameters`. */
  query?: Values | null;
  /** `pathParameters` (the route `/webhook/{token}`). */
  pathParameters?: Values | null;
};

type WebhookOptions = {
  /** The webhook token (the API server's credential). Must not be empty. */
  secret: string;
  /** The token before the last rotation, still accepted; absent, null or empty when there is none. */
  previousSecret?: string | null;
  /**
   * The HMAC key of signed node events, another secret than the token. Null when it could not be
   * read: a signed request is then answered 503 (retry), an admission review is not affected.
   */
  signingKey: string | null;
  /** The signing key before the last rotation; absent, null or empty when there is none. */
  previousSigningKey?: string | null;
  /** Milliseconds since the Unix epoch, like `Date.now`. */
  now: () => number;
};

type RejectedRequest = { kind: 'rejected'; status: 400 | 401 | 413 | 503; message: string };

type ClassifiedRequest =
  | { kind: 'admission'; review: AdmissionReview }
  | { kind: 'event'; event: NodeEvent }
  | RejectedRequest;

const UNAUTHORIZED: RejectedRequest = { kind: 'rejected', status: 401, message: 'unauthorized' };
const UNAVAILABLE: RejectedRequest = { kind: 'rejected', status: 503, message: 'service unavailable' };
const badRequest = (message: string): RejectedRequest => ({ kind: 'rejected', status: 400, message });

/** Marks a header or parameter given more than once with different values. */
const AMBIGUOUS = Symbol('ambiguous');
type Value = string | typeof AMBIGUOUS;

/** Classifies one webhook request; see the module comment for the order of checks. */
export function classifyRequest(request: WebhookRequest, options: WebhookOptions): ClassifiedRequest {
  if (options.secret === '' || options.signingKey === '') {
    // A configuration error, not the caller's: an empty secret would let an empty token in.
    throw new PodrouteError('the webhook token or signing key is empty; refusing to authenticate anything');
  }
  const headers = lowerCaseKeys(request.headers);
  const tokens = presentedTokens(request, headers);
  const signature = headers.get(SIGNATURE_HEADER);

  if (tokens.length === 0 && signature === undefined) return UNAUTHORIZED;
  const secrets = accepted(options.secret, options.previousSecret);
  const secretDigests = secrets.map((secret) => sha256(secret));
  // Every presented token is compared with every accepted secret (no short circuit): one wrong copy
  // fails the request.
  const tokenValid = tokens.length > 0 && tokens.map((token) => anyEqual(secretDigests.map((digest) => digestsEqual(token, digest)))).every(Boolean);
  if (tokens.length > 0 && !tokenValid) return UNAUTHORIZED;

  const body = readBody(request);
  if (body.kind === 'rejected') return body;

  let signatureValid = false;
  if (signature !== undefined) {
    if (options.signingKey === null) return UNAVAILABLE;
    const keys = accepted(options.signingKey, options.previousSigningKey);
    signatureValid = verifySignature(body.bytes, signature, headers.get(TIMESTAMP_HEADER), keys, options.now);
    if (!signatureValid) return UNAUTHORIZED;
  }

  const json = parseJson(body.bytes);
  if (json.kind === 'rejected') return json;

  if (looksLikeAdmissionReview(json.value) || !signatureValid) {
    if (!tokenValid) return UNAUTHORIZED;
    const review = admissionReviewSchema().safeParse(json.value, { error: issueWording });
    return review.success ? { kind: 'admission', review: review.data } : badRequest(describeFirstIssue(review.error));
  }
  const event = nodeEventSchema().safeParse(json.value, { error: issueWording });
  return event.success ? { kind: 'event', event: event.data } : badRequest(describeFirstIssue(event.error));
}

// --- credentials --------------------------------------------------------------------------------

function lowerCaseKeys(values: Values | null | undefined): Map<string, Value> {
  const out = new Map<string, Value>();
  for (const [name, raw] of Object.entries(values ?? {})) {
    if (raw === undefined) continue;
    const key = name.toLowerCase();
    const list = typeof raw === 'string' ? [raw] : [...raw];
    for (const item of list) {
      const value = item.trim();
      const seen = out.get(key);
      out.set(key, seen === undefined || seen === value ? value : AMBIGUOUS);
    }
    if (list.length === 0 && !out.has(key)) out.set(key, '');
  }
  return out;
}

/**
 * Tokens presented in the path and an `Authorization: Bearer` header. A token in the query string
 * is refused (it counts as a wrong token): query strings are kept in more places than paths
 * (proxies, browser history, tools that log URLs), and no caller of ours needs one.
 */
function presentedTokens(request: WebhookRequest, headers: Map<string, Value>): Value[] {
  const tokens: Value[] = [];
  const token = lowerCaseKeys(request.pathParameters).get(TOKEN_PARAMETER);
  if (token !== undefined) tokens.push(token);
  if (lowerCaseKeys(request.query).has(TOKEN_PARAMETER)) tokens.push(AMBIGUOUS);
  const authorization = headers.get('authorization');
  if (authorization === AMBIGUOUS) tokens.push(AMBIGUOUS);
  else if (authorization !== undefined) {
    // Other schemes (Basic, AWS SigV4, ...) are not ours and carry no token for us.
    const bearer = /^bearer(?:[ \t]+(.*))?$/i.exec(authorization);
    if (bearer) tokens.push((bearer[1] ?? '').trim());
  }
  return tokens;
}

function sha256(text: string | Buffer): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Constant-time equality of `presented` with the secret, compared as two 32-byte digests. */
function digestsEqual(presented: Value, expectedDigest: Buffer): boolean {
  // An ambiguous value is compared too (as an empty string) and then failed, to keep one path.
  const equal = timingSafeEqual(sha256(presented === AMBIGUOUS ? '' : presented), expectedDigest);
  return equal && presented !== AMBIGUOUS;
}

const TIMESTAMP = /^[0-9]{1,15}$/;

function verifySignature(bytes: Buffer, signature: Value, timestamp: Value | undefined, secrets: readonly string[], now: () => number): boolean {
  const stamp = typeof timestamp === 'string' && TIMESTAMP.test(timestamp) ? timestamp : null;
  const fresh = stamp !== null && Math.abs(now() - Number(stamp) * 1000) <= MAX_CLOCK_SKEW_SECONDS * 1000;
  // The HMAC is computed and compared whatever the timestamp and with every accepted secret, so a
  // stale stamp or the secret that matches costs the same time.
  const matches = anyEqual(secrets.map((secret) => digestsEqual(signature, sha256(eventSignature(bytes, secret, stamp ?? '')))));
  return matches && fresh;
}

/** The current value, then the previous one when there is a different, non-empty one. */
function accepted(current: string, previous: string | null | undefined): string[] {
  return previous && previous !== current ? [current, previous] : [current];
}

/** True when any comparison matched; every comparison has already been made by the caller. */
const anyEqual = (results: readonly boolean[]): boolean => results.includes(true);

// --- body ---------------------------------------------------------------------------------------

type Body = { kind: 'body'; bytes: Buffer } | RejectedRequest;

const TOO_LARGE: RejectedRequest = { kind: 'rejected', status: 413, message: `body is larger than ${MAX_BODY_BYTES} bytes (1 MiB)` };
/** The longest base64 text whose decoded bytes can still fit (before the exact check). */
const MAX_BASE64_LENGTH = 4 * Math.ceil(MAX_BODY_BYTES / 3);
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;

function readBody(request: WebhookRequest): Body {
  const raw = request.rawBody ?? '';
  let bytes: Buffer;
  if (request.isBase64Encoded === true) {
    const text = typeof raw === 'string' ? raw : raw.toString('latin1');
    if (text.length > MAX_BASE64_LENGTH) return TOO_LARGE;
    if (!isStrictBase64(text)) return badRequest('body is not valid base64');
    bytes = Buffer.from(text, 'base64');
  } else if (typeof raw === 'string') {
    if (Buffer.byteLength(raw, 'utf8') > MAX_BODY_BYTES) return TOO_LARGE;
    bytes = Buffer.from(raw, 'utf8');
  } else {
    bytes = raw;
  }
  return bytes.length > MAX_BODY_BYTES ? TOO_LARGE : { kind: 'body', bytes };
}

/** Padded standard base64 (what API Gateway produces); Node's own decoder would skip junk. */
function isStrictBase64(text: string): boolean {
  if (text.length % 4 !== 0 || NOT_BASE64.test(text)) return false;
  const pad = text.indexOf('=');
  if (pad === -1) return true;
  return pad >= text.length - 2 && text.slice(pad) === '='.repeat(text.length - pad);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Buffer): { kind: 'json'; value: unknown } | RejectedRequest {
  try {
    return { kind: 'json', value: JSON.parse(UTF8.decode(bytes)) as unknown };
  } catch {
    return badRequest('body is not JSON');
  }
}
