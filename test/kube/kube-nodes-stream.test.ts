/**
 * A node list page read as it arrives, over real HTTPS: a page sent in many small writes reads
 * as the whole; a body that is cut short or is not JSON is a retryable "not JSON" KubeApiError
 * (the next run lists again), not an unreachable server.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, KubeNodes } from '../../lib/kube/kube-nodes.ts';

const TLS_DIR = new URL('../../infra/local/kube/tls/', import.meta.url);
const ca = readFileSync(new URL('ca.crt', TLS_DIR), 'utf8');

/** What the server writes for the next list request: the body's writes, in order. */
let writes: string[] = [];
let server: https.Server;
let url = '';

beforeAll(async () => {
  server = https.createServer({ cert: readFileSync(new URL('server.crt', TLS_DIR), 'utf8'), key: readFileSync(new URL('server.key', TLS_DIR), 'utf8') }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const parts = writes;
    const next = (i: number): void => {
      if (i === parts.length) res.end();
      else res.write(parts[i], () => setImmediate(() => next(i + 1)));
    };
    next(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const kube = () => new KubeNodes({ getCurrentCluster: () => ({ server: url }), applyToHTTPSOptions: async (opts) => void Object.assign(opts, { ca }) });

function node(name: string): object {
  return { metadata: { name, uid: `uid-${name}`, managedFields: [{ manager: 'kubelet', fieldsV1: { 'f:status': { '.': {} } } }] }, spec: { providerID: `aws:///us-east-1a/i-${name}` }, status: { images: [{ names: ['x}"]'] }] } };
}

/** `text` in writes of `size` characters. */
const inParts = (text: string, size: number): string[] => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

const page = JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: ['a', 'b', 'c'].map(node) });

describe('a node list page read as it arrives', () => {
  it.each([1, 7, 64, page.length])('reads a page written %i characters at a time as the whole page', async (size) => {
    writes = inParts(page, size);
    const nodes = await kube().listNodes();
    expect(nodes.map((n) => [n.metadata.name, n.spec?.providerID])).toEqual([
      ['a', 'aws:///us-east-1a/i-a'],
      ['b', 'aws:///us-east-1a/i-b'],
      ['c', 'aws:///us-east-1a/i-c'],
    ]);
  });

  it.each<[string, string[]]>([
    ['cut short after an item', inParts(page.slice(0, page.indexOf('},{') + 1), 50)],
    ['cut short inside an item', inParts(page.slice(0, page.length - 40), 50)],
    ['not JSON from its first byte', ['<html>', 'busy</html>']],
    ['followed by more text', [page, ' {}']],
  ])('a page %s is a retryable "not JSON" KubeApiError', async (_case, parts) => {
    writes = parts;
    const error = await kube().listNodes().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ retryable: true, message: 'list nodes: the answer is not JSON' });
  });
});
