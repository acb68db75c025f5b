/**
 * Builds the `podroute` command into dist/cli/: bin/podroute.ts and everything of ours it imports,
 * bundled by esbuild into plain JavaScript, so an installed package runs on Node alone. The npm
 * dependencies stay imports (package.json installs them beside the bundle), and the commands that
 * bin/podroute.ts loads lazily (reconcile, doctor) become chunks of their own (code splitting), so
 * `--help` and `plan` still start without the AWS SDK.
 *
 *   node --import tsx infra/scripts/build-cli.ts     (npm run build; npm pack runs it as prepack)
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..', '..');
const outdir = join(root, 'dist', 'cli');

await rm(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { podroute: 'bin/podroute.ts' },
  outdir,
  bundle: true,
  // Every npm package is a dependency in package.json (test/infra/dependencies.test.ts), installed
  // with the package; bundling them too would ship the AWS SDK twice.
  packages: 'external',
  platform: 'node',
  // package.json engines: the CLI runs where the repository's tools run, Node 20.19 and later.
  target: 'node20.19',
  format: 'esm',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  metafile: true,
});
const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
process.stdout.write(`build-cli: ${outputs.length} files, ${Math.round(bytes / 1024)} KiB in dist/cli\n`);
