/** The emulator's request plumbing: route templates, request context, bounded bodies. */
import type http from 'node:http';
import { ApiError } from './api-error.ts';
import type { Caller } from './nodes.ts';

export type RequestCtx = {
  params: string[];
  query: URLSearchParams;
  body: Buffer;
  contentType: string;
  key: string;
  /** The authenticated user and the managedFields manager of the request. */
  caller: Caller;
};
export type Reply = { code: number; body: unknown; headers?: Record<string, string> };
export type Route = { method: string; template: string; pattern: RegExp; handle: (ctx: RequestCtx) => Promise<Reply> };

const MAX_BODY_BYTES = 3 * 1024 * 1024;
const NAME = '([^/]+)';

/** A route for `template`, whose `{placeholders}` each match one path segment. */
export const route = (method: string, template: string, handle: Route['handle']): Route => ({
  method,
  template,
  pattern: new RegExp('^' + template.replace(/\{[a-z]+\}/g, NAME) + '$'),
  handle,
});

export const param = (ctx: RequestCtx, i = 0): string => ctx.params[i] ?? '';

export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ApiError(413, 'RequestEntityTooLarge', 'the request body is too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
