/**
 * esbuild's options for the `podroute` command (infra/scripts/build-cli.ts), apart so that a test
 * can build the same bundle in memory and read its import graph (test/cli/lazy-load.test.ts).
 */
import type { BuildOptions } from 'esbuild';

export function cliBuildOptions(root: string, outdir: string): BuildOptions & { metafile: true } {
  return {
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
    // The dynamic import()s of lib/cli/main.ts's LAZY_COMMANDS become chunks of their own.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
    metafile: true,
  };
}
