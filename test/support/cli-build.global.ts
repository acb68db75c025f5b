/**
 * Vitest's global setup: builds the `podroute` command once, as `npm run build` builds what
 * package.json's `bin` ships (infra/scripts/cli-build-options.ts), into a directory of its own under
 * dist/ (inside the repository, so the bundle finds node_modules and package.json's `"type"`).
 * The tests that spawn the command run that build (test/support/cli-binary.ts); it is removed after
 * the run.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { cliBuildOptions } from '../../infra/scripts/cli-build-options.ts';

const root = join(import.meta.dirname, '..', '..');

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built `podroute` command's entry file. */
    podrouteCli: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await mkdir(join(root, 'dist'), { recursive: true });
  const outdir = await mkdtemp(join(root, 'dist', 'test-cli-'));
  try {
    await build(cliBuildOptions(root, outdir));
  } catch (error) {
    await rm(outdir, { recursive: true, force: true });
    throw error;
  }
  project.provide('podrouteCli', join(outdir, 'podroute.js'));
  return () => rm(outdir, { recursive: true, force: true });
}
