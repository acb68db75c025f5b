/**
 * Work messages that reconcile and the node webhook send to the route worker. A message is a hint
 * (level-triggered), so it names only the work: a table, a destination, a target or a node. Messages
 * are versioned (`v`) and validated strictly at both ends; a non-canonical CIDR is rejected, never
 * rewritten, so a delete can never be silently retargeted.
 */
import * as z from '../util/zod-mini.ts';
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { INSTANCE_ID, describeIssue } from '../nodes/node.ts';
import { ROUTE_TABLE_ID } from '../routes/index.ts';
import { DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MAX_LENGTH } from '../util/kube-names.ts';

/**
 * Version 2 brought `node-left`, a sync-node's `admitted` (what a node's admission knew) and a
 * replace's `expect` (the instance a moved route was planned to leave). Producers
 * still write everything version 1 had as version 1, so a worker of an older release, still draining
 * the queue during a rolling upgrade, acts on it; the worker accepts both versions
 * (`ACCEPTED_VERSIONS`). `admitted` came after `node-left` within version 2: a worker of the release
 * before it rejects such a sync-node (an unknown key) and acks it, and that node becomes ready at the
 * next reconcile instead of at once (docs/upgrade.md); nothing is lost.
 */
const WORK_MESSAGE_VERSION = 2;
/** The version of the kinds that version 1 already had, as producers write them. */
const V1 = 1;
/** Versions the worker accepts: the current one and the previous one. */
const ACCEPTED_VERSIONS: readonly number[] = [V1, WORK_MESSAGE_VERSION];

/** The fields that several kinds of message share. */
function fieldSchemas() {
  const routeTableIdSchema = z.string().check(z.regex(ROUTE_TABLE_ID, 'want a route table id such as rtb-0123456789abcdef0'));
  const instanceIdSchema = z.string().check(z.regex(INSTANCE_ID, 'want an instance id such as i-0123456789abcdef0'));
  const nodeNameSchema = z
    .string()
    .check(
      z.maxLength(DNS1123_SUBDOMAIN_MAX_LENGTH, 'a node name has at most 253 characters'),
      z.regex(DNS1123_SUBDOMAIN, 'want a Kubernetes node name (lower-case RFC 1123 subdomain)'),
    );
  const destinationCidrSchema = z.string().check(z.superRefine((text: string, ctx) => {
    const cidr = tryParseCidr(text);
    if (!cidr) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is not a CIDR such as 10.0.1.0/24 or fd00:1::/80` });
      return;
    }
    const canonical = formatCidr(cidr);
    if (canonical !== text) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is not canonical (want ${canonical})` });
    }
  }));
  /** Kinds of version 1 are accepted as version 1 or 2; kinds new in version 2 only as 2. */
  const version = z.union([z.literal(V1), z.literal(WORK_MESSAGE_VERSION)]);
  return { routeTableIdSchema, instanceIdSchema, nodeNameSchema, destinationCidrSchema, version };
}

/** The schemas of every kind of message, built on first use (`onFirstUse`, lib/util/zod-mini.ts). */
const schemas = z.onFirstUse(() => {
  const { routeTableIdSchema, instanceIdSchema, nodeNameSchema, destinationCidrSchema, version } = fieldSchemas();
  const routeReasonSchema = z.enum(['blackhole', 'moved']);
  const deleteReasonSchema = z.enum(['blackhole', 'no-owner']);

  const routeFields = {
    v: version,
    routeTableId: routeTableIdSchema,
    destinationCidr: destinationCidrSchema,
    node: nodeNameSchema,
    instanceId: instanceIdSchema,
    reason: z.optional(routeReasonSchema),
  };

  const createRouteMessageSchema = z.strictObject({ ...routeFields, kind: z.literal('create') });
  /**
   * A replace of a `moved` route carries the instance the planner found there (`expect`, new in
   * version 2: a replace that carries it is written as version 2); the worker replaces the route only
   * while it still routes to that instance.
   */
  const replaceRouteMessageSchema = z.strictObject({ ...routeFields, kind: z.literal('replace'), expect: z.optional(z.strictObject({ instanceId: z.nullable(instanceIdSchema) })) });
  const deleteRouteMessageSchema = z.strictObject({
    v: version,
    kind: z.literal('delete'),
    routeTableId: routeTableIdSchema,
    destinationCidr: destinationCidrSchema,
    reason: deleteReasonSchema,
    /**
     * The route as the planner saw it. The worker deletes only while the route still looks like
     * this, so a destination re-pointed at a new node since the plan is never deleted.
     */
    expect: z.optional(z.strictObject({ instanceId: z.nullable(instanceIdSchema), blackhole: z.boolean() })),
  });
  /**
   * New in version 2 (a `sync-node` that carries it is written as version 2): what the admission of a
   * node's CREATE knew, its instance and the pod CIDRs the webhook patched in. The Node is stored only
   * after admission, so the worker routes these at once and leaves only the condition write waiting
   * for the stored node (lib/usecases/route-writes.ts, `syncNodeRoutes`).
   */
  const admittedSchema = z.strictObject({
    instanceId: instanceIdSchema,
    podCidrs: z.array(destinationCidrSchema).check(z.minLength(1, 'want at least one pod CIDR'), z.maxLength(2, 'a node has at most two pod CIDRs (one per family)')),
  });
  const syncNodeMessageSchema = z.strictObject({ v: version, kind: z.literal('sync-node'), node: nodeNameSchema, admitted: z.optional(admittedSchema) });
  /**
   * New in version 2. The node webhook admitted a DELETE of `node`: the worker checks, some seconds
   * later, whether the node is really gone (404) and only then releases its leases. Its routes are
   * left to the planner (next reconcile, under the mass-deletion guard).
   */
  const nodeLeftMessageSchema = z.strictObject({ v: z.literal(WORK_MESSAGE_VERSION), kind: z.literal('node-left'), node: nodeNameSchema });

  const workMessageSchema = z.discriminatedUnion('kind', [
    createRouteMessageSchema,
    replaceRouteMessageSchema,
    deleteRouteMessageSchema,
    syncNodeMessageSchema,
    nodeLeftMessageSchema,
  ]);
  return { admittedSchema, createRouteMessageSchema, replaceRouteMessageSchema, deleteRouteMessageSchema, syncNodeMessageSchema, nodeLeftMessageSchema, workMessageSchema };
});
type Schemas = ReturnType<typeof schemas>;

