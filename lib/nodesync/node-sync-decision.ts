/**
 * Node sync's decider: upstream `NodeSync`'s `updateOp` / `deleteOp` (nodeipam/ipam/sync) as a pure
 * function from a node, the cloud's aliases and the configured sets (one per family) to the list of
 * actions that keeps them in agreement (ARCHITECTURE contract 3). The branches, their order and
 * where we differ from upstream: docs/decisions/0013-node-sync.md.
 */
import { CodedError } from '../errors.ts';
import { type Cidr, type Family, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { type Node, podCidrsOf } from '../nodes/node.ts';

export type SyncMode = 'SyncFromCluster' | 'SyncFromCloud';
const SYNC_MODES: readonly SyncMode[] = ['SyncFromCluster', 'SyncFromCloud'];

/** Event reasons, as upstream names them. */
const INVALID_POD_CIDR = 'CloudCIDRAllocatorInvalidPodCIDR';
const INVALID_MODE_EVENT = 'CloudCIDRAllocatorInvalidMode';
const MISMATCH_EVENT = 'CloudCIDRAllocatorMismatch';
export type WarningReason = typeof INVALID_POD_CIDR | typeof INVALID_MODE_EVENT | typeof MISMATCH_EVENT;

export type NodeSyncErrorCode = 'INVALID_MODE' | 'INVALID_CIDR' | 'INVALID_CONFIG';

/** A sync that cannot succeed as configured or as the node stands; retrying does not help. */
export class NodeSyncError extends CodedError<NodeSyncErrorCode> {
  override name = 'NodeSyncError';
}

/** The validated configuration: the mode and the family of each set, in the sets' order. */
export interface NodeSyncConfig {
  readonly mode: SyncMode;
  readonly families: readonly Family[];
}

/** What the decider sees: the node and, for an update, the cloud's aliases for it (any order). */
export type NodeSyncInput =
  | { kind: 'update'; node: Node; aliases: readonly string[] }
  | { kind: 'delete'; node: Node };

/** A CIDR an action names: known now, or the block the `allocate` of set `allocated` returns. */
export type CidrRef = { cidr: string } | { allocated: number };

/** One step, for the node of the input; `set` is an index into the configured sets. */
export type NodeSyncAction =
  | { kind: 'warn'; reason: WarningReason; message: string }
  /** Stop here and reject with a NodeSyncError of this code. */
  | { kind: 'fail'; code: NodeSyncErrorCode; message: string }
  | { kind: 'occupy'; set: number; cidr: string }
  | { kind: 'allocate'; set: number }
  | { kind: 'addAlias'; cidrs: CidrRef[] }
  /** `spec.podCIDRs` (and `spec.podCIDR`, the first) become `cidrs`. */
  | { kind: 'patchPodCidrs'; cidrs: CidrRef[] }
  | { kind: 'setNetworkUnavailable'; unavailable: false }
  | { kind: 'release'; set: number; cidr: string };

type Branch = 'allocate' | 'fromAlias' | 'toAlias' | 'validate';

/** A node's podCIDRs entry as written, and parsed (null when it does not parse). */
interface NodeValue {
  text: string;
  cidr: Cidr | null;
}

interface SetPlan {
  set: number;
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

/**
 * Validates the mode and the sets' cluster CIDRs (one set per family, at least one); throws a
 * NodeSyncError (INVALID_MODE, INVALID_CONFIG) when they cannot work.
 */
export function nodeSyncConfig(mode: unknown, clusterCidrs: readonly string[]): NodeSyncConfig {
  if (!(SYNC_MODES as readonly unknown[]).includes(mode)) {
    throw new NodeSyncError('INVALID_MODE', `unknown node sync mode ${JSON.stringify(mode)}: want ${SYNC_MODES.join(' or ')}`);
  }
  const families = clusterCidrs.map((text) => {
    const cluster = tryParseCidr(text);
    if (cluster === null) throw new NodeSyncError('INVALID_CONFIG', `CIDR set with invalid cluster CIDR ${JSON.stringify(text)}`);
    return cluster.family;
  });
  if (families.length === 0 || new Set(families).size !== families.length) {
    throw new NodeSyncError('INVALID_CONFIG', `node sync needs one CIDR set per family, got [${clusterCidrs.join(', ')}]`);
  }
  return { mode: mode as SyncMode, families };
}

/** The actions for one node, in the order they must be applied; a `fail` ends the list. */
export function decideNodeSync(input: NodeSyncInput, config: NodeSyncConfig): NodeSyncAction[] {
  return input.kind === 'delete' ? decideDelete(input.node, config) : decideUpdate(input.node, input.aliases, config);
}

function decideUpdate(node: Node, aliasTexts: readonly string[], config: NodeSyncConfig): NodeSyncAction[] {
  const name = node.metadata.name;
  const aliases: Cidr[] = [];
  for (const text of aliasTexts) {
    const alias = tryParseCidr(text);
    if (alias === null) return [invalidCidr(`cloud alias of node ${name}`, text)];
    aliases.push(alias);
  }
  const plans = planSets(node, aliases, config.families);
  const refused = modeRefusal(plans, config.mode);
  if (refused) return refused;
  // A node value the cloud must take has to parse; in validateRange an unparseable one is a mismatch.
  const unparsed = plans.find((p) => p.branch === 'toAlias' && p.node !== null && p.node.cidr === null);
  if (unparsed?.node) return [invalidCidr(`podCIDR of node ${name}`, unparsed.node.text)];
  return [...mismatchWarnings(plans), ...writes(plans)];
}

/** Each set's branch, from the node value and the alias of that set. */
function planSets(node: Node, aliases: readonly Cidr[], families: readonly Family[]): SetPlan[] {
  const nodeValues = placeNodeValues(podCidrsOf(node), families);
  return families.map((family, set): SetPlan => {
    const value = nodeValues.find((v) => v.setIndex === set) ?? null;
    const alias = aliases.find((c) => c.family === family) ?? null;
    const branch: Branch =
      value === null ? (alias === null ? 'allocate' : 'fromAlias') : alias === null ? 'toAlias' : 'validate';
    return { set, branch, node: value, alias };
  });
}

/** The warning and failure of the first branch the mode forbids, or null. */
function modeRefusal(plans: readonly SetPlan[], mode: SyncMode): NodeSyncAction[] | null {
  for (const plan of plans) {
    if (plan.branch === 'validate') continue;
    const [wanted, warning, error] = MODE_RULES[plan.branch];
    if (mode !== wanted) {
      return [
        { kind: 'warn', reason: INVALID_MODE_EVENT, message: `${warning} ${JSON.stringify(mode)}` },
        { kind: 'fail', code: 'INVALID_MODE', message: `${error} ${JSON.stringify(mode)}` },
      ];
    }
  }
  return null;
}

/** validateRange: a node value that differs from the cloud's needs a user (nothing is written for it). */
function mismatchWarnings(plans: readonly SetPlan[]): NodeSyncAction[] {
  return plans.flatMap((plan): NodeSyncAction[] => {
    if (plan.branch !== 'validate' || plan.node === null || plan.alias === null) return [];
    const aliasText = formatCidr(plan.alias);
    if (plan.node.cidr !== null && formatCidr(plan.node.cidr) === aliasText) return [];
    return [{ kind: 'warn', reason: MISMATCH_EVENT, message: `Node.Spec.PodCIDR != cloud alias (${plan.node.text} != ${aliasText})` }];
  });
}

/** Occupy the adopted values, allocate the missing, tell the cloud and the node, mark it reachable. */
function writes(plans: readonly SetPlan[]): NodeSyncAction[] {
  const actions: NodeSyncAction[] = [];
  const wanted = new Map<number, CidrRef>();
  for (const plan of plans) {
    const adopted = plan.branch === 'fromAlias' ? plan.alias : plan.branch === 'toAlias' ? (plan.node?.cidr ?? null) : null;
    if (adopted === null) continue;
    const cidr = formatCidr(adopted);
    actions.push({ kind: 'occupy', set: plan.set, cidr });
    wanted.set(plan.set, { cidr });
  }
  for (const plan of plans) {
    if (plan.branch !== 'allocate') continue;
    actions.push({ kind: 'allocate', set: plan.set });
    wanted.set(plan.set, { allocated: plan.set });
  }
  const refOf = (plan: SetPlan): CidrRef => wanted.get(plan.set) ?? { cidr: nodeText(plan.node) };
  const toCloud = plans.filter((p) => p.branch === 'allocate' || p.branch === 'toAlias').map(refOf);
  if (toCloud.length > 0) actions.push({ kind: 'addAlias', cidrs: toCloud });
  if (plans.some((p) => p.branch === 'allocate' || p.branch === 'fromAlias')) actions.push({ kind: 'patchPodCidrs', cidrs: plans.map(refOf) });
  if (plans.some((p) => p.branch !== 'validate')) actions.push({ kind: 'setNetworkUnavailable', unavailable: false });
  return actions;
}

function decideDelete(node: Node, config: NodeSyncConfig): NodeSyncAction[] {
  const name = node.metadata.name;
  return placeNodeValues(podCidrsOf(node), config.families).flatMap((value): NodeSyncAction[] => {
    if (value.cidr === null) {
      return [{ kind: 'warn', reason: INVALID_POD_CIDR, message: `Node ${JSON.stringify(name)} has an invalid PodCIDR: ${JSON.stringify(value.text)}` }];
    }
    return value.setIndex === null ? [] : [{ kind: 'release', set: value.setIndex, cidr: formatCidr(value.cidr) }];
  });
}

/**
 * The node's podCIDRs in their order, each with the index of the set it belongs to (null for none):
 * the set of its family, else (what no family claims) the set at its own position.
 */
function placeNodeValues(texts: string[], families: readonly Family[]): Array<NodeValue & { setIndex: number | null }> {
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

function invalidCidr(what: string, text: string): NodeSyncAction {
  return { kind: 'fail', code: 'INVALID_CIDR', message: `invalid ${what}: ${JSON.stringify(text)}` };
}
