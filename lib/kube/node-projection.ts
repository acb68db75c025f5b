/**
 * What the node adapter (./kube-nodes.ts) keeps of a Node from the API: the fields podroute reads,
 * copied right after a node is parsed so that the rest (managedFields, images, nodeInfo: most of a
 * node's 10 to 15 KB) is garbage at once. Pure.
 */
import type { Fields } from './list-items.ts';

/**
 * The fields of a Node that podroute reads (lib/nodes/node.ts `Node`, and their readers): name,
 * uid (event involvedObject), resourceVersion, labels (node selector), creationTimestamp (the
 * worker's node age), deletionTimestamp (node-left), spec.providerID / podCIDR / podCIDRs (planner,
 * nodesync, unmanagedReason) and status.conditions (NetworkUnavailable and its transition time).
 * Everything else a kubelet registers (managedFields, images, nodeInfo, addresses, capacity,
 * annotations: 10 to 15 KB a node) is dropped right after a page is parsed. Values are copied as
 * they are; the schema validates them afterwards.
 */
export function projectNode(item: unknown): unknown {
  return project(item, null);
}

/**
 * What a listed node keeps: only what reconcile's and the webhook's decisions read of a node among
 * many (name, uid, creationTimestamp, deletionTimestamp, the labels `keepLabels` names, providerID,
 * pod CIDRs and the NetworkUnavailable condition's status and transition time), so that a list of
 * 100,000 nodes stays small. A node read by name keeps all of `projectNode`.
 */
export function projectListedNode(item: unknown, keepLabels: ReadonlySet<string> | null): unknown {
  return project(item, { keepLabels });
}

/** The members of a listed node's JSON that `projectListedNode` can keep: all a list page's parse builds (lib/kube/list-items.ts `pickValue`). */
export const LISTED_NODE_FIELDS: Fields = {
  metadata: { name: true, uid: true, labels: true, creationTimestamp: true, deletionTimestamp: true },
  spec: { providerID: true, podCIDR: true, podCIDRs: true },
  status: { conditions: true },
};

function project(item: unknown, listed: { keepLabels: ReadonlySet<string> | null } | null): unknown {
  if (!isRecord(item)) return item;
  const out: Record<string, unknown> = {};
  if (!listed && 'apiVersion' in item) out.apiVersion = item.apiVersion;
  if (!listed && 'kind' in item) out.kind = item.kind;
  const metadata = item.metadata;
  if (isRecord(metadata)) {
    out.metadata = pick(metadata, listed ? ['name', 'uid', 'labels', 'creationTimestamp', 'deletionTimestamp'] : ['name', 'uid', 'resourceVersion', 'labels', 'creationTimestamp', 'deletionTimestamp']);
    const labels = metadata.labels;
    if (listed?.keepLabels && isRecord(labels)) (out.metadata as Record<string, unknown>).labels = pick(labels, [...listed.keepLabels]);
  } else if ('metadata' in item) {
    out.metadata = metadata;
  }
  const spec = item.spec;
  if (isRecord(spec)) out.spec = pick(spec, ['providerID', 'podCIDR', 'podCIDRs']);
  else if ('spec' in item) out.spec = spec;
  const status = item.status;
  if (isRecord(status)) {
    out.status = pick(status, ['conditions']);
    const conditions = status.conditions;
    if (listed && Array.isArray(conditions)) (out.status as Record<string, unknown>).conditions = conditions.filter((c) => isRecord(c) && c.type === 'NetworkUnavailable').map(listedCondition);
  } else if ('status' in item) out.status = status;
  return out;
}

/**
 * What a listed node's NetworkUnavailable condition keeps: its status (the planner's input) and its
 * lastTransitionTime (how long a node has been blocked); the type and the usual statuses as one
 * shared string each, not a copy per node.
 */
function listedCondition(condition: Record<string, unknown>): Record<string, unknown> {
  const { status } = condition;
  const out: Record<string, unknown> = { type: 'NetworkUnavailable', status: status === 'True' ? 'True' : status === 'False' ? 'False' : status };
  if ('lastTransitionTime' in condition) out.lastTransitionTime = condition.lastTransitionTime;
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pick(from: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in from) out[key] = from[key];
  return out;
}
