/**
 * Node sync: upstream `NodeSync`'s `updateOp` / `deleteOp` (nodeipam/ipam/sync) as one function over
 * ports, for one CIDR set per cluster CIDR family (single-stack: one set; dual-stack: one per family).
 * It keeps a node's pod CIDRs, the cloud's aliases for them and the CIDR sets in agreement. For each
 * set, the node's value and the cloud's value pick upstream's branch:
 *
 *   node none, cloud none -> allocateRange        (SyncFromCluster): allocate, add alias, write podCIDRs
 *   node none, cloud has  -> updateNodeFromAlias  (SyncFromCloud):   occupy alias, write podCIDRs
 *   node has,  cloud none -> updateAliasFromNode  (SyncFromCluster): occupy node value, add alias
 *   node has,  cloud has  -> validateRange        (any mode):        warn on a mismatch, change nothing
 *
 * Every set's branch is checked against the mode before anything changes (the first forbidden one
 * warns `CloudCIDRAllocatorInvalidMode` and rejects). Then, in this order: mismatch warnings; occupy
 * the adopted values; allocate the missing ones; one `addAlias` with the values the cloud lacks; one
 * `updatePodCidr` with the full list when the node lacked any; NetworkUnavailable=false when anything
 * was written. With one set this is upstream's single-CIDR `updateOp`, call for call.
 * delete: no podCIDRs -> nothing; an unparseable one -> warn `CloudCIDRAllocatorInvalidPodCIDR`;
 *   otherwise release each from its set.
 *
 * Which set a node value belongs to: the set of its family; a value no family claims (unparseable,
 * or of a family the cluster has no set for) goes by position, as upstream's range allocator pairs
 * `spec.podCIDRs[i]` with `cidrSets[i]` (kubernetes pkg/controller/nodeipam/ipam/range_allocator.go,
 * occupyCIDRs / ReleaseCIDR). Cloud aliases come in any order and go by family only.
 *
 * Where we differ from upstream, on purpose:
 * - CIDRs are compared canonically (host bits cleared, RFC 5952), as upstream's net.IPNet strings are.
 * - The node name is the owner of every block, so a retried allocation returns the same block and a
 *   stale delete cannot free a block another node holds now.
 * - Blocks allocated for a node whose alias could not be added are released (upstream leaks them).
 * - `deps.mode` is validated before anything is read: an unknown mode rejects with INVALID_MODE.
 * Not covered: Kubernetes refuses to change a node's podCIDRs once set, so a node holding one family
 * of a dual-stack cluster makes `updatePodCidr` fail in the adapter (the error propagates).
 * Node objects are only read, never changed.
 */
