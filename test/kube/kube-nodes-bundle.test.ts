/**
 * Cold start (issue 9): the node adapter makes its API calls as plain HTTPS requests, so a bundle of
 * it (as serverless.yml bundles the functions) holds none of @kubernetes/client-node's generated
 * API client and models, and not its fetch stack (node-fetch, whatwg-url, tr46). The kubeconfig
 * loader imports client-node's KubeConfig only behind a dynamic import (a kubeconfig to load).
 */
import { describe, expect, it } from 'vitest';
import { bundleAsDeployed, outputOf, startPathInputs } from '../support/bundle.ts';

const CLIENT_NODE = /node_modules\/(@kubernetes\/client-node|node-fetch|tr46|whatwg-url)\//;

async function bundle(entry: string): Promise<{ atStart: string[]; all: string[] }> {
  const metafile = await bundleAsDeployed([entry]);
  return { atStart: startPathInputs(metafile, outputOf(metafile, entry)), all: Object.keys(metafile.inputs) };
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