export type DeleteRouteMessage = z.infer<Schemas['deleteRouteMessageSchema']>;
export type SyncNodeMessage = z.infer<Schemas['syncNodeMessageSchema']>;
/** A message that writes one route: a create, a replace or a delete. */
export type RouteWriteMessage = z.infer<Schemas['createRouteMessageSchema']> | z.infer<Schemas['replaceRouteMessageSchema']> | DeleteRouteMessage;
type NodeLeftMessage = z.infer<Schemas['nodeLeftMessageSchema']>;
/** A message on the work queue: a route write, a `sync-node` or a `node-left`. */
export type WorkMessage = z.infer<Schemas['workMessageSchema']>;

/** The kinds the schemas know, in their order. */
const kinds = z.onFirstUse((): readonly string[] => schemas().workMessageSchema.def.options.flatMap((option) => option.shape.kind.def.values));
/** Kinds that version 1 did not have. */
const V2_KINDS: readonly string[] = ['node-left'];

/**
 * Validates an already-decoded value as a work message; throws `InvalidInputError` with one line
 * naming the first problem (version first, then kind, then the field).
 */
function toWorkMessage(value: unknown): WorkMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInputError('invalid route message: want a JSON object');
  }
  const record = value as Record<string, unknown>;
  if (typeof record.v !== 'number' || !ACCEPTED_VERSIONS.includes(record.v)) {
    throw new InvalidInputError(
      `invalid route message: unsupported version ${describeValue(record.v)} (want v: ${ACCEPTED_VERSIONS.join(' or ')})`,
    );
  }
  if (typeof record.kind !== 'string' || !kinds().includes(record.kind)) {
    throw new InvalidInputError(`invalid route message: kind ${describeValue(record.kind)} is not one of ${kinds().join(', ')}`);
  }
  if (record.v < WORK_MESSAGE_VERSION && V2_KINDS.includes(record.kind)) {
    throw new InvalidInputError(`invalid route message: kind ${record.kind} is new in version ${WORK_MESSAGE_VERSION} (got v: ${record.v})`);
  }
  if (record.v < WORK_MESSAGE_VERSION && record.kind === 'replace' && record.expect !== undefined) {
    throw new InvalidInputError(`invalid route message: a replace's expect is new in version ${WORK_MESSAGE_VERSION} (got v: ${record.v})`);
  }
  if (record.v < WORK_MESSAGE_VERSION && record.kind === 'sync-node' && record.admitted !== undefined) {
    throw new InvalidInputError(`invalid route message: a sync-node's admitted is new in version ${WORK_MESSAGE_VERSION} (got v: ${record.v})`);
  }
  const result = schemas().workMessageSchema.safeParse(value);
  if (!result.success) {
    throw new InvalidInputError(`invalid ${record.kind} message: ${describeIssue(result.error)}`);
  }
  return result.data;
}