import { CodedError } from '../errors.ts';
import { type Cidr, type Family, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { CidrSetError, type CidrSet } from '../ipam/index.ts';
import { type Node, podCidrsOf } from '../nodes/node.ts';

export type SyncMode = 'SyncFromCluster' | 'SyncFromCloud';
const SYNC_MODES: readonly SyncMode[] = ['SyncFromCluster', 'SyncFromCloud'];

/** Event reasons, as upstream names them. */
const INVALID_POD_CIDR = 'CloudCIDRAllocatorInvalidPodCIDR';
const INVALID_MODE_EVENT = 'CloudCIDRAllocatorInvalidMode';
const MISMATCH_EVENT = 'CloudCIDRAllocatorMismatch';
export type WarningReason = typeof INVALID_POD_CIDR | typeof INVALID_MODE_EVENT | typeof MISMATCH_EVENT;

export type NodeSyncOp =
  | { kind: 'update'; nodeName: string; node?: Node | null }
  | { kind: 'delete'; node: Node };

/** The cloud side of a node's pod CIDRs (on AWS: the ENI prefixes delegated to it, or its routes). */
export interface DualStackCloudAlias {
  /** The node's alias ranges, any order; empty when it has none. */
  alias(node: Node): Promise<string[]>;
  /** Adds these ranges (those the cloud lacks), in cluster CIDR order. */
  addAlias(node: Node, cidrs: string[]): Promise<void>;
}

/** The Kubernetes side. */
export interface DualStackKubeNodes {
  getNode(name: string): Promise<Node>;
  /** Sets the node's `spec.podCIDRs` to `cidrs` (and `spec.podCIDR` to the first). */
  updatePodCidr(node: Node, cidrs: string[]): Promise<void>;
  setNetworkUnavailable(nodeName: string, unavailable: boolean): Promise<void>;
  warn(nodeName: string, reason: WarningReason, message: string): Promise<void>;
}

interface DualStackSyncDeps {
  mode: SyncMode;
  /** One set per cluster CIDR, in the order the node's podCIDRs take; one family each. */
  cidrSets: CidrSet[];
  cloud: DualStackCloudAlias;
  kube: DualStackKubeNodes;
}

type NodeSyncErrorCode = 'INVALID_MODE' | 'INVALID_CIDR' | 'INVALID_CONFIG';

/** A sync that cannot succeed as configured or as the node stands; retrying does not help. */
export class NodeSyncError extends CodedError<NodeSyncErrorCode> {
  override name = 'NodeSyncError';
}

type Branch = 'allocate' | 'fromAlias' | 'toAlias' | 'validate';

/** A node's podCIDRs entry as written, and parsed (null when it does not parse). */
interface NodeValue {
  text: string;
  cidr: Cidr | null;
}

interface SetPlan {
  set: CidrSet;
  branch: Branch;
  node: NodeValue | null;
  alias: Cidr | null;
}

/** Upstream's per-branch mode check: the mode the branch needs, its warning and its error text. */
const MODE_RULES: Record<Exclude<Branch, 'validate'>, [SyncMode, string, string]> = {
  allocate: ['SyncFromCluster', 'Cannot allocate CIDRs in mode', 'controller cannot allocate CIDRs in mode'],
  fromAlias: ['SyncFromCloud', 'Cannot sync from cloud in mode', 'cannot sync from cloud in mode'],
  toAlias: ['SyncFromCluster', 'Cannot sync to cloud in mode', 'cannot sync to cloud in mode'],
};

export async function syncNodeDualStack(op: NodeSyncOp, deps: DualStackSyncDeps): Promise<void> {
  assertMode(deps.mode);
  const families = familiesOf(deps.cidrSets);
  if (op.kind === 'delete') return deleteNode(op.node, families, deps);
  return updateNode(op, families, deps);
}

async function updateNode(op: { nodeName: string; node?: Node | null }, families: Family[], deps: DualStackSyncDeps): Promise<void> {
  const node = op.node ?? (await deps.kube.getNode(op.nodeName));
  const name = node.metadata.name;
  const aliases = (await deps.cloud.alias(node)).map((text) => parseOrReject(text, `cloud alias of node ${name}`));
  const nodeValues = placeNodeValues(podCidrsOf(node), families);

  const plans = deps.cidrSets.map((set, i): SetPlan => {
    const value = nodeValues.find((v) => v.setIndex === i) ?? null;
    const alias = aliases.find((c) => c.family === families[i]) ?? null;
    const branch: Branch =
      value === null ? (alias === null ? 'allocate' : 'fromAlias') : alias === null ? 'toAlias' : 'validate';
    return { set, branch, node: value, alias };
  });

  for (const plan of plans) {
    if (plan.branch === 'validate') continue;
    const [wanted, warning, error] = MODE_RULES[plan.branch];
    if (deps.mode !== wanted) {
      await deps.kube.warn(name, INVALID_MODE_EVENT, `${warning} ${JSON.stringify(deps.mode)}`);
      throw new NodeSyncError('INVALID_MODE', `${error} ${JSON.stringify(deps.mode)}`);
    }
  }
  // A node value the cloud must take has to parse; in validateRange an unparseable one is a mismatch.
  for (const plan of plans) {
    if (plan.branch === 'toAlias' && plan.node !== null) parseOrReject(plan.node.text, `podCIDR of node ${name}`);
  }

  for (const plan of plans) {
    if (plan.branch !== 'validate' || plan.node === null || plan.alias === null) continue;
    const aliasText = formatCidr(plan.alias);
    if (plan.node.cidr === null || formatCidr(plan.node.cidr) !== aliasText) {
      // User intervention is needed (the alias was most likely changed by hand); nothing is written.
      await deps.kube.warn(name, MISMATCH_EVENT, `Node.Spec.PodCIDR != cloud alias (${plan.node.text} != ${aliasText})`);
    }
  }

  const wanted = new Map<SetPlan, string>();
  for (const plan of plans) {
    const adopted = plan.branch === 'fromAlias' ? plan.alias : plan.branch === 'toAlias' ? (plan.node?.cidr ?? null) : null;
    if (adopted === null) continue;
    const cidr = formatCidr(adopted);
    await plan.set.occupy(cidr, name);
    wanted.set(plan, cidr);
  }

  const allocated: Array<{ set: CidrSet; cidr: string }> = [];
  // A set that cannot allocate gives back the blocks the earlier sets just gave.
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
  // Upstream leaks the block when AddAlias fails (its set has no durable record). Ours is durable,
  // so give the new blocks back before rejecting: scoped to this node, it cannot free another's.
  if (toCloud.length > 0) await releaseOnFailure(() => deps.cloud.addAlias(node, toCloud), allocated, name);

  // From here on the cloud holds the aliases, so the blocks stay ours even if a write below fails:
  // the retry finds the aliases (or, by owner, the same blocks) and finishes the job.
  if (plans.some((p) => p.branch === 'allocate' || p.branch === 'fromAlias')) {
    await deps.kube.updatePodCidr(node, plans.map((p) => wanted.get(p) ?? nodeText(p.node)));
  }
  if (plans.some((p) => p.branch !== 'validate')) await deps.kube.setNetworkUnavailable(name, false);
}

async function deleteNode(node: Node, families: Family[], deps: DualStackSyncDeps): Promise<void> {
  const name = node.metadata.name;
  for (const value of placeNodeValues(podCidrsOf(node), families)) {
    if (value.cidr === null) {
      await deps.kube.warn(name, INVALID_POD_CIDR, `Node ${JSON.stringify(name)} has an invalid PodCIDR: ${JSON.stringify(value.text)}`);
      continue;
    }
    const set = value.setIndex === null ? undefined : deps.cidrSets[value.setIndex];
    if (set) await releaseOwned(set, formatCidr(value.cidr), name);
  }
}

/**
 * The node's podCIDRs in their order, each with the index of the set it belongs to (null for none):
 * the set of its family, else (what no family claims) the set at its own position.
 */
function placeNodeValues(texts: string[], families: Family[]): Array<NodeValue & { setIndex: number | null }> {
  const values = texts.map((text) => ({ text, cidr: tryParseCidr(text), setIndex: null as number | null }));
  const taken = new Set<number>();
  for (const value of values) {
    const at = value.cidr === null ? -1 : families.indexOf(value.cidr.family);
    if (at >= 0 && !taken.has(at)) {
      value.setIndex = at;
      taken.add(at);
    }
  }
  values.forEach((value, i) => {
    if (value.setIndex === null && i < families.length && !taken.has(i)) {
      value.setIndex = i;
      taken.add(i);
    }
  });
  return values;
}

function nodeText(value: NodeValue | null): string {
  if (value === null) return '';
  return value.cidr === null ? value.text : formatCidr(value.cidr);
}

/**
 * Runs `step` (adding an alias, allocating more blocks); when it fails, releases the blocks just
 * allocated for `owner` and rethrows the step's error unchanged.
 */
async function releaseOnFailure(
  step: () => Promise<void>,
  allocated: ReadonlyArray<{ set: CidrSet; cidr: string }>,
  owner: string,
): Promise<void> {
  try {
    await step();
  } catch (error) {
    for (const block of allocated) {
      // Best effort: the caller needs the step's error, and a block left behind stays tied to this
      // node (a retry gets it back through its owner) until the lease sweep frees it.
      await block.set.release(block.cidr, owner).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * Releases a node's block. Upstream ignores Release's error; a CIDR outside the set (OUT_OF_RANGE)
 * holds nothing of ours and is likewise ignored, while a store failure rejects so the delete is retried.
 */
async function releaseOwned(set: CidrSet, cidr: string, owner: string): Promise<void> {
  try {
    await set.release(cidr, owner);
  } catch (error) {
    if (error instanceof CidrSetError && error.code === 'OUT_OF_RANGE') return;
    throw error;
  }
}

function assertMode(mode: unknown): asserts mode is SyncMode {
  if (!(SYNC_MODES as readonly unknown[]).includes(mode)) {
    throw new NodeSyncError('INVALID_MODE', `unknown node sync mode ${JSON.stringify(mode)}: want ${SYNC_MODES.join(' or ')}`);
  }
}

function parseOrReject(text: string, what: string): Cidr {
  const cidr = tryParseCidr(text);
  if (cidr === null) throw new NodeSyncError('INVALID_CIDR', `invalid ${what}: ${JSON.stringify(text)}`);
  return cidr;
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
      `node sync needs one CIDR set per family, got [${sets.map((s) => s.clusterCidr).join(', ')}]`,
    );
  }
  return families;
}
