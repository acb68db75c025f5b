/**
 * Kubernetes admission (`admission.k8s.io/v1`) for Node CREATE, UPDATE and DELETE: the
 * AdmissionReview the API server sends, the answer podroute gives (allowed, or denied only when a
 * claim it must record before the node is stored could not be: `admissionDenial`), and the JSON
 * Patch that hands a joining node its pod CIDRs.
 */
import * as z from '../util/zod-mini.ts';
import { reject } from '../util/zod-mini.ts';
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { nodeSchema, podCidrsOf, type Node } from '../nodes/node.ts';
import { NODE_NAME_MESSAGE, isNodeName, orRequired } from './validation.ts';

const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

const groupVersionKind = () => z
  .looseObject({ group: z.string(), version: z.string(), kind: z.string() }, { error: orRequired('must be a {group, version, kind} object') })
  .check(z.refine((gvk) => gvk.group === '' && gvk.version === 'v1' && gvk.kind === 'Node', 'must be core/v1 Node'));

const groupVersionResource = () => z
  .looseObject({ group: z.string(), version: z.string(), resource: z.string() }, { error: orRequired('must be a {group, version, resource} object') })
  .check(z.refine((gvr) => gvr.group === '' && gvr.version === 'v1' && gvr.resource === 'nodes', 'must be core/v1 nodes'));

/**
 * The fields of an AdmissionRequest that podroute reads, in the order they are checked (the first
 * problem is the one reported): what the review is about comes before the node inside it.
 */
const admissionRequestFields = () => z.looseObject(
  {
    uid: z.string({ error: orRequired('must be a string') }).check(z.minLength(1, 'must not be empty'), z.maxLength(256, 'must be at most 256 characters')),
    resource: groupVersionResource(),
    kind: groupVersionKind(),
    subResource: z.optional(z.literal('', { error: orRequired('must be empty (podroute admits nodes, not a subresource)') })),
    operation: z.enum(['CREATE', 'UPDATE', 'DELETE'], { error: orRequired('must be CREATE, UPDATE or DELETE') }),
    name: z.optional(z.string({ error: orRequired('must be a string') })),
    namespace: z.optional(z.literal('', { error: orRequired('must be empty (nodes are cluster-scoped)') })),
    object: z.nullish(nodeSchema()),
    oldObject: z.nullish(nodeSchema()),
    dryRun: z.optional(z.boolean({ error: orRequired('must be true or false') })),
    userInfo: z.optional(z.looseObject({ username: z.optional(z.string()), groups: z.optional(z.array(z.string())) })),
  },
  { error: orRequired('must be an AdmissionRequest object') },
);

/** The node a review is about: the one being created or updated (`object`), or deleted (`oldObject`). */
const NODE_FIELD = { CREATE: 'object', UPDATE: 'object', DELETE: 'oldObject' } as const;
const NODE_ROLE = { CREATE: 'created', UPDATE: 'updated', DELETE: 'deleted' } as const;

const admissionRequestSchema = () => z.pipe(
  admissionRequestFields(),
  z.transform((request: z.output<ReturnType<typeof admissionRequestFields>>, payload) => {
    const field = NODE_FIELD[request.operation];
    const node = request[field];
    if (!node) return reject(payload, `must be the Node being ${NODE_ROLE[request.operation]}`, [field]);
    if (node.kind !== undefined && node.kind !== 'Node') return reject(payload, 'must be Node', [field, 'kind']);
    if (!isNodeName(node.metadata.name)) return reject(payload, NODE_NAME_MESSAGE, [field, 'metadata', 'name']);
    if (request.name !== undefined && request.name !== '' && request.name !== node.metadata.name) {
      return reject(payload, `must equal ${field}.metadata.name`, ['name']);
    }
    if (request.operation === 'UPDATE') {
      // An UPDATE carries the stored node too (Kubernetes docs, "Dynamic Admission Control": oldObject is the existing object).
      if (!request.oldObject) return reject(payload, 'must be the Node as stored before the update', ['oldObject']);
      if (request.oldObject.metadata.name !== node.metadata.name) return reject(payload, 'must equal object.metadata.name', ['oldObject', 'metadata', 'name']);
    }
    return { ...request, name: node.metadata.name, dryRun: request.dryRun ?? false, node };
  }),
);

/**
 * AdmissionReview v1 for a core/v1 Node CREATE, UPDATE or DELETE. The parsed value carries
 * `request.node`: the node of the review (`object` for CREATE and UPDATE, `oldObject` for DELETE),
 * validated with `nodeSchema`, and `request.name`, its name. Unknown fields are kept.
 */
