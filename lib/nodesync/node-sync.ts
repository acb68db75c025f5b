/**
 * Node sync: upstream `NodeSync`'s `updateOp` / `deleteOp` (nodeipam/ipam/sync) as one function over
 * ports. It keeps a node's pod CIDR, the cloud's alias for it and the CIDR set in agreement:
 *
 * update (podCIDR empty?, alias null?):
 *   empty, null  -> allocateRange        (SyncFromCluster): allocate, add alias, write podCIDR
 *   empty, alias -> updateNodeFromAlias  (SyncFromCloud):   occupy alias, write podCIDR
 *   set,   null  -> updateAliasFromNode  (SyncFromCluster): occupy podCIDR, add alias
 *   set,   alias -> validateRange        (any mode):        warn on a mismatch, change nothing
 * each writing branch ends with NetworkUnavailable=false; a branch the mode forbids warns
 * `CloudCIDRAllocatorInvalidMode` and rejects.
 * delete: no podCIDR -> nothing; an unparseable one -> warn `CloudCIDRAllocatorInvalidPodCIDR`;
 *   otherwise release it.
 *
 * Where we differ from upstream, on purpose:
 * - CIDRs are compared canonically (host bits cleared, RFC 5952), as upstream's net.IPNet strings are.
 * - The node name is the owner of every block, so a retried allocation returns the same block and a
 *   stale delete cannot free a block another node holds now.
 * - A block allocated for a node whose alias could not be added is released (upstream leaks it).
 * - `deps.mode` is validated before anything is read: an unknown mode rejects with INVALID_MODE.
 * Node objects are only read, never changed.
 */
import { PodrouteError } from '../errors.ts';
import { type Cidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { CidrSetError, type CidrSet } from '../ipam/index.ts';
import type { Node } from '../nodes/node.ts';

export type SyncMode = 'SyncFromCluster' | 'SyncFromCloud';
export const SYNC_MODES: readonly SyncMode[] = ['SyncFromCluster', 'SyncFromCloud'];

/** Event reasons, as upstream names them. */
export const INVALID_POD_CIDR = 'CloudCIDRAllocatorInvalidPodCIDR';
export const INVALID_MODE_EVENT = 'CloudCIDRAllocatorInvalidMode';
export const MISMATCH_EVENT = 'CloudCIDRAllocatorMismatch';
export type WarningReason = typeof INVALID_POD_CIDR | typeof INVALID_MODE_EVENT | typeof MISMATCH_EVENT;

export type NodeSyncOp =
  | { kind: 'update'; nodeName: string; node?: Node | null }
  | { kind: 'delete'; node: Node };

/** The cloud side of a node's pod CIDR (on AWS: the ENI prefix delegated to it, or its route). */
export interface CloudAlias {
  /** The node's alias range, or null when it has none. */
  alias(node: Node): Promise<string | null>;
  addAlias(node: Node, cidr: string): Promise<void>;
}

/** The Kubernetes side. */
export interface KubeNodes {
  getNode(name: string): Promise<Node>;
  updatePodCidr(node: Node, cidr: string): Promise<void>;
  setNetworkUnavailable(nodeName: string, unavailable: boolean): Promise<void>;
  warn(nodeName: string, reason: WarningReason, message: string): Promise<void>;
}

export interface NodeSyncDeps {
  mode: SyncMode;
  cidrSet: CidrSet;
  cloud: CloudAlias;
  kube: KubeNodes;
}

export type NodeSyncErrorCode = 'INVALID_MODE' | 'INVALID_CIDR' | 'INVALID_CONFIG';

/** A sync that cannot succeed as configured or as the node stands; retrying does not help. */
export class NodeSyncError extends PodrouteError {
  override name = 'NodeSyncError';
  constructor(
    readonly code: NodeSyncErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { retryable: false, ...options });
  }
}

export async function syncNode(op: NodeSyncOp, deps: NodeSyncDeps): Promise<void> {
  assertMode(deps.mode);
  if (op.kind === 'delete') return deleteNode(op.node, deps);
  return updateNode(op, deps);
}

async function updateNode(op: { nodeName: string; node?: Node | null }, deps: NodeSyncDeps): Promise<void> {
  const node = op.node ?? (await deps.kube.getNode(op.nodeName));
  const aliasText = await deps.cloud.alias(node);
  const alias = aliasText === null ? null : parseOrReject(aliasText, `cloud alias of node ${node.metadata.name}`);
  const podCidr = node.spec?.podCIDR ?? '';

  if (podCidr === '' && alias === null) return allocateRange(node, deps);
  if (podCidr === '' && alias !== null) return updateNodeFromAlias(node, alias, deps);
  if (alias === null) return updateAliasFromNode(node, podCidr, deps);
  return validateRange(node, podCidr, alias, deps);
}

