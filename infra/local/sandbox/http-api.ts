/**
 * A local stand-in for an API Gateway HTTP API (payload format 2.0) in front of one Lambda: a
 * node:http server on 127.0.0.1 that matches each request against route keys such as
 * `POST /webhook/{token}`, builds the event API Gateway would send (`version: '2.0'`, `rawPath`,
 * `rawQueryString`, lower-cased headers with repeated ones joined by commas, `body` as text or
 * base64, `pathParameters`, `requestContext.http`), invokes the handler and writes its answer back
 * the way API Gateway reads it (a structured result, or any other value as a 200 JSON body).
 * Unmatched requests get API Gateway's `404 {"message":"Not Found"}`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenLocal } from '../listen.ts';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { lambdaContext } from '../lambda-context.ts';

export type HttpApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

export interface HttpApiOptions {
  /** Route keys, e.g. `['POST /webhook/{token}', 'POST /webhook']`; `{name}` matches one path segment. */
  routes: readonly string[];
  handler: HttpApiHandler;
  functionName?: string;
  /** Told about a handler that threw (API Gateway answers 500 Internal Server Error then). */
  onError?: (error: unknown) => void;
}

export interface HttpApi {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Requests answered, by status code. */
  readonly responses: Readonly<Record<number, number>>;
  close(): Promise<void>;
}

/** API Gateway's payload limit. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  key: string;
  method: string;
  names: string[];
  pattern: RegExp;
}

function compile(routeKey: string): CompiledRoute {
  const [method = '', path = ''] = routeKey.split(' ');
  const names: string[] = [];
  const source = path
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1] ?? '');
      return '([^/]+)';
    })
    .join('/');
  return { key: routeKey, method: method.toUpperCase(), names, pattern: new RegExp(`^${source}$`) };
}

const TEXT_TYPES = /^(text\/|application\/(json|[\w.+-]+\+json|x-www-form-urlencoded|xml)|$)/i;

export async function startHttpApi(options: HttpApiOptions): Promise<HttpApi> {
  const routes = options.routes.map(compile);
  const functionName = options.functionName ?? 'local-http-function';
  const responses: Record<number, number> = {};

  const send = (res: http.ServerResponse, status: number, headers: Record<string, string>, body: Buffer | string): void => {
    responses[status] = (responses[status] ?? 0) + 1;
    res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const json = (res: http.ServerResponse, status: number, value: unknown) =>
    send(res, status, { 'content-type': 'application/json' }, JSON.stringify(value));

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    let matched: { route: CompiledRoute; params: Record<string, string> } | undefined;
    for (const route of routes) {
      const m = route.method === method ? route.pattern.exec(url.pathname) : null;
      if (!m) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? '');
      });
      matched = { route, params };
      break;
    }
    if (!matched) return json(res, 404, { message: 'Not Found' });

    const headers: Record<string, string> = {};
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = (req.rawHeaders[i] ?? '').toLowerCase();
      const value = req.rawHeaders[i + 1] ?? '';
      headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
    }
    const query: Record<string, string> = {};
    for (const [name, value] of url.searchParams) query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
    const text = TEXT_TYPES.test((headers['content-type'] ?? '').split(';')[0]?.trim() ?? '');
    const now = new Date();
    const requestId = randomUUID();
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: matched.route.key,
      rawPath: url.pathname,
      rawQueryString: url.search.replace(/^\?/, ''),
      headers,
      ...(url.search === '' ? {} : { queryStringParameters: query }),
      ...(matched.route.names.length > 0 ? { pathParameters: matched.params } : {}),
      ...(body.length > 0 ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
      isBase64Encoded: body.length > 0 && !text,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        domainName: headers.host ?? '127.0.0.1',
        domainPrefix: (headers.host ?? '127').split('.')[0] ?? '',
        http: {
          method,
          path: url.pathname,
          protocol: `HTTP/${req.httpVersion}`,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId,
        routeKey: matched.route.key,
        stage: '$default',
        time: apiGatewayTime(now),
        timeEpoch: now.getTime(),
      },
    };

    let result: unknown;
    running += 1;
    try {
      result = await options.handler(event, lambdaContext(functionName));
    } catch (error) {
      options.onError?.(error);
      return json(res, 500, { message: 'Internal Server Error' });
    } finally {
      running -= 1;
    }
    if (isStructured(result)) {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(result.headers ?? {})) out[name.toLowerCase()] = String(value);
      const payload = result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
      return send(res, result.statusCode ?? 200, out, payload);
    }
    // Payload 2.0: anything without a statusCode is a 200 with the value as JSON.
    return send(res, 200, { 'content-type': 'application/json' }, typeof result === 'string' ? result : JSON.stringify(result ?? null));
  };

  /** Handler invocations still running (a caller that gave up does not stop them, as on Lambda). */
  let running = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) return json(res, 413, { message: 'Request Entity Too Large' });
      handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        options.onError?.(error);
        if (!res.headersSent) json(res, 500, { message: 'Internal Server Error' });
      });
    });
  });
  const listening = await listenLocal(server);
  const url = `http://127.0.0.1:${listening.port}`;
  return {
    url,
    responses,
    // Closing waits for the invocations still running, so none outlives the stand-ins it talks to.
    close: async () => {
      await listening.close();
      while (running > 0) await sleep(20);
    },
  };
}

function isStructured(value: unknown): value is APIGatewayProxyStructuredResultV2 & { statusCode: number } {
  return typeof value === 'object' && value !== null && typeof (value as { statusCode?: unknown }).statusCode === 'number';
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `12/Mar/2020:19:03:58 +0000`, API Gateway's requestContext.time. */
function apiGatewayTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()] ?? 'Jan'}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}
