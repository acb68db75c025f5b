/** Builders for webhook tests: nodes, AdmissionReviews, signed events, HTTP API requests. */
import { signEvent } from '../../lib/webhook/events.ts';
import type { classifyRequest } from '../../lib/webhook/request.ts';

/** What the webhook hands to classifyRequest: an API Gateway request, as far as it reads one. */
export type WebhookRequest = Parameters<typeof classifyRequest>[0];

/** The webhook token (the API server's credential). */
export const SECRET = 'Zq8rT2vX9mK4pL7nB3wY6cH1dF5gJ0sA8eU2iO4kR7tV9xQ3';
/** The event signing key, a secret of its own (tools that sign NodeJoined / NodeLeft). */
export const SIGNING_KEY = 'kS3pV8wN1qT6zR4mY9cB2xH7dL5fJ0aG3eU8iO1kP6tW4vQ9';
export const NOW_SECONDS = 1_750_000_000;
export const options = { secret: SECRET, signingKey: SIGNING_KEY, now: () => NOW_SECONDS * 1000 };

export const NODE_NAME = 'ip-10-0-1-23.eu-west-1.compute.internal';

export function node(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE_NAME, uid: '7a1c7a55-0000-4000-8000-000000000001' },
    spec: { providerID: 'aws:///eu-west-1a/i-0123456789abcdef0' },
    ...overrides,
  };
}

const gvk = { group: '', version: 'v1', kind: 'Node' };
const gvr = { group: '', version: 'v1', resource: 'nodes' };

export function review(operation: string, request: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '0f6f2b9e-5d1a-4c47-9b0e-3c1d2e4f5a6b',
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: NODE_NAME,
      operation,
      userInfo: { username: `system:node:${NODE_NAME}`, groups: ['system:nodes'] },
      object: operation === 'DELETE' ? null : node(),
      // An UPDATE's stored node: the one before the cloud controller manager set its providerID.
      oldObject: operation === 'DELETE' ? node() : operation === 'UPDATE' ? node({ spec: {} }) : null,
      dryRun: false,
      ...request,
    },
  };
}

export const json = (value: unknown): string => JSON.stringify(value);

/** An admission request carrying the token in the path, `/webhook/{token}` (unless other parts are given). */
export function withToken(body: unknown, parts: Partial<WebhookRequest> = {}): WebhookRequest {
  return {
    headers: { 'content-type': 'application/json' },
    rawBody: typeof body === 'string' || Buffer.isBuffer(body) ? body : json(body),
    isBase64Encoded: false,
    pathParameters: { token: SECRET },
    ...parts,
  };
}

/** A request signed as a tool would sign it (`at` in unix seconds). */
export function signed(
  body: string | Buffer,
  { secret = SIGNING_KEY, at = NOW_SECONDS, headers = {} }: { secret?: string; at?: number; headers?: Record<string, string> } = {},
): WebhookRequest {
  return {
    headers: { 'content-type': 'application/json', ...signEvent(body, secret, at), ...headers },
    rawBody: body,
    isBase64Encoded: false,
    query: undefined,
  };
}

export const event = (type: string, nodeName: string = NODE_NAME): string => json({ type, nodeName });
