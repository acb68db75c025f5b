/**
 * Node events that tools other than the API server send to the node webhook, and how they are
 * signed: `{"type": "NodeJoined" | "NodeLeft", "nodeName": "..."}`, HMAC-SHA256 over
 * `<timestamp>.<raw body>` with the event signing key (not the URL token: ./request.ts), in headers
 * `x-podroute-timestamp` and `x-podroute-signature: sha256=<hex>`, within MAX_CLOCK_SKEW_SECONDS.
 */
import { createHmac } from 'node:crypto';
import * as z from '../util/zod-mini.ts';
import { InvalidInputError } from '../errors.ts';
import { NODE_NAME_MESSAGE, isNodeName, orRequired } from './validation.ts';

export const SIGNATURE_HEADER = 'x-podroute-signature';
export const TIMESTAMP_HEADER = 'x-podroute-timestamp';
/** How far a signed timestamp may be from now, either way. */
export const MAX_CLOCK_SKEW_SECONDS = 300;

export const nodeEventSchema = z.onFirstUse(() => z.strictObject(
  {
    type: z.enum(['NodeJoined', 'NodeLeft'], { error: orRequired('must be NodeJoined or NodeLeft') }),
    nodeName: z.string({ error: orRequired(NODE_NAME_MESSAGE) }).check(z.refine(isNodeName, NODE_NAME_MESSAGE)),
  },
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be a JSON object {"type", "nodeName"}' : undefined) },
));

export type NodeEvent = z.infer<ReturnType<typeof nodeEventSchema>>;

type SignatureHeaders = { [SIGNATURE_HEADER]: string; [TIMESTAMP_HEADER]: string };

/** `sha256=<lowercase hex>` of HMAC-SHA256(signingKey, `<timestamp>.<body>`). */
export function eventSignature(body: Buffer | string, signingKey: string, timestamp: number | string): string {
  const hmac = createHmac('sha256', signingKey);
  hmac.update(`${timestamp}.`, 'utf8');
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `sha256=${hmac.digest('hex')}`;
}

/**
 * The headers that authenticate `body` (the exact bytes to be sent; a string is sent as UTF-8) at
 * `timestamp` (unix seconds, an integer; the caller's clock). For tools and tests.
 * Exported for its table-driven test (test/webhook/events.test.ts); webhook tests sign with it.
 */
export function signEvent(body: Buffer | string, signingKey: string, timestamp: number): SignatureHeaders {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new InvalidInputError('timestamp must be a whole number of seconds since the Unix epoch');
  }
  if (signingKey === '') throw new InvalidInputError('the event signing key must not be empty');
  return {
    [SIGNATURE_HEADER]: eventSignature(body, signingKey, timestamp),
    [TIMESTAMP_HEADER]: String(timestamp),
  };
}
