/**
 * Node sync. One decider, `decideNodeSync` (node-sync-decision.ts), and one applier over ports,
 * `syncNodeDualStack` (node-sync.ts), over one CIDR set per cluster CIDR family; `syncNode` is
 * ARCHITECTURE contract 3, the single-family form of it: one set, one alias, one pod CIDR,
 * translated to and from the lists of the one implementation.
 */
import type { CidrSet } from '../ipam/index.ts';
import { syncNodeDualStack, type NodeSyncOp } from './node-sync.ts';
import { NodeSyncError, type SyncMode } from './node-sync-decision.ts';
import type { CloudAlias, KubeNodes } from '../usecases/ports.ts';

export { applyNodeSync, syncNodeDualStack } from './node-sync.ts';
export type { NodeSyncOp } from './node-sync.ts';
export type { DualStackCloudAlias, DualStackKubeNodes } from '../usecases/ports.ts';
export { NodeSyncError, decideNodeSync, nodeSyncConfig } from './node-sync-decision.ts';
export type { CidrRef, NodeSyncAction, NodeSyncConfig, NodeSyncInput, SyncMode, WarningReason } from './node-sync-decision.ts';

interface NodeSyncDeps {
  mode: SyncMode;
  cidrSet: CidrSet;
  cloud: CloudAlias;
  kube: KubeNodes;
}

/** Upstream's single-CIDR `NodeSync` ops: `syncNodeDualStack` with one set. */
export function syncNode(op: NodeSyncOp, deps: NodeSyncDeps): Promise<void> {
  const { cloud, kube } = deps;
  return syncNodeDualStack(op, {
    mode: deps.mode,
    cidrSets: [deps.cidrSet],
    cloud: {
      alias: async (node) => {
        const alias = await cloud.alias(node);
        return alias === null ? [] : [alias];
      },
      addAlias: (node, cidrs) => cloud.addAlias(node, single(cidrs)),
    },
    kube: {
      getNode: (name) => kube.getNode(name),
      updatePodCidr: (node, cidrs) => kube.updatePodCidr(node, single(cidrs)),
      setNetworkUnavailable: (name, unavailable) => kube.setNetworkUnavailable(name, unavailable),
      warn: (name, reason, message) => kube.warn(name, reason, message),
    },
  });
}

/** With one set, the one implementation hands over exactly one CIDR. */
function single(cidrs: string[]): string {
  const [cidr] = cidrs;
  if (cidrs.length !== 1 || cidr === undefined) {
    throw new NodeSyncError('INVALID_CONFIG', `single-family node sync got ${cidrs.length} CIDRs: [${cidrs.join(', ')}]`);
  }
  return cidr;
}
