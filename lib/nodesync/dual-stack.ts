/**
 * Dual-stack node sync: upstream's single-CIDR decision applied one level up, per cluster CIDR family.
 *
 * A node gets one block per cluster CIDR (one CIDR set per family, at most one set a family), and its
 * podCIDRs are ordered as the sets are. For each family the node's value (from `spec.podCIDRs`, or
 * `spec.podCIDR`) and the cloud's value of that family pick the same branch as `syncNode`:
 *
 *   node none, cloud none -> allocate   (SyncFromCluster)    node value, cloud none -> toAlias (SyncFromCluster)
 *   node none, cloud has  -> fromAlias  (SyncFromCloud)      node value, cloud has  -> validate (any mode)
 *
 * All families are checked against the mode before anything changes (the first forbidden family
 * warns `CloudCIDRAllocatorInvalidMode` and rejects). Then, in this order: mismatch warnings; occupy
 * the adopted values (fromAlias, toAlias); allocate the missing ones; one `addAlias` with the values
 * the cloud lacks; one `updatePodCidr` with the full list when the node lacked any; and
 * NetworkUnavailable=false when anything was written. With one set this is exactly `syncNode`.
 *
 * Not covered: Kubernetes refuses to change a node's podCIDRs once set, so a node holding one family
 * of a dual-stack cluster makes `updatePodCidr` fail in the adapter (the error propagates). Node
 * values of a family the cluster has no set for are ignored.
 */
