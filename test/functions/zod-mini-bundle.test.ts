/**
 * Cold start (issue 9): the schemas a deployed function loads are written with `zod/mini`, so a
 * function's bundle (built as serverless.yml builds it: ESM, code splitting) holds none of zod's
 * classic API (`zod/v4/classic`, about 450 KB of the 1.4 MB each function loaded at start), only the
 * mini API, its core and the English locale.
 */
import { describe, expect, it } from 'vitest';
import { bundleAsDeployed, outputOf, startPathInputs } from '../support/bundle.ts';

const FUNCTIONS = ['functions/reconcile.ts', 'functions/route-worker.ts', 'functions/node-webhook.ts'];
const built = bundleAsDeployed(FUNCTIONS);

async function zodAtStart(entry: string): Promise<string[]> {
  const metafile = await built;
  return startPathInputs(metafile, outputOf(metafile, entry), { withCode: true }).filter((path) => path.includes('node_modules/zod/'));
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
