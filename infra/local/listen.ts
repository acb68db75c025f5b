/** Starting and stopping the stand-ins' servers: loopback only, a free port unless one is asked for. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listenLocal(server: Server, port = 0): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