async function validateRange(node: Node, podCidr: string, alias: Cidr, deps: NodeSyncDeps): Promise<void> {
  const parsed = tryParseCidr(podCidr);
  const aliasText = formatCidr(alias);
  // An unparseable podCIDR cannot equal the alias: upstream reports it as a mismatch too.
  if (parsed === null || formatCidr(parsed) !== aliasText) {
    // User intervention is needed (the alias was most likely changed by hand); nothing is written.
    await deps.kube.warn(node.metadata.name, MISMATCH_EVENT, `Node.Spec.PodCIDR != cloud alias (${podCidr} != ${aliasText})`);
  }
}

async function updateNodeFromAlias(node: Node, alias: Cidr, deps: NodeSyncDeps): Promise<void> {
  const name = node.metadata.name;
  await requireMode(deps, name, 'SyncFromCloud', 'Cannot sync from cloud in mode', 'cannot sync from cloud in mode');
  const cidr = formatCidr(alias);
  await deps.cidrSet.occupy(cidr, name);
  await deps.kube.updatePodCidr(node, cidr);
  await deps.kube.setNetworkUnavailable(name, false);
}

async function updateAliasFromNode(node: Node, podCidr: string, deps: NodeSyncDeps): Promise<void> {
  const name = node.metadata.name;
  await requireMode(deps, name, 'SyncFromCluster', 'Cannot sync to cloud in mode', 'cannot sync to cloud in mode');
  const cidr = formatCidr(parseOrReject(podCidr, `podCIDR of node ${name}`));
  await deps.cidrSet.occupy(cidr, name);
  await deps.cloud.addAlias(node, cidr);
  await deps.kube.setNetworkUnavailable(name, false);
}

async function allocateRange(node: Node, deps: NodeSyncDeps): Promise<void> {
  const name = node.metadata.name;
  await requireMode(deps, name, 'SyncFromCluster', 'Cannot allocate CIDRs in mode', 'controller cannot allocate CIDRs in mode');
  const cidr = await deps.cidrSet.allocateNext(name);
  // Upstream leaks the block when AddAlias fails (its set has no durable record). Ours is durable,
  // so give it back before rejecting: scoped to this node, it cannot free a block someone else holds.
  await releaseOnFailure(() => deps.cloud.addAlias(node, cidr), [{ set: deps.cidrSet, cidr }], name);
  // From here on the cloud holds the alias, so the block stays ours even if a write below fails: the
  // retry finds the alias (or, by owner, the same block) and finishes the job.
  await deps.kube.updatePodCidr(node, cidr);
  await deps.kube.setNetworkUnavailable(name, false);
}

async function deleteNode(node: Node, deps: NodeSyncDeps): Promise<void> {
  const name = node.metadata.name;
  const podCidr = node.spec?.podCIDR ?? '';
  if (podCidr === '') return;
  const cidr = tryParseCidr(podCidr);
  if (cidr === null) {
    await deps.kube.warn(name, INVALID_POD_CIDR, `Node ${JSON.stringify(name)} has an invalid PodCIDR: ${JSON.stringify(podCidr)}`);
    return;
  }
  await releaseOwned(deps.cidrSet, formatCidr(cidr), name);
}

/**
 * Runs `step` (adding an alias, allocating more blocks); when it fails, releases the blocks just
 * allocated for `owner` and rethrows the step's error unchanged.
 */
export async function releaseOnFailure(
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
export async function releaseOwned(set: CidrSet, cidr: string, owner: string): Promise<void> {
  try {
    await set.release(cidr, owner);
  } catch (error) {
    if (error instanceof CidrSetError && error.code === 'OUT_OF_RANGE') return;
    throw error;
  }
}

export function assertMode(mode: unknown): asserts mode is SyncMode {
  if (!(SYNC_MODES as readonly unknown[]).includes(mode)) {
    throw new NodeSyncError('INVALID_MODE', `unknown node sync mode ${JSON.stringify(mode)}: want ${SYNC_MODES.join(' or ')}`);
  }
}

/** Upstream's per-branch mode check: warn on the node, then reject. */
export async function requireMode(
  deps: { mode: SyncMode; kube: Pick<KubeNodes, 'warn'> },
  nodeName: string,
  wanted: SyncMode,
  warning: string,
  error: string,
): Promise<void> {
  if (deps.mode === wanted) return;
  await deps.kube.warn(nodeName, INVALID_MODE_EVENT, `${warning} ${JSON.stringify(deps.mode)}`);
  throw new NodeSyncError('INVALID_MODE', `${error} ${JSON.stringify(deps.mode)}`);
}

export function parseOrReject(text: string, what: string): Cidr {
  const cidr = tryParseCidr(text);
  if (cidr === null) throw new NodeSyncError('INVALID_CIDR', `invalid ${what}: ${JSON.stringify(text)}`);
  return cidr;
}
