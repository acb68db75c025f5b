/**
 * Credentials never reach a log line, whatever a caller hands the logger (lib/log.ts): the
 * webhook's token (in a path, a path parameter or an Authorization header), event signatures.
 */
import { describe, expect, it } from 'vitest';
import { jsonLogger, memoryLogger } from '../lib/log.ts';

const TOKEN = 'Tk7pQ2vX9mK4pL7nB3wY6cH1dF5gJ0sA';

describe('log redaction', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a whole API Gateway event', { event: { rawPath: `/webhook/${TOKEN}`, pathParameters: { token: TOKEN }, requestContext: { http: { path: `/webhook/${TOKEN}` } } } }],
    ['an Authorization header in any case', { headers: { Authorization: `Bearer ${TOKEN}` } }],
    ['a signature header', { headers: { 'x-podroute-signature': `sha256=${TOKEN}` } }],
    ['an error whose message names the URL', { error: new Error(`POST https://api.example/webhook/${TOKEN}?timeout=5s failed`) }],
    ['an error whose cause names the URL', { error: new Error('webhook call failed', { cause: new Error(`at /webhook/${TOKEN}`) }) }],
  ])('%s', (_name, fields) => {
    const lines: string[] = [];
    jsonLogger({ sink: (line) => lines.push(line) }).log('info', 'x', fields);
    const memory = memoryLogger();
    memory.log('info', 'x', fields);
    const out = lines.join('\n') + JSON.stringify(memory.lines);
    expect(out).toContain('[redacted]');
    expect(out).not.toContain(TOKEN);
  });

  it('keeps what is no credential', () => {
    const lines: string[] = [];
    jsonLogger({ sink: (line) => lines.push(line) }).log('info', 'webhook.admitted', { node: 'node-a', path: '/webhook', podCidrs: ['10.0.0.0/24'] });
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ node: 'node-a', path: '/webhook', podCidrs: ['10.0.0.0/24'] });
  });
});
