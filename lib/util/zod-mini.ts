/**
 * The zod that shipped code writes its schemas with: `zod/mini`, imported as a namespace
 * (`import * as z from '…/zod-mini.ts'`) so esbuild keeps only the functions a bundle calls. It loads
 * no locale by itself (zod.dev/packages/mini, "Error messages"), so English is registered once here
 * and every message reads as classic zod's. Schemas are built on first use (`onFirstUse`), not at
 * import: a cold start builds only the schemas its function's path parses.
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

z.config(en());

export * from 'zod/mini';

/**
 * What classic zod's `ctx.addIssue({ code: 'custom', path, message })` does inside a transform, for
 * zod/mini's `z.transform`, whose context is the bare parse payload: records a custom issue at
 * `path` (relative to the value being transformed) and returns `z.NEVER`, so a transform can
 * `return reject(payload, ...)`.
 */
export function reject(payload: z.core.ParsePayload, message: string, path: PropertyKey[] = []): typeof z.NEVER {
  payload.issues.push({ code: 'custom', path, message, input: payload.value });
  return z.NEVER;
}

/**
 * The schema `build` returns, built on the first call and kept: a module declares its schemas with
 * this instead of building them at import, where building them cost each function's cold start.
 */
export function onFirstUse<T>(build: () => T): () => T {
  let schema: T | undefined;
  return () => (schema ??= build());
}
