/**
 * Builds the `podroute` command into dist/cli/: bin/podroute.ts and everything of ours it imports,
 * bundled by esbuild into plain JavaScript, so an installed package runs on Node alone. The npm
 * dependencies stay imports (package.json installs them beside the bundle), and the commands that
 * lib/cli/main.ts loads lazily (reconcile, doctor) become chunks of their own (code splitting), so
 * `--help`, `plan` and `reservations` start without the AWS SDK. The options: ./cli-build-options.ts.
 *
 *   node --import tsx infra/scripts/build-cli.ts     (npm run build; npm pack runs it as prepack)
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { cliBuildOptions } from './cli-build-options.ts';

const root = join(import.meta.dirname, '..', '..');
const outdir = join(root, 'dist', 'cli');

await rm(outdir, { recursive: true, force: true });
const result = await build(cliBuildOptions(root, outdir));
const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
const bytes = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
process.stdout.write(`build-cli: ${outputs.length} files, ${Math.round(bytes / 1024)} KiB in dist/cli\n`);
