/**
 * Cold start (issue 9): the schemas a deployed function loads are written with `zod/mini`, so a
 * function's bundle (built as serverless.yml builds it: ESM, code splitting) holds none of zod's
 * classic API (`zod/v4/classic`, about 450 KB of the 1.4 MB each function loaded at start), only the
 * mini API, its core and the English locale.
 */
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const FUNCTIONS = ['functions/reconcile.ts', 'functions/route-worker.ts', 'functions/node-webhook.ts'];

/** The source files with code in an output or in any output it imports statically (tree-shaken files list 0 bytes). */
function staticInputs(metafile: Metafile, output: string, seen = new Set<string>()): string[] {
  if (seen.has(output)) return [];
  seen.add(output);
  const out = metafile.outputs[output];
  if (!out) return [];
  const used = Object.entries(out.inputs).filter(([, input]) => input.bytesInOutput > 0).map(([path]) => path);
  return [...used, ...out.imports.filter((i) => i.kind === 'import-statement' && !i.external).flatMap((i) => staticInputs(metafile, i.path, seen))];
}

const built = build({
  entryPoints: FUNCTIONS.map((entry) => join(root, entry)),
  absWorkingDir: root,
  bundle: true,
  write: false,
  outdir: join(root, '.esbuild', 'zod-mini-test'),
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  mainFields: ['module', 'main'],
  metafile: true,
  logLevel: 'silent',
});

async function zodAtStart(entry: string): Promise<string[]> {
  const { metafile } = await built;
  const entryOut = Object.keys(metafile.outputs).find((file) => metafile.outputs[file]?.entryPoint === entry) ?? '';
  return staticInputs(metafile, entryOut).filter((path) => path.includes('node_modules/zod/'));
}

describe('zod in the deployed functions', () => {
  it.each(FUNCTIONS)('%s loads zod/mini and none of classic zod at start', async (entry) => {
    const zod = await zodAtStart(entry);
    expect(zod.some((path) => path.includes('node_modules/zod/v4/mini/'))).toBe(true);
    expect(zod.filter((path) => path.includes('node_modules/zod/v4/classic/'))).toEqual([]);
  });

  it.each(FUNCTIONS)('%s bundles only the English locale', async (entry) => {
    const zod = await zodAtStart(entry);
    expect(zod.filter((path) => path.includes('node_modules/zod/v4/locales/')).map((path) => path.replace(/.*\/locales\//, ''))).toEqual(['en.js']);
  });
});
