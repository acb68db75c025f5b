/**
 * The functions bundled as deployed, for tests of what a function loads: the esbuild options are
 * serverless.yml's, read the way the cold-start bench reads them (bench/cold-start.ts), never a copy.
 */
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { deployedBuild } from '../../bench/cold-start.ts';

const root = join(import.meta.dirname, '..', '..');

/** Bundles `entries` (paths from the repository root) with the deployed options; nothing is written. */
export async function bundleAsDeployed(entries: readonly string[]): Promise<Metafile> {
  const { options } = await deployedBuild();
  const result = await build({
    ...options,
    entryPoints: entries.map((entry) => join(root, entry)),
    absWorkingDir: root,
    write: false,
    outdir: join(root, '.esbuild', 'bundle-test'),
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

/** The output of an entry (a dynamically imported module is an entry of its own chunk too). */
export function outputOf(metafile: Metafile, entry: string): string {
  return Object.keys(metafile.outputs).find((file) => metafile.outputs[file]?.entryPoint === entry) ?? '';
}

/**
 * The source files of an output and of every output it imports statically: what loads at start.
 * `withCode`: only files with code left in the output (tree-shaken ones list 0 bytes).
 */
export function startPathInputs(metafile: Metafile, output: string, options: { withCode?: boolean } = {}, seen = new Set<string>()): string[] {
  if (seen.has(output)) return [];
  seen.add(output);
  const out = metafile.outputs[output];
  if (!out) return [];
  const own = Object.entries(out.inputs).filter(([, input]) => !options.withCode || input.bytesInOutput > 0).map(([path]) => path);
  const imported = out.imports.filter((i) => i.kind === 'import-statement' && !i.external).flatMap((i) => startPathInputs(metafile, i.path, options, seen));
  return [...own, ...imported];
}
