/**
 * The slice of a Kubernetes v1 Node that podroute reads, with a schema for outside data and small
 * pure accessors. Objects are never mutated: a change is described, then patched by an adapter.
 */
import * as z from '../util/zod-mini.ts';
import { InvalidInputError } from '../errors.ts';

const conditionSchema = () => z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.optional(z.string()),
  message: z.optional(z.string()),
  lastTransitionTime: z.nullish(z.string()),
  lastHeartbeatTime: z.nullish(z.string()),
});

/** A node from outside: the fields podroute reads, checked; every other field kept. */
export const nodeSchema = z.onFirstUse(() => z.looseObject({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  metadata: z.looseObject({
    name: z.string().check(z.minLength(1, 'metadata.name must not be empty')),
    uid: z.optional(z.string()),
    resourceVersion: z.optional(z.string()),
    labels: z.nullish(z.record(z.string(), z.string())),
  }),
  spec: z.optional(
    z.looseObject({
      podCIDR: z.optional(z.string()),
      podCIDRs: z.nullish(z.array(z.string())),
      providerID: z.optional(z.string()),
    }),
  ),
  status: z.optional(z.looseObject({ conditions: z.nullish(z.array(conditionSchema())) })),
}));

export type Node = z.infer<ReturnType<typeof nodeSchema>>;

/**
 * A node list: the API's `NodeList` (GET /api/v1/nodes), or kubectl's own wrapper. `kubectl get
 * nodes -o json` prints `{"apiVersion": "v1", "items": [...], "kind": "List", "metadata":
 * {"resourceVersion": ""}}`: kubectl collects what it fetched into an unversioned `List`
 * (kubernetes/kubectl pkg/cmd/get/get.go), not the server's `NodeList`. Both are accepted; every
 * item must be a Node (a `List` can hold any kind, e.g. `kubectl get nodes,pods -o json`).
 */
const nodeListSchema = z.onFirstUse(() => z.looseObject({
  kind: z.optional(z.enum(['NodeList', 'List'], { error: 'kind must be "List" or "NodeList" (the output of `kubectl get nodes -o json`)' })),
  items: z.array(
    z.extend(nodeSchema(), { kind: z.optional(z.literal('Node', { error: 'every item must be a Node (kind "Node")' })) }),
    { error: 'items must be an array of Nodes' },
  ),
}));

/** Validates one node from outside; throws InvalidInputError naming the first problem. */
export function parseNode(value: unknown): Node {
  const result = nodeSchema().safeParse(value);
  if (!result.success) throw new InvalidInputError(`not a Kubernetes Node: ${describeIssue(result.error)}`);
  return result.data;
}

/** Validates a v1 NodeList (as `kubectl get nodes -o json` prints it) and returns its nodes. */
export function parseNodeList(value: unknown): Node[] {
  const result = nodeListSchema().safeParse(value);
  if (!result.success) throw new InvalidInputError(`not a Kubernetes NodeList: ${describeIssue(result.error)}`);
  return result.data.items;
}

export function describeIssue(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  const path = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
  return `${path}: ${issue.message}`;
}

/** An EC2 instance id: `i-` and 8 or 17 hex digits. */
export const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

/**
 * The EC2 instance id of a node: the last path segment of `spec.providerID`
 * (`aws:///us-east-1a/i-0abc…`, `aws:////i-0abc…`) or a bare `i-…`; null when there is none.
 */
export function instanceIdOf(node: Node): string | null {
  const providerId = node.spec?.providerID;
  if (!providerId) return null;
  const last = providerId.slice(providerId.lastIndexOf('/') + 1);
  if (!INSTANCE_ID.test(last)) return null;
  if (last !== providerId && !providerId.startsWith('aws://')) return null;
  return last;
}

/** The node's pod CIDRs as written: `spec.podCIDRs`, or `[spec.podCIDR]` when only that is set. */
export function podCidrsOf(node: Node): string[] {
  const list = node.spec?.podCIDRs;
  if (list && list.length > 0) return [...list];
  const single = node.spec?.podCIDR;
  return single ? [single] : [];
}

type ConditionStatus = 'True' | 'False' | 'Unknown';

/** Status of the node's NetworkUnavailable condition, or null when the condition is absent. */
export function networkUnavailableOf(node: Node): ConditionStatus | null {
  const condition = node.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
  if (!condition) return null;
  return condition.status === 'True' || condition.status === 'False' ? condition.status : 'Unknown';
}

/** When the node was created (`metadata.creationTimestamp`, epoch ms), or null when it does not say. */
export function createdAtMs(node: Node): number | null {
  const created = node.metadata.creationTimestamp;
  if (typeof created !== 'string') return null;
  const at = Date.parse(created);
  return Number.isFinite(at) ? at : null;
}

/** How long ago the node was created, or null when it does not say. */
export function nodeAgeMs(node: Node, now: number): number | null {
  const at = createdAtMs(node);
  return at === null ? null : now - at;
}