import { type Cidr, type Family, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { CidrSet } from '../ipam/index.ts';
import { type Node, podCidrsOf } from '../nodes/node.ts';
import {
  INVALID_POD_CIDR,
  MISMATCH_EVENT,
  NodeSyncError,
  type KubeNodes,
  type NodeSyncOp,
  type SyncMode,
  releaseOnFailure,
  assertMode,
  parseOrReject,
  releaseOwned,
  requireMode,
} from './node-sync.ts';

/** The cloud side with one range per family. */
export interface DualStackCloudAlias {
  /** The node's alias ranges, any order; empty when it has none. */
  alias(node: Node): Promise<string[]>;
  /** Adds these ranges (those the cloud lacks), in cluster CIDR order. */
  addAlias(node: Node, cidrs: string[]): Promise<void>;
}

/** The Kubernetes side with a list of pod CIDRs. */
export interface DualStackKubeNodes extends Omit<KubeNodes, 'updatePodCidr'> {
  /** Sets the node's `spec.podCIDRs` to `cidrs` (and `spec.podCIDR` to the first). */
  updatePodCidr(node: Node, cidrs: string[]): Promise<void>;
}

export interface DualStackSyncDeps {
  mode: SyncMode;
  /** One set per cluster CIDR, in the order the node's podCIDRs take; one family each. */
  cidrSets: CidrSet[];
  cloud: DualStackCloudAlias;
  kube: DualStackKubeNodes;
}

type Branch = 'allocate' | 'fromAlias' | 'toAlias' | 'validate';

interface FamilyPlan {
  set: CidrSet;
  branch: Branch;
  node: Cidr | null;
  alias: Cidr | null;
}

const MODE_RULES: Record<Exclude<Branch, 'validate'>, [SyncMode, string, string]> = {
  allocate: ['SyncFromCluster', 'Cannot allocate CIDRs in mode', 'controller cannot allocate CIDRs in mode'],
  fromAlias: ['SyncFromCloud', 'Cannot sync from cloud in mode', 'cannot sync from cloud in mode'],
  toAlias: ['SyncFromCluster', 'Cannot sync to cloud in mode', 'cannot sync to cloud in mode'],
};

export async function syncNodeDualStack(op: NodeSyncOp, deps: DualStackSyncDeps): Promise<void> {
  assertMode(deps.mode);
  const families = familiesOf(deps.cidrSets);
  if (op.kind === 'delete') return deleteNode(op.node, families, deps);

  const node = op.node ?? (await deps.kube.getNode(op.nodeName));
  const name = node.metadata.name;
  const aliases = (await deps.cloud.alias(node)).map((text) => parseOrReject(text, `cloud alias of node ${name}`));
  const podCidrs = podCidrsOf(node).map((text) => parseOrReject(text, `podCIDR of node ${name}`));

  const plans = deps.cidrSets.map((set, i): FamilyPlan => {
    const family = families[i];
    const nodeCidr = podCidrs.find((c) => c.family === family) ?? null;
    const alias = aliases.find((c) => c.family === family) ?? null;
    const branch: Branch =
      nodeCidr === null ? (alias === null ? 'allocate' : 'fromAlias') : alias === null ? 'toAlias' : 'validate';
    return { set, branch, node: nodeCidr, alias };
  });

  for (const plan of plans) {
    if (plan.branch === 'validate') continue;
    const [wanted, warning, error] = MODE_RULES[plan.branch];
    await requireMode(deps, name, wanted, warning, error);
  }

  for (const plan of plans) {
    if (plan.branch !== 'validate' || plan.node === null || plan.alias === null) continue;
    const [nodeText, aliasText] = [formatCidr(plan.node), formatCidr(plan.alias)];
    if (nodeText !== aliasText) {
      await deps.kube.warn(name, MISMATCH_EVENT, `Node.Spec.PodCIDR != cloud alias (${nodeText} != ${aliasText})`);
    }
  }

  const wanted = new Map<FamilyPlan, string>();
  for (const plan of plans) {
    const adopted = plan.branch === 'fromAlias' ? plan.alias : plan.branch === 'toAlias' ? plan.node : null;
    if (adopted === null) continue;
    const cidr = formatCidr(adopted);
    await plan.set.occupy(cidr, name);
    wanted.set(plan, cidr);
  }

  const allocated: Array<{ set: CidrSet; cidr: string }> = [];
  // A family that cannot allocate gives back the blocks the earlier families just got.
  await releaseOnFailure(
    async () => {
      for (const plan of plans) {
        if (plan.branch !== 'allocate') continue;
        const cidr = await plan.set.allocateNext(name);
        allocated.push({ set: plan.set, cidr });
        wanted.set(plan, cidr);
      }
    },
    allocated,
    name,
  );

  const toCloud = plans.filter((p) => p.branch === 'allocate' || p.branch === 'toAlias').map((p) => wanted.get(p) ?? '');
  // As in syncNode: blocks allocated now are released when the cloud refuses them (upstream leaks).
  if (toCloud.length > 0) await releaseOnFailure(() => deps.cloud.addAlias(node, toCloud), allocated, name);

  if (plans.some((p) => p.branch === 'allocate' || p.branch === 'fromAlias')) {
    const podCidrList = plans.map((p) => wanted.get(p) ?? (p.node === null ? '' : formatCidr(p.node)));
    await deps.kube.updatePodCidr(node, podCidrList);
  }
  if (plans.some((p) => p.branch !== 'validate')) await deps.kube.setNetworkUnavailable(name, false);
}

async function deleteNode(node: Node, families: Family[], deps: DualStackSyncDeps): Promise<void> {
  const name = node.metadata.name;
  for (const text of podCidrsOf(node)) {
    const cidr = tryParseCidr(text);
    if (cidr === null) {
      await deps.kube.warn(name, INVALID_POD_CIDR, `Node ${JSON.stringify(name)} has an invalid PodCIDR: ${JSON.stringify(text)}`);
      continue;
    }
    const set = deps.cidrSets[families.indexOf(cidr.family)];
    if (set) await releaseOwned(set, formatCidr(cidr), name);
  }
}

function familiesOf(sets: readonly CidrSet[]): Family[] {
  const families = sets.map((set) => {
    const cluster = tryParseCidr(set.clusterCidr);
    if (cluster === null) throw new NodeSyncError('INVALID_CONFIG', `CIDR set with invalid cluster CIDR ${JSON.stringify(set.clusterCidr)}`);
    return cluster.family;
  });
  if (families.length === 0 || new Set(families).size !== families.length) {
    throw new NodeSyncError(
      'INVALID_CONFIG',
      `dual-stack sync needs one CIDR set per family, got [${sets.map((s) => s.clusterCidr).join(', ')}]`,
    );
  }
  return families;
}
