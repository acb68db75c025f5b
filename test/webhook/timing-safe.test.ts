/**
 * The auth comparison: every credential goes through crypto.timingSafeEqual with two buffers of
 * the same length (SHA-256 digests), whatever was presented, so it never throws and never returns
 * early on a length difference.
 */
import type * as NodeCrypto from 'node:crypto';
import { timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { signEvent } from '../../lib/webhook/events.ts';
import type * as Request from '../../lib/webhook/request.ts';
import { NOW_SECONDS, SECRET, SIGNING_KEY, event, json, options, review, withToken, type WebhookRequest } from './fixtures.ts';

// Hoisted above the imports: the webhook code sees the spy.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof NodeCrypto>();
  return { ...actual, timingSafeEqual: vi.fn((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => actual.timingSafeEqual(a, b)) };
});

const spy = vi.mocked(timingSafeEqual);

// The suite runs test files in shared workers (vitest.config.ts: isolate false), so another file may
// have loaded the webhook code already, bound to the real node:crypto. A fresh module graph, imported
// after the mock is in place, makes this file's copy see the spy whatever ran before it.
let classifyRequest: typeof Request.classifyRequest;
beforeAll(async () => {
  vi.resetModules();
  ({ classifyRequest } = await import('../../lib/webhook/request.ts'));
});
// Shared workers do not reset module mocks between files: take it away, and the modules bound to it.
afterAll(() => {
  vi.doUnmock('node:crypto');
  vi.resetModules();
});
const goodSignature = signEvent(event('NodeJoined'), SIGNING_KEY, NOW_SECONDS);

describe('auth comparison', () => {
  beforeEach(() => {
    spy.mockClear();
  });

  it.each<[string, WebhookRequest, number, 401 | 'accepted']>([
    ['empty token in path', withToken(review('CREATE'), { pathParameters: { token: '' } }), 1, 401],
    ['empty bearer token', withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: 'Bearer' } }), 1, 401],
    ['one-character token', withToken(review('CREATE'), { pathParameters: { token: 'x' } }), 1, 401],
    ['1 MiB token', withToken(review('CREATE'), { pathParameters: { token: 'x'.repeat(1024 * 1024) } }), 1, 401],
    ['secret plus one character', withToken(review('CREATE'), { pathParameters: { token: `${SECRET}\u00e9` } }), 1, 401],
    ['secret prefix', withToken(review('CREATE'), { pathParameters: { token: SECRET.slice(0, -1) } }), 1, 401],
    ['the right token', withToken(review('CREATE')), 1, 'accepted'],
    ['two right tokens', withToken(review('CREATE'), { headers: { authorization: `Bearer ${SECRET}` } }), 2, 'accepted'],
    ['right token, then a wrong one: both compared', withToken(review('CREATE'), { headers: { authorization: 'Bearer no' } }), 2, 401],
    ['empty signature', { headers: { ...goodSignature, 'x-podroute-signature': '' }, rawBody: event('NodeJoined') }, 1, 401],
    ['very long signature', { headers: { ...goodSignature, 'x-podroute-signature': `sha256=${'a'.repeat(100_000)}` }, rawBody: event('NodeJoined') }, 1, 401],
    ['right signature, stale timestamp (still compared)', { headers: { ...goodSignature, 'x-podroute-timestamp': String(NOW_SECONDS - 1000) }, rawBody: event('NodeJoined') }, 1, 401],
    ['right signature', { headers: goodSignature, rawBody: event('NodeJoined') }, 1, 'accepted'],
    ['right signature, admission body, no token', { headers: signEvent(json(review('CREATE')), SIGNING_KEY, NOW_SECONDS), rawBody: json(review('CREATE')) }, 1, 401],
  ])('%s', (_name, request, calls, outcome) => {
    const result = classifyRequest(request, options);
    if (outcome === 401) expect(result).toEqual({ kind: 'rejected', status: 401, message: 'unauthorized' });
    else expect(result.kind).not.toBe('rejected');
    expect(spy).toHaveBeenCalledTimes(calls);
    for (const [a, b] of spy.mock.calls) {
      expect(a.byteLength).toBe(32);
      expect(b.byteLength).toBe(32);
    }
  });
});
