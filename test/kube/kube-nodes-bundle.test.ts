/**
 * Cold start (issue 9): the node adapter makes its API calls as plain HTTPS requests, so a bundle of
 * it (as serverless.yml bundles the functions) holds none of @kubernetes/client-node's generated
 * API client and models, and not its fetch stack (node-fetch, whatwg-url, tr46).
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('lib/kube/kube-nodes.ts bundled', () => {
  it('pulls in nothing of @kubernetes/client-node', async () => {
    const result = await build({
      entryPoints: [join(root, 'lib/kube/kube-nodes.ts')],
      absWorkingDir: root,
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      mainFields: ['module', 'main'],
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('lib/kube/kube-nodes.ts'))).toBe(true);
    expect(inputs.filter((path) => /node_modules\/(@kubernetes\/client-node|node-fetch|tr46|whatwg-url)\//.test(path))).toEqual([]);
  });
});