/** Parses an SQS message body. Throws `InvalidInputError` (never retryable) for anything malformed. */
export function parseWorkMessage(body: string): WorkMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new InvalidInputError(`invalid route message: body is not JSON (${(error as Error).message})`, { cause: error });
  }
  return toWorkMessage(value);
}

/** The message's body as sent on the queue. */
export const serializeWorkMessage = (message: WorkMessage): string => JSON.stringify(message);

/**
 * A stable deduplication key for the work a message names. A create and a replace of the same
 * destination towards the same instance are the same work (`route|…`); a delete of a destination is
 * its own (`delete|…`); a node sync is keyed by the node (`node|…`).
 */
export function messageKey(message: WorkMessage): string {
  switch (message.kind) {
    case 'create':
    case 'replace':
      return `route|${message.routeTableId}|${message.destinationCidr}|${message.instanceId}`;
    case 'delete':
      return `delete|${message.routeTableId}|${message.destinationCidr}`;
    case 'sync-node':
      return `node|${message.node}`;
    case 'node-left':
      return `left|${message.node}`;
  }
}

/** The plan fields `toMessages` reads (structurally compatible with the route planner's output). */
interface RouteTarget {
  readonly routeTableId: string;
  readonly destinationCidr: string;
  readonly node: string;
  readonly instanceId: string;
}
interface PlannedRoutes {
  readonly create: ReadonlyArray<RouteTarget>;
  readonly replace: ReadonlyArray<RouteTarget & { readonly reason: 'blackhole' | 'moved'; readonly expect?: { readonly instanceId: string | null } }>;
  readonly delete: ReadonlyArray<{
    readonly routeTableId: string;
    readonly destinationCidr: string;
    readonly reason: 'blackhole' | 'no-owner';
    /** The route the deletion was planned on, recorded in the message. */
    readonly expect?: { readonly instanceId: string | null; readonly blackhole: boolean };
  }>;
}

interface ToMessagesOptions {
  /** Leave the plan's deletions out (the mass-deletion guard tripped). */
  readonly withholdDeletes: boolean;
}

/**
 * One message per planned route operation, in plan order: creates, replaces, then deletes (unless
 * withheld). Every message is validated as the worker will validate it, so a malformed plan entry
 * throws `InvalidInputError` here instead of poisoning the queue.
 */
export function toMessages(plan: PlannedRoutes, options: ToMessagesOptions): WorkMessage[] {
  const messages: WorkMessage[] = [];
  for (const op of plan.create) {
    messages.push(toWorkMessage({ v: V1, kind: 'create', ...pickTarget(op) }));
  }
  for (const op of plan.replace) {
    const replaced = op.expect === undefined ? { v: V1 } : { v: WORK_MESSAGE_VERSION, expect: { instanceId: op.expect.instanceId } };
    messages.push(toWorkMessage({ ...replaced, kind: 'replace', ...pickTarget(op), reason: op.reason }));
  }
  if (!options.withholdDeletes) {
    for (const op of plan.delete) {
      messages.push(
        toWorkMessage({
          v: V1,
          kind: 'delete',
          routeTableId: op.routeTableId,
          destinationCidr: op.destinationCidr,
          reason: op.reason,
          ...withExpect(op.expect),
        }),
      );
    }
  }
  return messages;
}

const withExpect = (seen: { instanceId: string | null; blackhole: boolean } | undefined) =>
  seen === undefined ? {} : { expect: { instanceId: seen.instanceId, blackhole: seen.blackhole } };

export type Admitted = z.infer<Schemas['admittedSchema']>;

/**
 * A validated `sync-node` message for one node: version 1, or version 2 when it carries what the
 * node's admission knew (`admitted`).
 */
export function syncNodeMessage(node: string, admitted?: Admitted): SyncNodeMessage {
  const message = admitted === undefined ? { v: V1, kind: 'sync-node', node } : { v: WORK_MESSAGE_VERSION, kind: 'sync-node', node, admitted };
  const result = schemas().syncNodeMessageSchema.safeParse(message);
  if (!result.success) throw new InvalidInputError(`invalid sync-node message: ${describeIssue(result.error)}`);
  return result.data;
}

/** A validated `node-left` message (version 2) for one node. */
export function nodeLeftMessage(node: string): NodeLeftMessage {
  const result = schemas().nodeLeftMessageSchema.safeParse({ v: WORK_MESSAGE_VERSION, kind: 'node-left', node });
  if (!result.success) throw new InvalidInputError(`invalid node-left message: ${describeIssue(result.error)}`);
  return result.data;
}

// Only the four target fields: a plan entry may carry more (the planner's own bookkeeping).
const pickTarget = (op: RouteTarget): RouteTarget => ({
  routeTableId: op.routeTableId,
  destinationCidr: op.destinationCidr,
  node: op.node,
  instanceId: op.instanceId,
});

function describeValue(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
