/**
 * A local Lambda endpoint with the two reads `podroute doctor` makes, over the REST-JSON protocol
 * (Lambda API Reference): GetAccountSettings, `GET /2016-08-19/account-settings`, answering
 * `AccountLimit.ConcurrentExecutions` and `UnreservedConcurrentExecutions` (the limit less every
 * function's reservation), and GetFunctionConcurrency, `GET /2019-09-30/functions/<name>/concurrency`,
 * answering `ReservedConcurrentExecutions` (absent for a function without one). An unknown function
 * is `ResourceNotFoundException` (HTTP 404, `x-amzn-errortype`). Test infrastructure.
 */
import http from 'node:http';
import { listenLocal } from '../listen.ts';

export interface LambdaEmulator {
  url: string;
  /** The account's concurrency quota (default 1000; new accounts can have 10). */
  setConcurrencyLimit(limit: number): void;
  /** A function, with its reserved concurrency or none. */
  putFunction(name: string, reserved?: number): void;
  close(): Promise<void>;
}

export async function startLambdaEmulator(): Promise<LambdaEmulator> {
  let limit = 1000;
  const functions = new Map<string, number | undefined>();
  const answer = (req: http.IncomingMessage): { status: number; body: unknown; type?: string } => {
    if (!/^AWS4-HMAC-SHA256 Credential=\S+/.test(req.headers.authorization ?? '')) return { status: 403, type: 'MissingAuthenticationTokenException', body: { message: 'Missing Authentication Token' } };
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/2016-08-19/account-settings') {
      const reserved = [...functions.values()].reduce<number>((sum, r) => sum + (r ?? 0), 0);
      return {
        status: 200,
        body: {
          AccountLimit: { TotalCodeSize: 80530636800, CodeSizeUnzipped: 262144000, CodeSizeZipped: 52428800, ConcurrentExecutions: limit, UnreservedConcurrentExecutions: limit - reserved },
          AccountUsage: { TotalCodeSize: 0, FunctionCount: functions.size },
        },
      };
    }
    const concurrency = /^\/2019-09-30\/functions\/([^/]+)\/concurrency$/.exec(path);
    if (req.method === 'GET' && concurrency) {
      const name = decodeURIComponent(concurrency[1] ?? '');
      if (!functions.has(name)) return { status: 404, type: 'ResourceNotFoundException', body: { Type: 'User', message: `Function not found: ${name}` } };
      const reserved = functions.get(name);
      return { status: 200, body: reserved === undefined ? {} : { ReservedConcurrentExecutions: reserved } };
    }
    return { status: 404, type: 'UnknownOperationException', body: { message: `no operation ${req.method ?? ''} ${path}` } };
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const reply = answer(req);
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.type ? { 'x-amzn-errortype': reply.type } : {}) });
      res.end(JSON.stringify(reply.body));
    });
  });
  const { port, close } = await listenLocal(server);
  return {
    url: `http://127.0.0.1:${port}`,
    setConcurrencyLimit: (value) => void (limit = value),
    putFunction: (name, reserved) => void functions.set(name, reserved),
    close,
  };
}
