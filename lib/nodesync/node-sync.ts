/**
 * Node sync over ports: `syncNodeDualStack` reads the node and the cloud's aliases, asks the decider
 * (./node-sync-decision.ts) for the actions and applies them in order. A failed `allocate` or
 * `addAlias` gives back the blocks this sync allocated (they are scoped to this node); once the cloud
 * holds the aliases the blocks stay. Node objects are only read, never changed.
 */
import { CidrSetError, type CidrSet } from '../ipam/index.ts';
import type { Node } from '../nodes/node.ts';
import { type CidrRef, type NodeSyncAction, NodeSyncError, type SyncMode, decideNodeSync, nodeSyncConfig } from './node-sync-decision.ts';
import type { DualStackCloudAlias, DualStackKubeNodes } from '../usecases/ports.ts';

export type NodeSyncOp =
  | { kind: 'update'; nodeName: string; node?: Node | null }
  | { kind: 'delete'; node: Node };

export interface DualStackSyncDeps {
  mode: SyncMode;
  /** One set per cluster CIDR, in the order the node's podCIDRs take; one family each. */
  cidrSets: CidrSet[];
  cloud: DualStackCloudAlias;
  kube: DualStackKubeNodes;
}

export async function syncNodeDualStack(op: NodeSyncOp, deps: DualStackSyncDeps): Promise<void> {
  const config = nodeSyncConfig(deps.mode, deps.cidrSets.map((set) => set.clusterCidr));
  if (op.kind === 'delete') {
    await applyNodeSync(decideNodeSync({ kind: 'delete', node: op.node }, config), op.node, deps);
    return;
  }
  const node = op.node ?? (await deps.kube.getNode(op.nodeName));
  const aliases = await deps.cloud.alias(node);
  await applyNodeSync(decideNodeSync({ kind: 'update', node, aliases }, config), node, deps);
}

/** Applies the decider's actions for `node`, in order; the first failure rejects. */
export async function applyNodeSync(actions: readonly NodeSyncAction[], node: Node, deps: Omit<DualStackSyncDeps, 'mode'>): Promise<void> {
  const name = node.metadata.name;
  const allocated = new Map<number, string>();
  const setOf = (i: number): CidrSet => {
    const set = deps.cidrSets[i];
    if (set === undefined) throw new NodeSyncError('INVALID_CONFIG', `node sync action names set ${i} of ${deps.cidrSets.length}`);
    return set;
  };
  const resolve = (refs: readonly CidrRef[]): string[] =>
    refs.map((ref) => {
      if ('cidr' in ref) return ref.cidr;
      const cidr = allocated.get(ref.allocated);
      if (cidr === undefined) throw new Error(`node sync action names the block of set ${ref.allocated} before its allocate`);
      return cidr;
    });
  for (const action of actions) {
    switch (action.kind) {
      case 'warn':
        await deps.kube.warn(name, action.reason, action.message);
        break;
      case 'fail':
        throw new NodeSyncError(action.code, action.message);
      case 'occupy':
        await setOf(action.set).occupy(action.cidr, name);
        break;
      case 'allocate': {
        const set = setOf(action.set);
        allocated.set(action.set, await releaseOnFailure(() => set.allocateNext(name), allocated, deps.cidrSets, name));
        break;
      }
      case 'addAlias':
        await releaseOnFailure(() => deps.cloud.addAlias(node, resolve(action.cidrs)), allocated, deps.cidrSets, name);
        break;
      case 'patchPodCidrs':
        await deps.kube.updatePodCidr(node, resolve(action.cidrs));
        break;
      case 'setNetworkUnavailable':
        await deps.kube.setNetworkUnavailable(name, action.unavailable);
        break;
      case 'release':
        await releaseOwned(setOf(action.set), action.cidr, name);
        break;
    }
  }
}

/**
 * Runs `step` (adding an alias, allocating another block); when it fails, releases the blocks
 * `allocated` holds for `owner` and rethrows the step's error unchanged.
 */
async function releaseOnFailure<T>(step: () => Promise<T>, allocated: ReadonlyMap<number, string>, sets: readonly CidrSet[], owner: string): Promise<T> {
  try {
    return await step();
  } catch (error) {
    for (const [i, cidr] of allocated) {
      // Best effort: the caller needs the step's error, and a block left behind stays tied to this
      // node (a retry gets it back through its owner) until the lease sweep frees it.
      await sets[i]?.release(cidr, owner).catch(() => undefined);
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
