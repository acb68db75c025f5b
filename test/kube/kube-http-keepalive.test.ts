/**
 * The Kubernetes transport keeps its connections open between calls, the way a kubeconfig's
 * @kubernetes/client-node endpoint would not (it builds a new agent per call), and sends a call once
 * more, on a new connection, only when a kept-alive socket was reset before any answer (Node.js docs,
 * `request.reusedSocket`). Over real TLS against a local server that counts connections and requests.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { send, type KubeEndpoint } from '../../lib/kube/kube-http.ts';

const tls = (file: string): string => readFileSync(new URL(`../../infra/local/kube/tls/${file}`, import.meta.url), 'utf8');

/** What the server does with the n-th request it reads (from 1) on its c-th connection (from 1): answer it, or reset the connection. */
type Behaviour = (n: number, c: number) => 'answer' | 'reset';

type Counting = { connections: number; requests: number; url: string; close: () => Promise<void> };

const servers: Counting[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function countingServer(behaviour: Behaviour): Promise<Counting> {
  const sockets = new Set<Socket>();
  const counts = { connections: 0, requests: 0 };
  const connectionOf = new WeakMap<Socket, number>();
  const server = https.createServer({ cert: tls('server.crt'), key: tls('server.key') }, (req, res) => {
    counts.requests++;
    if (behaviour(counts.requests, connectionOf.get(req.socket) ?? 0) === 'reset') {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Node', n: counts.requests }));
  });
  server.on('secureConnection', (socket: Socket) => {
    counts.connections++;
    connectionOf.set(socket, counts.connections);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const counting: Counting = {
    get connections() { return counts.connections; },
    get requests() { return counts.requests; },
    url: `https://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(counting);
  return counting;
}

/** A kubeconfig for the server, read by @kubernetes/client-node as the functions read a kube secret. */
function kubeconfigFor(url: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: url, caData: Buffer.from(tls('ca.crt')).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return config;
}

const get = (endpoint: KubeEndpoint, name: string) => send(endpoint, { method: 'GET', path: `/api/v1/nodes/${name}` });

describe('the Kubernetes transport keeps connections open', () => {
  it('sends five calls of a client-node kubeconfig over one TLS connection', async () => {
    const server = await countingServer(() => 'answer');
    const endpoint = kubeconfigFor(server.url);
    for (const name of ['a', 'b', 'c', 'd', 'e']) expect((await get(endpoint, name)).status).toBe(200);
    expect({ connections: server.connections, requests: server.requests }).toEqual({ connections: 1, requests: 5 });
  });

  it('keeps a proxy agent the kubeconfig gives (any agent but a plain https.Agent)', async () => {
    const server = await countingServer(() => 'answer');
    const config = kubeconfigFor(server.url);
    class ProxyLike extends https.Agent {
      used = 0;
      override createConnection(...args: Parameters<https.Agent['createConnection']>): ReturnType<https.Agent['createConnection']> {
        this.used++;
        return super.createConnection(...args);
      }
    }
    const proxy = new ProxyLike({ ca: tls('ca.crt') });
    const endpoint: KubeEndpoint = {
      getCurrentCluster: () => config.getCurrentCluster(),
      applyToHTTPSOptions: async (opts) => {
        await config.applyToHTTPSOptions(opts);
        opts.agent = proxy;
      },
    };
    expect((await get(endpoint, 'a')).status).toBe(200);
    expect(proxy.used).toBe(1);
    proxy.destroy();
  });
});

describe('the Kubernetes transport after a reset', () => {
  it('sends a call once more on a new connection when its kept-alive socket is reset before any answer', async () => {
    const server = await countingServer((n) => (n === 2 ? 'reset' : 'answer'));
    const endpoint = kubeconfigFor(server.url);
    expect((await get(endpoint, 'a')).status).toBe(200);
    const again = await get(endpoint, 'b');
    expect(again).toMatchObject({ status: 200 });
    expect(JSON.parse(again.text)).toEqual({ kind: 'Node', n: 3 });
    expect({ connections: server.connections, requests: server.requests }).toEqual({ connections: 2, requests: 3 });
  });

  it('sends it once more only: a reset on the new connection is the call’s error', async () => {
    const server = await countingServer((n) => (n === 1 ? 'answer' : 'reset'));
    const endpoint = kubeconfigFor(server.url);
    expect((await get(endpoint, 'a')).status).toBe(200);
    await expect(get(endpoint, 'b')).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect({ connections: server.connections, requests: server.requests }).toEqual({ connections: 2, requests: 3 });
  });

  it('does not send again a call whose new connection was reset', async () => {
    const server = await countingServer(() => 'reset');
    const endpoint = kubeconfigFor(server.url);
    await expect(get(endpoint, 'a')).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect({ connections: server.connections, requests: server.requests }).toEqual({ connections: 1, requests: 1 });
  });

  it('sends it on a new connection even when every socket the pool holds was dropped', async () => {
    // Two calls at once leave two kept-alive sockets; then both are dead (a NAT's idle cutoff, a
    // restarted API server): a request on either is reset.
    const server = await countingServer((_n, c) => (c <= 2 && server.requests > 2 ? 'reset' : 'answer'));
    const endpoint = kubeconfigFor(server.url);
    const first = await Promise.all([get(endpoint, 'a'), get(endpoint, 'b')]);
    expect(first.map(({ status }) => status)).toEqual([200, 200]);
    expect(server.connections).toBe(2);
    expect((await get(endpoint, 'c')).status).toBe(200);
    expect({ connections: server.connections, requests: server.requests }).toEqual({ connections: 3, requests: 4 });
  });

  it('does not send a write again: the server may have applied it', async () => {
    const server = await countingServer((n) => (n === 2 ? 'reset' : 'answer'));
    const endpoint = kubeconfigFor(server.url);
    expect((await get(endpoint, 'a')).status).toBe(200);
    const patch = send(endpoint, { method: 'PATCH', path: '/api/v1/nodes/a/status', body: {}, contentType: 'application/strategic-merge-patch+json' });
    await expect(patch).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect({ connections: server.connections, requests: server.requests }).toEqual({ connections: 1, requests: 2 });
  });
});
