/**
 * Cold start (issue 9): the node adapter makes its API calls as plain HTTPS requests, so a bundle of
 * it (as serverless.yml bundles the functions) holds none of @kubernetes/client-node's generated
 * API client and models, and not its fetch stack (node-fetch, whatwg-url, tr46). The kubeconfig
 * loader imports client-node's KubeConfig only behind a dynamic import (a kubeconfig to load).
 */
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const CLIENT_NODE = /node_modules\/(@kubernetes\/client-node|node-fetch|tr46|whatwg-url)\//;

/** The source files of an output and of every output it imports statically. */
function staticInputs(metafile: Metafile, output: string, seen = new Set<string>()): string[] {
  if (seen.has(output)) return [];
  seen.add(output);
  const out = metafile.outputs[output];
  if (!out) return [];
  return [...Object.keys(out.inputs), ...out.imports.filter((i) => i.kind === 'import-statement' && !i.external).flatMap((i) => staticInputs(metafile, i.path, seen))];
}

async function bundle(entry: string): Promise<{ atStart: string[]; all: string[] }> {
  const result = await build({
    entryPoints: [join(root, entry)],
    absWorkingDir: root,
    bundle: true,
    write: false,
    outdir: join(root, '.esbuild', 'bundle-test'),
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'silent',
  });
  // Dynamically imported modules are entry points of their own chunks too: find the one asked for.
  const entryOut = Object.keys(result.metafile.outputs).find((file) => result.metafile.outputs[file]?.entryPoint === entry);
  return { atStart: staticInputs(result.metafile, entryOut ?? ''), all: Object.keys(result.metafile.inputs) };
}

describe('the Kubernetes adapter bundled', () => {
  it('kube-nodes.ts pulls in nothing of @kubernetes/client-node', async () => {
    const { atStart, all } = await bundle('lib/kube/kube-nodes.ts');
    expect(atStart.some((path) => path.includes('lib/kube/kube-nodes.ts'))).toBe(true);
    expect(all.filter((path) => CLIENT_NODE.test(path))).toEqual([]);
  });

  it('kube-config.ts loads client-node only when a kubeconfig is to be read', async () => {
    const { atStart, all } = await bundle('lib/kube/kube-config.ts');
    expect(atStart.some((path) => path.includes('lib/kube/kube-config.ts'))).toBe(true);
    expect(atStart.filter((path) => CLIENT_NODE.test(path))).toEqual([]);
    expect(all.some((path) => path.includes('@kubernetes/client-node/dist/config.js'))).toBe(true);
  });
});
