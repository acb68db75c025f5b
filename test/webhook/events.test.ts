import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { nodeEventSchema, signEvent } from '../../lib/webhook/events.ts';
import { SECRET } from './fixtures.ts';

/** An independent statement of the signing rule: HMAC-SHA256(secret, "<ts>.<body bytes>"). */
function expectedSignature(body: Buffer, secret: string, ts: number): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.concat([Buffer.from(`${ts}.`), body])).digest('hex')}`;
}

describe('signEvent', () => {
  it.each<[string, string | Buffer, number]>([
    ['ASCII body', '{"type":"NodeJoined","nodeName":"node-1"}', 1_700_000_000],
    ['non-ASCII string (signed as UTF-8)', '{"note":"n\u00f6de \u2603"}', 1],
    ['Buffer body with non-UTF-8 bytes', Buffer.from([0x00, 0xff, 0x7b]), 0],
    ['empty body', '', 1_750_000_000],
  ])('%s', (_name, body, ts) => {
    const headers = signEvent(body, SECRET, ts);
    expect(Object.keys(headers).sort()).toEqual(['x-podroute-signature', 'x-podroute-timestamp']);
    expect(headers['x-podroute-timestamp']).toBe(String(ts));
    expect(headers['x-podroute-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    expect(headers['x-podroute-signature']).toBe(expectedSignature(bytes, SECRET, ts));
    expect(signEvent(bytes, SECRET, ts)).toEqual(headers);
  });

  it.each<[string, string, string, number]>([
    ['another body', '{"a":2}', SECRET, 100],
    ['another secret', '{"a":1}', `${SECRET}x`, 100],
    ['another timestamp', '{"a":1}', SECRET, 101],
  ])('changes with %s', (_name, body, secret, ts) => {
    expect(signEvent(body, secret, ts)['x-podroute-signature']).not.toBe(signEvent('{"a":1}', SECRET, 100)['x-podroute-signature']);
  });

  it.each<[string, string, number]>([
    ['fractional timestamp', SECRET, 1.5],
    ['negative timestamp', SECRET, -1],
    ['NaN timestamp', SECRET, Number.NaN],
    ['empty secret', '', 1],
  ])('rejects %s', (_name, secret, ts) => {
    expect(() => signEvent('{}', secret, ts)).toThrow(InvalidInputError);
  });
});

describe('nodeEventSchema', () => {
  it.each<[unknown, boolean]>([
    [{ type: 'NodeJoined', nodeName: 'node-1' }, true],
    [{ type: 'NodeLeft', nodeName: 'ip-10-0-0-1.ec2.internal' }, true],
    [{ type: 'NodeLeft', nodeName: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }, true],
    [{ type: 'NodeLeft', nodeName: 'a'.repeat(254) }, false],
    [{ type: 'NodeLeft', nodeName: '-node' }, false],
    [{ type: 'NodeLeft', nodeName: 'Node' }, false],
    [{ type: 'NodeLeft', nodeName: '' }, false],
    [{ type: 'nodejoined', nodeName: 'node-1' }, false],
    [{ type: 'NodeJoined' }, false],
    [{ type: 'NodeJoined', nodeName: 'node-1', extra: 1 }, false],
  ])('%j -> %s', (value, ok) => {
    expect(nodeEventSchema().safeParse(value).success).toBe(ok);
  });
});