export const admissionReviewSchema = z.onFirstUse(() => z.looseObject(
  {
    apiVersion: z.literal(ADMISSION_API_VERSION, { error: orRequired(`must be ${ADMISSION_API_VERSION}`) }),
    kind: z.literal('AdmissionReview', { error: orRequired('must be AdmissionReview') }),
    request: admissionRequestSchema(),
  },
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be an AdmissionReview object' : undefined) },
));

export type AdmissionReview = z.infer<ReturnType<typeof admissionReviewSchema>>;

/**
 * Whether an UPDATE is a node's join under an external cloud controller manager: the stored node
 * has no providerID and the update sets one (the CCM's node controller sets it once, later than
 * the kubelet's CREATE; Kubernetes validation lets it change only from empty). The manifest's
 * matchConditions send only such updates (infra/kubernetes/webhook.yaml); this is decided here
 * again, because the webhook cannot know that the filter ran. An update sent by a node's own
 * kubelet is never a join: NodeRestriction lets a kubelet set its Node's providerID, so a kubelet
 * could name another node's instance. Kubelets authenticate as `system:node:<name>` in the group
 * `system:nodes` (Kubernetes docs, "Using Node Authorization"); an update without userInfo (the
 * API server always sends it) is not trusted either.
 */
export function isProviderIdJoin(request: AdmissionReview['request']): boolean {
  if (request.operation !== 'UPDATE' || sentByNodeOrUnknown(request.userInfo)) return false;
  const before = request.oldObject?.spec?.providerID ?? '';
  const after = request.object?.spec?.providerID ?? '';
  return before === '' && after !== '';
}

function sentByNodeOrUnknown(user: AdmissionReview['request']['userInfo']): boolean {
  if (user?.username === undefined || user.username === '') return true;
  return user.username.startsWith('system:node:') || (user.groups ?? []).includes('system:nodes');
}

/** Whether a parsed JSON body claims to be an AdmissionReview (before it is validated as one). */
export function looksLikeAdmissionReview(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const kind: unknown = Reflect.get(value, 'kind');
  const apiVersion: unknown = Reflect.get(value, 'apiVersion');
  return kind === 'AdmissionReview' || (typeof apiVersion === 'string' && apiVersion.startsWith('admission.k8s.io/'));
}

// --- the answer ---------------------------------------------------------------------------------

/** RFC 6902 operations podroute emits. */
export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string };

export type AdmissionReviewResponse = {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: {
    uid: string;
    allowed: boolean;
    /** A denial's reason, shown to the client (Kubernetes docs, "Dynamic Admission Control", "Response"). */
    status?: { code: number; message: string };
    patchType?: 'JSONPatch';
    /** base64 of the JSON array of patch operations. */
    patch?: string;
    warnings?: string[];
  };
};

/**
 * The answer that allows the review with `uid`. A non-empty `patch` is sent as a base64
 * JSON Patch (`patchType: JSONPatch`); without one both fields are left out, as the API server
 * expects. Warnings are sent one line each, empty ones dropped.
 */
export function admissionResponse(uid: string, patch?: readonly JsonPatchOp[], warnings?: readonly string[]): AdmissionReviewResponse {
  const response: AdmissionReviewResponse['response'] = { uid, allowed: true };
  if (patch && patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(patch), 'utf8').toString('base64');
  }
  const lines = (warnings ?? []).map(oneLine).filter((w) => w !== '');
  if (lines.length > 0) response.warnings = lines;
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

/**
 * The answer that denies the review with `uid`: the API server fails the request with `status`
 * (Kubernetes docs, "Dynamic Admission Control", "Response": a webhook may set the HTTP code and
 * message of a rejection). 503: the cause is transient; a kubelet keeps retrying its registration
 * (k8s pkg/kubelet/kubelet_node_status.go, registerWithAPIServer, with a backoff of up to 7 s).
 */
export function admissionDenial(uid: string, message: string): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid, allowed: false, status: { code: 503, message: oneLine(message) } } };
}

function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
}

// --- the patch ----------------------------------------------------------------------------------

/**
 * A JSON Pointer (RFC 6901) from raw reference tokens: `~` becomes `~0`, `/` becomes `~1`.
 * Exported for its table-driven test (test/webhook/admission.test.ts).
 */
