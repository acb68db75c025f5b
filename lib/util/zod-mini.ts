/**
 * The zod that shipped code writes its schemas with: `zod/mini` (tree-shakable functions instead of
 * methods), with English messages. Import it as a namespace, `import * as z from '…/zod-mini.ts'`:
 * esbuild then keeps only the functions a bundle calls. A named `z` object (`import { z } from
 * 'zod/mini'`, or re-exporting one) is a value holding every export, `z.locales` with its 60-odd
 * locales included, so nothing could be dropped.
 *
 * zod/mini loads no locale by itself: without one every default message reads "Invalid input"
 * (zod.dev/packages/mini, "Error messages"; zod.dev/error-customization, "Internationalization").
 * Classic zod registers English on first use; here it is registered once, when the first schema
 * module imports this file, so both APIs give the same messages. Only `en` is imported.
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
