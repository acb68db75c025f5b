/**
 * A local Kubernetes API server for tests and the sandbox: the core/v1 Node and Event REST calls
 * that `@kubernetes/client-node` makes, over HTTPS with a real CA, bearer-token authentication,
 * resourceVersion preconditions, the three patch types, Node validation (podCIDR is immutable once
 * set) and mutating admission webhooks for Node CREATE / DELETE. Test infrastructure, not product.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { listenLocal } from '../listen.ts';
import { createAuthzRoutes, type AccessState, type WebhookConfigurationState } from './authz.ts';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  isObject,
  PatchApplyError,
  PatchFormatError,
  type Json,
  type JsonObject,
} from './patch.ts';

const TLS_DIR = new URL('./tls/', import.meta.url);
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export type WebhookTarget = {
  /** `https://…` or `http://…` address the AdmissionReview is POSTed to. */
  url: string;
  /** PEM of the CA that signed the webhook's certificate (https only). */
  caPem?: string;
  /** Per call; a slower webhook counts as failed and is ignored (failurePolicy Ignore). */
  timeoutMs?: number;
};

export type KubeEmulatorOptions = {
  /** Bearer token the server accepts; a random one when absent. */
  token?: string;
  /** Delay before each answer. */
  latencyMs?: number;
  /** Mutating admission webhook called for every Node CREATE. */
  onNodeCreate?: WebhookTarget;
  /** Admission webhook called for every Node DELETE. */
  onNodeDelete?: WebhookTarget;
  /** Nodes present at start (admission is not run for them). */
  nodes?: object[];
  /** Listen port on 127.0.0.1 (0, the default, picks a free one). */
  port?: number;
  /**
   * How long a list continue token stays valid (default 5 minutes). A token expires after a short
   * time, 5 minutes by default, with 410 Gone (Kubernetes docs, "API Concepts: Retrieving large
   * results sets in chunks"); the server's tokens die with etcd compaction, which kube-apiserver runs
   * every `--etcd-compaction-interval` (default 5m). Tests set it small.
   */
  continueTtlMs?: number;
  /**
   * Share (0..1) of node DELETEs that, once the podroute webhook admitted them, are refused as a
   * later validating webhook would refuse them: 403 and the node stays. Deterministic per `seed`.
   */
  denyDeletes?: number;
  /** Seed of the `denyDeletes` draw (default 1). */
  seed?: number;
  /** Clock of continue-token expiry (default Date.now). */
  now?: () => number;
};

/** Makes the next matching requests fail. `match` is a stats key such as `PATCH /api/v1/nodes/{name}/status`. */
export type Failure =
  | { kind: 'error'; code?: number; times?: number; match?: string }
  | { kind: 'emptyList'; times?: number }
  /** The next `times` list requests that carry a continue token find it expired (410). */
  | { kind: 'expireContinue'; times?: number };

export type StatusObject = {
  kind: 'Status';
  apiVersion: 'v1';
  /** `continue` set on an expired list: the inconsistent token that goes on from where it stopped. */
  metadata: JsonObject;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: JsonObject;
  code: number;
};

export type WebhookCall = { operation: 'CREATE' | 'DELETE'; name: string; ok: boolean; allowed?: boolean; error?: string };

export type KubeEmulatorState = {
  /** Creates a node as `POST /api/v1/nodes` would (admission included unless `admit: false`). */
  addNode(node: object, options?: { admit?: boolean }): Promise<JsonObject>;
  /** Deletes a node as `DELETE /api/v1/nodes/{name}` would; false when there was none. */
  deleteNode(name: string, options?: { admit?: boolean }): Promise<boolean>;
  getNode(name: string): JsonObject | undefined;
  /** Replaces a stored node as is (no validation, no admission): for malformed-data tests. */
  putRawNode(node: object): void;
  nodes(): JsonObject[];
  /** Events from both `/api/v1` and `/apis/events.k8s.io/v1`, in creation order. */
  events(): JsonObject[];
  webhookCalls(): WebhookCall[];
  /** Node DELETEs admitted by the webhook and then refused by the `denyDeletes` share, by name. */
  refusedDeletes(): string[];
  setFailure(failure: Failure | null): void;
  resourceVersion(): number;
  /** SelfSubjectAccessReview answers (authz.ts). */
  access: AccessState;
  /** Registered MutatingWebhookConfigurations (authz.ts). */
  webhookConfigurations: WebhookConfigurationState;
};