export function jsonPointer(...tokens: readonly string[]): string {
  return tokens.map((token) => `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * JSON Patch operations that give `node` the pod CIDRs `cidrs`: `spec.podCIDR` = the first,
 * `spec.podCIDRs` = all (at most one per IP family, the order kept, as Kubernetes requires).
 * Nothing when `cidrs` is empty or the node already has a pod CIDR (a pod CIDR never changes once
 * set); `/spec` is added first when the node has none. Throws InvalidInputError for a bad list.
 */
export function podCidrPatch(node: Node, cidrs: readonly string[]): JsonPatchOp[] {
  if (cidrs.length === 0 || podCidrsOf(node).length > 0) return [];
  const parsed = cidrs.map((text) => {
    const cidr = tryParseCidr(text);
    if (!cidr || formatCidr(cidr) !== text) throw new InvalidInputError(`pod CIDR ${JSON.stringify(text)} is not a canonical CIDR`);
    return cidr;
  });
  const [first, second] = parsed;
  if (parsed.length > 2 || (first && second && first.family === second.family)) {
    throw new InvalidInputError(`pod CIDRs ${cidrs.join(',')}: at most one CIDR per IP family`);
  }
  const ops: JsonPatchOp[] = [];
  if (node.spec === undefined) ops.push({ op: 'add', path: jsonPointer('spec'), value: {} });
  // `add` on an existing member replaces it (RFC 6902 4.1): right for an empty podCIDR / podCIDRs.
  ops.push({ op: 'add', path: jsonPointer('spec', 'podCIDR'), value: cidrs[0] });
  ops.push({ op: 'add', path: jsonPointer('spec', 'podCIDRs'), value: [...cidrs] });
  return ops;
}

/**
 * JSON Patch operations that give a node being created `NetworkUnavailable=True` (transition time
 * `at`, RFC 3339), worded by the data plane for a node not carried yet (`text`: in routes mode what
 * upstream's kubelet registers a node with where the cloud needs routes, kubernetes
 * pkg/kubelet/kubelet_node_status.go initialNode), so nothing is scheduled on it before its pod
 * CIDR is carried. Node create stores
 * status as sent (k8s pkg/registry/core/node/strategy.go, PrepareForCreate: nodes allow all fields,
 * including status, on create; the recorded node-as-stored-after-kubelet-create keeps the
 * kubelet's conditions). The kubelet's other conditions are kept; a NetworkUnavailable it sent is
 * replaced where it stands. Meant to follow `podCidrPatch` in one answer.
 */
export function networkUnavailablePatch(node: Node, at: string, text: { reason: string; message: string }): JsonPatchOp[] {
  const condition = { type: 'NetworkUnavailable', status: 'True', reason: text.reason, message: text.message, lastTransitionTime: at };
  const conditions = node.status?.conditions;
  if (node.status === undefined) return [{ op: 'add', path: jsonPointer('status'), value: { conditions: [condition] } }];
  if (!conditions) return [{ op: 'add', path: jsonPointer('status', 'conditions'), value: [condition] }];
  const index = conditions.findIndex((c) => c.type === condition.type);
  if (index >= 0) return [{ op: 'replace', path: jsonPointer('status', 'conditions', String(index)), value: condition }];
  // `-` appends to the array (RFC 6901 section 4, RFC 6902 section 4.1).
  return [{ op: 'add', path: jsonPointer('status', 'conditions', '-'), value: condition }];
}

/**
 * The webhook's timeout when the URL does not say: admissionregistration.k8s.io/v1
 * `timeoutSeconds` defaults to 10 and lies between 1 and 30.
 */
const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;
const MAX_WEBHOOK_TIMEOUT_SECONDS = 30;
/** Share of the webhook's timeout an admission may spend; the rest carries the answer back. */
const ADMISSION_BUDGET_SHARE = 0.8;

/**
 * How long an admission may work, in ms: a share of the webhook's timeout, which the API server
 * sends on the URL as `?timeout=<n>s` (k8s.io/apiserver admission/plugin/webhook/request: the
 * client sets the request timeout as that query parameter; `?timeout=5s` in every recorded
 * exchange), and never past the function's own remaining time. An unreadable value counts as
 * the default.
 */
export function admissionBudgetMs(timeout: string | undefined, remainingMs: number): number {
  const match = /^(\d{1,2})s$/.exec(timeout ?? '');
  const seconds = match ? Math.min(Math.max(Number(match[1]), 1), MAX_WEBHOOK_TIMEOUT_SECONDS) : DEFAULT_WEBHOOK_TIMEOUT_SECONDS;
  return Math.floor(Math.max(0, Math.min(seconds * 1000, remainingMs)) * ADMISSION_BUDGET_SHARE);
}
