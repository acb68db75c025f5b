/**
 * A silent API server (a connection accepted, then nothing: no TLS handshake, no answer) ends in a
 * retryable, mapped error after the idle timeout, not in a request that hangs until the Lambda's
 * own timeout.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mapError, send } from '../../lib/kube/kube-http.ts';
import { KubeApiError } from '../../lib/kube/kube-errors.ts';

let server: Server;
const sockets: Socket[] = [];
let port = 0;

beforeEach(async () => {
  server = createServer((socket) => {
    sockets.push(socket); // accepted, never answered
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the Kubernetes HTTPS transport against a silent server', () => {
  it('gives up after the idle timeout with an error that maps to a retryable KubeApiError', async () => {
    const endpoint = { getCurrentCluster: () => ({ server: `https://127.0.0.1:${port}` }), applyToHTTPSOptions: async () => undefined };
    const error = await send(endpoint, { method: 'GET', path: '/api/v1/nodes/node-a' }, 200).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'KubeRequestTimeoutError' });
    const mapped = mapError(error, { verb: 'get', resource: 'nodes', name: 'node-a' });
    expect(mapped).toBeInstanceOf(KubeApiError);
    expect(mapped.retryable).toBe(true);
    expect(mapped.message).toContain('could not be reached');
  });
});