export type KubeEmulatorStats = {
  /** Calls for one `VERB /path/{template}` key. */
  get(key: string): number;
  all(): Record<string, number>;
  reset(): void;
};

export type KubeConfigOptions = {
  clusters: { name: string; server: string; caData: string; skipTLSVerify: false }[];
  users: { name: string; token: string }[];
  contexts: { name: string; cluster: string; user: string }[];
  currentContext: string;
};

export type KubeEmulator = {
  url: string;
  port: number;
  caPem: string;
  token: string;
  /** Options for `new KubeConfig().loadFromOptions(...)`. */
  kubeConfig(): KubeConfigOptions;
  /** The same as a kubeconfig YAML document. */
  kubeConfigYaml(): string;
  state: KubeEmulatorState;
  stats: KubeEmulatorStats;
  close(): Promise<void>;
};

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: JsonObject,
    readonly listMeta?: JsonObject,
  ) {
    super(message);
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function statusOf(error: ApiError): StatusObject {
  const status: StatusObject = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: error.listMeta ?? {},
    status: 'Failure',
    message: error.message,
    reason: error.reason,
    code: error.code,
  };
  if (error.details) status.details = error.details;
  return status;
}

const notFound = (name: string) =>
  new ApiError(404, 'NotFound', `nodes "${name}" not found`, { name, kind: 'nodes' });
const conflict = (name: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on nodes "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, kind: 'nodes' },
  );
const invalid = (name: string, field: string, message: string) =>
  new ApiError(422, 'Invalid', `Node "${name}" is invalid: ${field}: ${message}`, {
    name,
    kind: 'Node',
    causes: [{ reason: 'FieldValueInvalid', message, field }],
  });

type Route = { method: string; template: string; pattern: RegExp; handle: (ctx: RequestCtx) => Promise<Reply> };
type RequestCtx = { params: string[]; query: URLSearchParams; body: Buffer; contentType: string; key: string };
type Reply = { code: number; body: unknown };

/** `rv: -1` is the inconsistent token of an expired list: it goes on at the latest version. */
type ContinueToken = { after: string; rv: number; at: number };

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (isObject(value) && typeof value.after === 'string' && typeof value.rv === 'number' && typeof value.at === 'number') {
      return { after: value.after, rv: value.rv, at: value.at };
    }
  } catch {
    // fall through to the error below
  }
  throw new ApiError(400, 'BadRequest', 'continue key is not valid: illegal base64 data or incorrect format');
}

/**
 * The answer to a continue token that outlived compaction, as the API server words it
 * (k8s.io/apiserver storage/etcd3 `handleCompactedErrorForPaging`, apimachinery
 * `NewResourceExpired`): 410, reason `Expired`, and a new continue token in the Status's list
 * metadata that resumes where the list stopped, at the latest version (inconsistent).
 */
const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue ' +
  'parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided ' +
  'token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was ' +
  'returned and now may show up in the list.';

/** Default continue-token life: the kube-apiserver's `--etcd-compaction-interval` default, 5m. */
export const DEFAULT_CONTINUE_TTL_MS = 5 * 60_000;

/** mulberry32: a small seeded generator, so a `denyDeletes` share refuses the same deletes every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A validating admission webhook's refusal as the API server answers it
 * (k8s.io/apiserver admission/plugin/webhook/errors `ToStatusErr`): code 403 unless the webhook set
 * one, reason Forbidden, message `<resource> "<name>" is forbidden: admission webhook "<webhook>"
 * denied the request: <message>`, details {group, kind: the resource, name}.
 */
function webhookDenied(name: string, webhook: string, status: { code?: number; reason?: string; message?: string }): ApiError {
  const code = status.code !== undefined && status.code !== 0 ? status.code : 403;
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const why = status.message ? `${deniedBy}: ${status.message}` : status.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  const prefix = code === 500 ? 'Internal error occurred' : `nodes "${name}" is forbidden`;
  const reason = status.reason ?? (code === 500 ? 'InternalError' : 'Forbidden');
  return new ApiError(code, reason, `${prefix}: ${why}`, { group: '', kind: 'nodes', name });
}

/** `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, comma-separated (AND). */
function labelMatcher(selector: string | null): (labels: Record<string, string>) => boolean {
  if (!selector || selector.trim() === '') return () => true;
  const requirements: ((labels: Record<string, string>) => boolean)[] = [];
  const parts = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  for (const rawPart of parts) {
    const part = rawPart.trim();
    if (part === '') continue;
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const [, key = '', op, list = ''] = m;
      const values = new Set(list.split(',').map((v) => v.trim()));
      requirements.push(op === 'in' ? (l) => values.has(l[key] ?? '\u0000') : (l) => !values.has(l[key] ?? '\u0000'));
    } else if ((m = part.match(/^([\w./-]+)\s*(!=|==|=)\s*([\w./-]*)$/))) {
      const [, key = '', op, value = ''] = m;
      requirements.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((m = part.match(/^!\s*([\w./-]+)$/))) {
      const key = m[1] ?? '';
      requirements.push((l) => !Object.hasOwn(l, key));
    } else if ((m = part.match(/^([\w./-]+)$/))) {
      const key = m[1] ?? '';
      requirements.push((l) => Object.hasOwn(l, key));
    } else {
      throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${JSON.stringify(part)}`);
    }
  }
  return (labels) => requirements.every((r) => r(labels));
}

function labelsOf(node: JsonObject): Record<string, string> {
  const labels = isObject(node.metadata) ? node.metadata.labels : undefined;
  const out: Record<string, string> = {};
  if (isObject(labels)) for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

function metadataOf(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

function nameOf(obj: JsonObject): string | undefined {
  const meta = obj.metadata;
  return isObject(meta) && typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
}

function specField(node: JsonObject, field: string): Json | undefined {
  return isObject(node.spec) ? node.spec[field] : undefined;
}

/** JSON.parse yields JSON values by definition; `Json` is exactly that type, so no schema is needed. */
function parseJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/** Plain JSON of any value (Dates become RFC 3339 strings), as it would travel over the wire. */
function toJson(value: unknown): Json {
  return parseJson(JSON.stringify(value));
}

function parseJsonBody(body: Buffer): Json {
  try {
    return parseJson(body.toString('utf8'));
  } catch (cause) {
    throw new ApiError(400, 'BadRequest', `error decoding request body: ${(cause as Error).message}`);
  }
}

function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < 5; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)] ?? 'x';
  return out;
}


export async function startKubeEmulator(options: KubeEmulatorOptions = {}): Promise<KubeEmulator> {
  const caPem = readFileSync(new URL('ca.crt', TLS_DIR), 'utf8');
  const certPem = readFileSync(new URL('server.crt', TLS_DIR), 'utf8');
  const keyPem = readFileSync(new URL('server.key', TLS_DIR), 'utf8');
  const token = options.token ?? `emulator-${randomUUID()}`;

  const nodes = new Map<string, JsonObject>();
  const events: JsonObject[] = [];
  const webhookCalls: WebhookCall[] = [];
  const counts = new Map<string, number>();
  let rv = 1;
  let failure: (Failure & { remaining: number }) | null = null;
  const now = options.now ?? Date.now;
  const continueTtlMs = options.continueTtlMs ?? DEFAULT_CONTINUE_TTL_MS;
  const denyShare = options.denyDeletes ?? 0;
  if (!(denyShare >= 0 && denyShare <= 1)) throw new Error(`denyDeletes must be a share from 0 to 1, not ${String(options.denyDeletes)}`);
  const denyDraw = seededRandom(options.seed ?? 1);
  const refused: string[] = [];

  const nextRv = () => String(++rv);
  const copy = <T extends Json>(value: T): T => structuredClone(value);

  /** Node validation on create and update: the subset of upstream ValidateNode that matters here. */
  function validate(node: JsonObject, old: JsonObject | undefined): void {
    const name = nameOf(node) ?? '';
    if (node.kind !== undefined && node.kind !== 'Node') throw invalid(name, 'kind', `must be "Node", not ${JSON.stringify(node.kind)}`);
    if (name === '') throw invalid(name, 'metadata.name', 'Required value: name or generateName is required');
    const podCidr = specField(node, 'podCIDR');
    const podCidrs = specField(node, 'podCIDRs');
    if (podCidr !== undefined && podCidr !== null && (typeof podCidr !== 'string' || !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(podCidr))) {
      throw invalid(name, 'spec.podCIDR', `Invalid value: ${JSON.stringify(podCidr)}: must be a valid CIDR`);
    }
    if (podCidrs !== undefined && podCidrs !== null) {
      if (!Array.isArray(podCidrs) || podCidrs.some((c) => typeof c !== 'string' || !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c))) {
        throw invalid(name, 'spec.podCIDRs', 'Invalid value: must be a list of valid CIDRs');
      }
      if (podCidrs.length > 2) throw invalid(name, 'spec.podCIDRs', 'Too many: may contain at most 2 CIDRs (one per IP family)');
      if (podCidrs.length > 0 && typeof podCidr === 'string' && podCidr !== '' && podCidrs[0] !== podCidr) {
        throw invalid(name, 'spec.podCIDRs', 'Invalid value: the first entry must match spec.podCIDR');
      }
    }
    if (!old) return;
    const oldPodCidr = specField(old, 'podCIDR');
    if (typeof oldPodCidr === 'string' && oldPodCidr !== '' && podCidr !== oldPodCidr) {
      throw invalid(name, 'spec.podCIDR', 'Forbidden: node updates may not change podCIDR except from "" to valid');
    }
    const oldPodCidrs = specField(old, 'podCIDRs');
    if (Array.isArray(oldPodCidrs) && oldPodCidrs.length > 0 && JSON.stringify(podCidrs ?? []) !== JSON.stringify(oldPodCidrs)) {
      throw invalid(name, 'spec.podCIDRs', 'Forbidden: node updates may not change podCIDR except from "" to valid');
    }
    const oldMeta = metadataOf(old);
    const newMeta = metadataOf(node);
    if (newMeta.uid !== undefined && newMeta.uid !== oldMeta.uid) throw invalid(name, 'metadata.uid', 'Invalid value: field is immutable');
  }

  // --- admission ------------------------------------------------------------------------------

  function postJson(target: WebhookTarget, payload: unknown): Promise<{ status: number; body: string }> {
    const url = new URL(target.url);
    const data = Buffer.from(JSON.stringify(payload));
    const requestOptions: https.RequestOptions = {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': data.length },
      timeout: target.timeoutMs ?? 10_000,
    };
    if (target.caPem) requestOptions.ca = target.caPem;
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, requestOptions, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('webhook timed out')));
      req.on('error', reject);
      req.end(data);
    });
  }

  /**
   * Calls the webhook; returns the patched object (CREATE) or the original, or throws the
   * webhook's rejection. Any failure of the call itself is ignored (failurePolicy: Ignore).
   */
  async function admit(operation: 'CREATE' | 'DELETE', name: string, object: JsonObject | null, oldObject: JsonObject | null): Promise<JsonObject | null> {
    const target = operation === 'CREATE' ? options.onNodeCreate : options.onNodeDelete;
    if (!target) return object;
    const uid = randomUUID();
    const gvk = { group: '', version: 'v1', kind: 'Node' };
    const gvr = { group: '', version: 'v1', resource: 'nodes' };
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: gvk,
        resource: gvr,
        requestKind: gvk,
        requestResource: gvr,
        name,
        operation,
        userInfo: { username: 'system:node:' + name, groups: ['system:nodes', 'system:authenticated'] },
        object,
        oldObject,
        dryRun: false,
        options:
          operation === 'CREATE'
            ? { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' }
            : { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions' },
      },
    };
    inc(`WEBHOOK ${operation}`);
    let response: JsonObject;
    try {
      const { status, body } = await postJson(target, review);
      if (status !== 200) throw new Error(`webhook answered HTTP ${status}`);
      const parsed = parseJson(body);
      if (!isObject(parsed) || !isObject(parsed.response)) throw new Error('webhook answer has no "response"');
      if (parsed.response.uid !== uid) throw new Error('webhook answer has the wrong uid');
      response = parsed.response;
    } catch (error) {
      webhookCalls.push({ operation, name, ok: false, error: (error as Error).message });
      return object;
    }
    if (response.allowed !== true) {
      webhookCalls.push({ operation, name, ok: true, allowed: false });
      const status = isObject(response.status) ? response.status : {};
      throw webhookDenied(name, 'podroute', {
        ...(typeof status.code === 'number' ? { code: status.code } : {}),
        ...(typeof status.reason === 'string' && status.reason !== '' ? { reason: status.reason } : {}),
        ...(typeof status.message === 'string' && status.message !== '' ? { message: status.message } : {}),
      });
    }
    webhookCalls.push({ operation, name, ok: true, allowed: true });
    if (operation !== 'CREATE' || object === null || response.patch === undefined) return object;
    if (response.patchType !== 'JSONPatch' || typeof response.patch !== 'string') return object;
    try {
      const patched = applyJsonPatch(object, parseJson(Buffer.from(response.patch, 'base64').toString('utf8')));
      if (!isObject(patched)) throw new Error('the patch did not leave an object');
      return patched;
    } catch (cause) {
      throw new ApiError(500, 'InternalError', `Internal error occurred: admission webhook "podroute" returned an invalid patch: ${(cause as Error).message}`);
    }
  }

  // --- operations shared by HTTP and the control API ------------------------------------------

  async function createNode(input: Json, runAdmission: boolean): Promise<JsonObject> {
    if (!isObject(input)) throw new ApiError(400, 'BadRequest', 'the body of the request was in an unknown format');
    let node = copy(input);
    node.apiVersion = 'v1';
    node.kind = 'Node';
    const meta = metadataOf(node);
    if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string') meta.name = meta.generateName + randomSuffix();
    delete meta.uid;
    delete meta.resourceVersion;
    delete meta.creationTimestamp;
    validate(node, undefined);
    const name = nameOf(node) ?? '';
    if (nodes.has(name)) throw new ApiError(409, 'AlreadyExists', `nodes "${name}" already exists`, { name, kind: 'nodes' });
    if (runAdmission) {
      const admitted = await admit('CREATE', name, node, null);
      if (admitted) node = admitted;
      validate(node, undefined);
      if (nameOf(node) !== name) throw invalid(name, 'metadata.name', 'Forbidden: admission may not change the name');
      if (nodes.has(name)) throw new ApiError(409, 'AlreadyExists', `nodes "${name}" already exists`, { name, kind: 'nodes' });
    }
    const stored = metadataOf(node);
    stored.uid = randomUUID();
    stored.creationTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    stored.resourceVersion = nextRv();
    nodes.set(name, node);
    return copy(node);
  }

  async function removeNode(name: string, runAdmission: boolean): Promise<JsonObject> {
    const old = nodes.get(name);
    if (!old) throw notFound(name);
    if (runAdmission) {
      await admit('DELETE', name, null, copy(old));
      // A validating webhook runs after the mutating ones ("Dynamic Admission Control": validating
      // webhooks are invoked after all object modifications) and may still refuse what podroute
      // admitted; the node then stays, as it is.
      if (denyShare > 0 && denyDraw() < denyShare) {
        refused.push(name);
        inc('REFUSED DELETE');
        throw webhookDenied(name, 'deny-deletes.podroute.test', { message: 'node deletion refused by policy (emulator denyDeletes)' });
      }
    }
    // The API server deletes the latest version: a write during admission does not save the node.
    const latest = nodes.get(name);
    if (!latest) throw notFound(name);
    nodes.delete(name);
    return latest;
  }

  function existing(name: string): JsonObject {
    const node = nodes.get(name);
    if (!node) throw notFound(name);
    return node;
  }

  /**
   * Stores `candidate` as the new version of `name`. The status subresource only takes status from
   * it; the main resource keeps the old status (upstream node strategies). A resourceVersion in the
   * candidate is a precondition.
   */
  function update(name: string, candidate: Json, subresource: 'status' | null): JsonObject {
    const old = existing(name);
    if (!isObject(candidate)) throw new ApiError(400, 'BadRequest', 'the body of the request was in an unknown format');
    const wanted = metadataOf(copy(candidate)).resourceVersion;
    const currentRv = metadataOf(old).resourceVersion;
    if (wanted !== undefined && wanted !== null && wanted !== '' && wanted !== currentRv) throw conflict(name);
    const candidateName = nameOf(candidate);
    if (candidateName !== undefined && candidateName !== name) {
      throw new ApiError(400, 'BadRequest', `the name of the object (${candidateName}) does not match the name on the URL (${name})`);
    }
    let next: JsonObject;
    if (subresource === 'status') {
      next = copy(old);
      if (candidate.status === undefined) delete next.status;
      else next.status = copy(candidate.status);
    } else {
      next = copy(candidate);
      if (old.status === undefined) delete next.status;
      else next.status = copy(old.status);
    }
    next.apiVersion = 'v1';
    next.kind = 'Node';
    const meta = metadataOf(next);
    const oldMeta = metadataOf(old);
    meta.name = name;
    if (meta.uid === undefined) meta.uid = oldMeta.uid ?? null;
    validate(next, old);
    meta.creationTimestamp = oldMeta.creationTimestamp ?? null;
    meta.resourceVersion = nextRv();
    nodes.set(name, next);
    return copy(next);
  }

  function patch(name: string, ctx: RequestCtx, subresource: 'status' | null): JsonObject {
    const old = existing(name);
    const type = ctx.contentType;
    const body = parseJsonBody(ctx.body);
    let patched: Json;
    try {
      if (type === 'application/strategic-merge-patch+json') patched = applyStrategicMergePatch(old, body);
      else if (type === 'application/merge-patch+json') {
        if (!isObject(body)) throw new PatchFormatError('a merge patch must be a JSON object');
        patched = applyMergePatch(old, body);
      } else if (type === 'application/json-patch+json') patched = applyJsonPatch(old, body);
      else throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
    } catch (error) {
      if (error instanceof PatchFormatError) throw new ApiError(400, 'BadRequest', error.message);
      if (error instanceof PatchApplyError) throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${error.message}`);
      throw error;
    }
    if (!isObject(patched)) throw new ApiError(400, 'BadRequest', 'the patch did not leave an object');
    return update(name, patched, subresource);
  }

  function listNodes(ctx: RequestCtx): JsonObject {
    if (ctx.query.get('watch') === 'true' || ctx.query.get('watch') === '1') {
      throw new ApiError(400, 'BadRequest', 'watch is not supported by the podroute emulator');
    }
    const limitRaw = ctx.query.get('limit');
    const limit = limitRaw === null || limitRaw === '' ? 0 : Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 0) throw new ApiError(400, 'BadRequest', `invalid limit ${JSON.stringify(limitRaw)}`);
    const matches = labelMatcher(ctx.query.get('labelSelector'));
    const continueRaw = ctx.query.get('continue');
    const from = continueRaw ? decodeContinue(continueRaw) : null;
    if (from && from.rv !== -1) {
      const injected = failure?.kind === 'expireContinue';
      if (injected) consumeFailure();
      if (injected || now() - from.at > continueTtlMs) {
        // The version the token pinned is compacted away: 410 with a token that goes on at the latest.
        const resume = encodeContinue({ after: from.after, rv: -1, at: now() });
        throw new ApiError(410, 'Expired', CONTINUE_EXPIRED_MESSAGE, undefined, { continue: resume });
      }
    }
    let items = [...nodes.values()]
      .filter((n) => matches(labelsOf(n)))
      .sort((a, b) => ((nameOf(a) ?? '') < (nameOf(b) ?? '') ? -1 : 1));
    if (from) items = items.filter((n) => (nameOf(n) ?? '') > from.after);
    const listRv = from && from.rv !== -1 ? from.rv : rv;
    const metadata: JsonObject = { resourceVersion: String(listRv) };
    if (limit > 0 && items.length > limit) {
      const page = items.slice(0, limit);
      metadata.continue = encodeContinue({ after: nameOf(page[page.length - 1] ?? {}) ?? '', rv: listRv, at: from && from.rv !== -1 ? from.at : now() });
      metadata.remainingItemCount = items.length - limit;
      items = page;
    }
    if (failure?.kind === 'emptyList') {
      items = [];
      delete metadata.continue;
      delete metadata.remainingItemCount;
      consumeFailure();
    }
    return { kind: 'NodeList', apiVersion: 'v1', metadata, items: items.map((n) => copy(n)) };
  }

  function createEvent(ctx: RequestCtx, group: 'core' | 'events.k8s.io'): JsonObject {
    const namespace = ctx.params[0] ?? '';
    const body = parseJsonBody(ctx.body);
    if (!isObject(body)) throw new ApiError(400, 'BadRequest', 'the body of the request was in an unknown format');
    const event = copy(body);
    const meta = metadataOf(event);
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      throw new ApiError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
    if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string') meta.name = meta.generateName + randomSuffix();
    if (typeof meta.name !== 'string' || meta.name === '') {
      throw new ApiError(422, 'Invalid', 'Event is invalid: metadata.name: Required value: name or generateName is required');
    }
    const name = meta.name;
    event.apiVersion = group === 'core' ? 'v1' : 'events.k8s.io/v1';
    event.kind = 'Event';
    if (events.some((e) => e.apiVersion === event.apiVersion && isObject(e.metadata) && e.metadata.namespace === namespace && e.metadata.name === name)) {
      throw new ApiError(409, 'AlreadyExists', `events "${name}" already exists`, { name, kind: 'events' });
    }
    if (group === 'core' && !isObject(event.involvedObject)) {
      throw new ApiError(422, 'Invalid', `Event "${name}" is invalid: involvedObject: Required value`);
    }
    meta.uid = randomUUID();
    meta.resourceVersion = nextRv();
    meta.creationTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    events.push(event);
    return copy(event);
  }

  function listEvents(ctx: RequestCtx, group: 'core' | 'events.k8s.io'): JsonObject {
    const namespace = ctx.params[0] ?? '';
    const apiVersion = group === 'core' ? 'v1' : 'events.k8s.io/v1';
    const items = events.filter((e) => e.apiVersion === apiVersion && isObject(e.metadata) && e.metadata.namespace === namespace);
    return { kind: 'EventList', apiVersion, metadata: { resourceVersion: String(rv) }, items: items.map((e) => copy(e)) };
  }

  // --- routing ---------------------------------------------------------------------------------

  const NAME = '([^/]+)';
  const route = (method: string, template: string, handle: Route['handle']): Route => ({
    method,
    template,
    pattern: new RegExp('^' + template.replace(/\{[a-z]+\}/g, NAME) + '$'),
    handle,
  });
  const param = (ctx: RequestCtx, i = 0) => ctx.params[i] ?? '';
  const authz = createAuthzRoutes(nextRv);
  const routes: Route[] = [
    ...authz.routes.map((r) => route(r.method, r.template, (ctx) => r.handle(ctx.body))),
    route('GET', '/api/v1/nodes', async (ctx) => ({ code: 200, body: listNodes(ctx) })),
    route('POST', '/api/v1/nodes', async (ctx) => ({ code: 201, body: await createNode(parseJsonBody(ctx.body), true) })),
    route('GET', '/api/v1/nodes/{name}', async (ctx) => ({ code: 200, body: copy(existing(param(ctx))) })),
    route('GET', '/api/v1/nodes/{name}/status', async (ctx) => ({ code: 200, body: copy(existing(param(ctx))) })),
    route('DELETE', '/api/v1/nodes/{name}', async (ctx) => {
      const gone = await removeNode(param(ctx), true);
      const details: JsonObject = { name: param(ctx), kind: 'nodes', uid: metadataOf(gone).uid ?? null };
      return { code: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } };
    }),
    route('PATCH', '/api/v1/nodes/{name}', async (ctx) => ({ code: 200, body: patch(param(ctx), ctx, null) })),
    route('PATCH', '/api/v1/nodes/{name}/status', async (ctx) => ({ code: 200, body: patch(param(ctx), ctx, 'status') })),
    route('PUT', '/api/v1/nodes/{name}', async (ctx) => ({ code: 200, body: update(param(ctx), parseJsonBody(ctx.body), null) })),
    route('PUT', '/api/v1/nodes/{name}/status', async (ctx) => ({ code: 200, body: update(param(ctx), parseJsonBody(ctx.body), 'status') })),
    route('POST', '/api/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 201, body: createEvent(ctx, 'core') })),
    route('GET', '/api/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 200, body: listEvents(ctx, 'core') })),
    route('POST', '/apis/events.k8s.io/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 201, body: createEvent(ctx, 'events.k8s.io') })),
    route('GET', '/apis/events.k8s.io/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 200, body: listEvents(ctx, 'events.k8s.io') })),
  ];

  function inc(key: string): void {
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }

  function consumeFailure(): void {
    if (!failure) return;
    failure.remaining -= 1;
    if (failure.remaining <= 0) failure = null;
  }

  function readBody(req: http.IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          reject(new ApiError(413, 'RequestEntityTooLarge', 'the request body is too large'));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });
  }

  async function handle(req: http.IncomingMessage): Promise<Reply> {
    const url = new URL(req.url ?? '/', 'https://emulator.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'GET' && (url.pathname === '/readyz' || url.pathname === '/livez' || url.pathname === '/healthz')) {
      return { code: 200, body: 'ok' };
    }
    const body = await readBody(req);
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${token}`) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    const decodedPath = url.pathname;
    const sameTemplate = routes.filter((r) => r.pattern.test(decodedPath));
    const matched = sameTemplate.find((r) => r.method === method);
    if (!matched) {
      if (sameTemplate.length > 0) throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    const key = `${method} ${matched.template}`;
    inc(key);
    if (failure?.kind === 'error' && (failure.match === undefined || failure.match === key)) {
      const code = failure.code ?? 500;
      consumeFailure();
      throw new ApiError(code, REASONS[code] ?? 'InternalError', `injected failure (${code}) for ${key}`);
    }
    const params = (decodedPath.match(matched.pattern) ?? []).slice(1).map((p) => decodeURIComponent(p));
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if ((method === 'POST' || method === 'PUT') && contentType !== '' && contentType !== 'application/json') {
      throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json`);
    }
    return matched.handle({ params, query: url.searchParams, body, contentType, key });
  }

  const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const respond = (reply: Reply) => {
      const send = () => {
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.code, {
          'content-type': typeof reply.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      };
      if (options.latencyMs) setTimeout(send, options.latencyMs);
      else send();
    };
    handle(req).then(respond, (error: unknown) => {
      const apiError = error instanceof ApiError ? error : new ApiError(500, 'InternalError', `Internal error occurred: ${String(error)}`);
      respond({ code: apiError.code, body: statusOf(apiError) });
    });
  });

  for (const node of options.nodes ?? []) await createNode(toJson(node), false);

  const listening = await listenLocal(server, options.port ?? 0);
  const port = listening.port;
  const url = `https://127.0.0.1:${port}`;

  const kubeConfig = (): KubeConfigOptions => ({
    clusters: [{ name: 'podroute-local', server: url, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'podroute', token }],
    contexts: [{ name: 'podroute-local', cluster: 'podroute-local', user: 'podroute' }],
    currentContext: 'podroute-local',
  });

  const toControlError = (error: unknown): never => {
    if (error instanceof ApiError) throw new Error(`${error.code} ${error.reason}: ${error.message}`, { cause: error });
    throw error;
  };

  const state: KubeEmulatorState = {
    addNode: (node, opts = {}) => createNode(toJson(node), opts.admit ?? true).catch(toControlError),
    async deleteNode(name, opts = {}) {
      if (!nodes.has(name)) return false;
      await removeNode(name, opts.admit ?? true).catch(toControlError);
      return true;
    },
    getNode: (name) => {
      const node = nodes.get(name);
      return node ? copy(node) : undefined;
    },
    putRawNode(input) {
      const node = toJson(input);
      if (!isObject(node)) throw new Error('putRawNode needs an object');
      const name = nameOf(node);
      if (name === undefined) throw new Error('putRawNode needs metadata.name (use a name and break another field)');
      nodes.set(name, copy(node));
      rv += 1;
    },
    nodes: () => [...nodes.values()].map((n) => copy(n)),
    events: () => events.map((e) => copy(e)),
    webhookCalls: () => webhookCalls.map((c) => ({ ...c })),
    refusedDeletes: () => [...refused],
    setFailure(next) {
      failure = next === null ? null : { ...next, remaining: next.times ?? Number.POSITIVE_INFINITY };
    },
    resourceVersion: () => rv,
    access: authz.access,
    webhookConfigurations: authz.webhookConfigurations,
  };

  const stats: KubeEmulatorStats = {
    get: (key) => counts.get(key) ?? 0,
    all: () => Object.fromEntries([...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
    reset: () => counts.clear(),
  };

  return {
    url,
    port,
    caPem,
    token,
    kubeConfig,
    kubeConfigYaml: () => {
      const c = kubeConfig();
      return [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: ${c.currentContext}`,
        '  cluster:',
        `    server: ${url}`,
        `    certificate-authority-data: ${c.clusters[0]?.caData ?? ''}`,
        'users:',
        '- name: podroute',
        '  user:',
        `    token: ${token}`,
        'contexts:',
        `- name: ${c.currentContext}`,
        '  context:',
        `    cluster: ${c.currentContext}`,
        '    user: podroute',
        `current-context: ${c.currentContext}`,
        '',
      ].join('\n');
    },
    state,
    stats,
    close: listening.close,
  };
}
