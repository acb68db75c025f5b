/**
 * The Node resource: create, delete, get, update and patch of the main resource and of its status
 * subresource, in the API server's order of steps: authorization, decoding with the v1 conversion,
 * managedFields, admission (NodeRestriction, TaintNodesByCondition, then the webhooks), system
 * fields, validation, and storage with its own refusals (a resourceVersion on create, AlreadyExists,
 * resourceVersion preconditions).
 */
import { randomUUID } from 'node:crypto';
import type { Admission } from './admission.ts';
import { alreadyExists, ApiError, conflict, notFound } from './api-error.ts';
import type { RequestCtx } from './http.ts';
import { authorizeNode, restrictNode, type UserInfo } from './identity.ts';
import { recordWrite } from './managed-fields.ts';
import { convertPodCidrs, validateNodeCreate, validateNodeUpdate } from './node-validation.ts';
import { copy, metadataOf, nameOf, parseJsonBody, randomSuffix, timestampNow } from './objects.ts';
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
import type { ServerState } from './state.ts';

/** What the node operations work on: the server's state and its admission chain. */
export type NodeServer = { state: ServerState; admission: Admission };

/** Who writes: the authenticated user and the managedFields manager of the request. */
export type Caller = { user: UserInfo; manager: string };

const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

/**
 * TaintNodesByCondition (k8s plugin/pkg/admission/nodetaint): a Node is created with the
 * `node.kubernetes.io/not-ready:NoSchedule` taint unless it already carries that taint.
 */
function taintNotReady(node: JsonObject): JsonObject {
  const spec = isObject(node.spec) ? node.spec : {};
  const taints = Array.isArray(spec.taints) ? spec.taints : [];
  if (taints.some((t) => isObject(t) && t.key === NOT_READY_TAINT.key && t.effect === NOT_READY_TAINT.effect)) return node;
  return { ...node, spec: { ...spec, taints: [...taints, { ...NOT_READY_TAINT }] } };
}

/** The body of a create, decoded: an object of kind Node, converted, name from generateName. */
function decodeNode(input: Json): JsonObject {
  if (!isObject(input)) throw new ApiError(400, 'BadRequest', 'the body of the request was in an unknown format');
  if (input.kind !== undefined && input.kind !== 'Node') throw new ApiError(400, 'BadRequest', `the kind of the object (${String(input.kind)}) is not Node`);
  const node = convertPodCidrs({ ...copy(input), apiVersion: 'v1', kind: 'Node' });
  const meta = metadataOf(node);
  if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string') meta.name = meta.generateName + randomSuffix();
  return node;
}

/**
 * POST /api/v1/nodes. The object admission sees has the not-ready taint and managedFields and no
 * creationTimestamp (null) or uid yet. A Node that exists is refused by storage, so only after
 * admission (409 AlreadyExists); so is a body carrying a resourceVersion (etcd3 store `Create`: 500
 * `resourceVersion should not be set on objects to be created`).
 */
export async function createNode(server: NodeServer, input: Json, caller: Caller, runAdmission: boolean): Promise<JsonObject> {
  const { state, admission } = server;
  authorizeNode(caller.user, 'create', '');
  let node = decodeNode(input);
  const name = nameOf(node) ?? '';
  const meta = metadataOf(node);
  const sentRv = meta.resourceVersion;
  delete meta.uid;
  meta.creationTimestamp = null;
  node = recordWrite(node, null, { manager: caller.manager, time: timestampNow() });
  restrictNode(caller.user, name, node, null);
  node = taintNotReady(node);
  if (runAdmission) {
    const admitted = await admission.admit('CREATE', name, node, null, caller.user);
    if (admitted) node = convertPodCidrs(admitted);
    if (nameOf(node) !== name) throw new ApiError(400, 'BadRequest', 'admission may not change the name of the object');
  }
  const stored = metadataOf(node);
  stored.uid = randomUUID();
  stored.creationTimestamp = timestampNow();
  validateNodeCreate(node);
  if (sentRv !== undefined && sentRv !== null && sentRv !== '') {
    throw new ApiError(500, '', 'resourceVersion should not be set on objects to be created');
  }
  if (state.nodes.has(name)) throw alreadyExists('nodes', name);
  stored.resourceVersion = state.nextRv();
  state.nodes.set(name, node);
  return copy(node);
}

export async function removeNode(server: NodeServer, name: string, caller: Caller, runAdmission: boolean): Promise<JsonObject> {
  const { state, admission } = server;
  authorizeNode(caller.user, 'delete', name);
  const old = state.nodes.get(name);
  if (!old) throw notFound(name);
  if (runAdmission) {
    await admission.admit('DELETE', name, null, copy(old), caller.user);
    admission.refuseDelete(name);
  }
  // The API server deletes the latest version: a write during admission does not save the node.
  const latest = state.nodes.get(name);
  if (!latest) throw notFound(name);
  state.nodes.delete(name);
  return latest;
}

export function existing(state: ServerState, name: string): JsonObject {
  const node = state.nodes.get(name);
  if (!node) throw notFound(name);
  return node;
}

/**
 * Stores `candidate` as the new version of `name`. The status subresource only takes status from
 * it; the main resource keeps the old status (upstream node strategies) and runs the UPDATE
 * webhook first: mutating admission sees the object as sent, before the strategy resets its status
 * (apiserver endpoints/handlers update.go: admission is one of the object's transformers, applied
 * before `BeforeUpdate`). A resourceVersion in the candidate is a precondition (409 Conflict when
 * stale).
 */
export async function update(server: NodeServer, name: string, input: Json, subresource: 'status' | null, caller: Caller): Promise<JsonObject> {
  const { state, admission } = server;
  const old = existing(state, name);
  let candidate = input;
  authorizeNode(caller.user, 'update', name);
  if (!isObject(candidate)) throw new ApiError(400, 'BadRequest', 'the body of the request was in an unknown format');
  const wanted = metadataOf(copy(candidate)).resourceVersion;
  const candidateName = nameOf(candidate);
  if (candidateName !== undefined && candidateName !== name) {
    throw new ApiError(400, 'BadRequest', `the name of the object (${candidateName}) does not match the name on the URL (${name})`);
  }
  if (subresource === null) {
    candidate = (await admission.admit('UPDATE', name, convertPodCidrs(copy(candidate)), copy(old), caller.user)) ?? candidate;
    if (nameOf(candidate) !== undefined && nameOf(candidate) !== name) throw new ApiError(400, 'BadRequest', 'admission may not change the name of the object');
  }
  // The precondition is checked against the latest version after admission (the registry store's
  // GuaranteedUpdate runs the object's transformers, then compares resource versions): a stale
  // update has been admitted, and still fails.
  const latest = existing(state, name);
  if (wanted !== undefined && wanted !== null && wanted !== '' && wanted !== metadataOf(latest).resourceVersion) throw conflict(name);
  let next: JsonObject;
  if (subresource === 'status') {
    next = copy(old);
    if (candidate.status === undefined) delete next.status;
    else next.status = copy(candidate.status);
  } else {
    next = convertPodCidrs(copy(candidate));
    if (old.status === undefined) delete next.status;
    else next.status = copy(old.status);
  }
  next.apiVersion = 'v1';
  next.kind = 'Node';
  const meta = metadataOf(next);
  const oldMeta = metadataOf(old);
  meta.name = name;
  if (meta.uid === undefined) meta.uid = oldMeta.uid ?? null;
  meta.managedFields = oldMeta.managedFields ?? [];
  restrictNode(caller.user, name, next, old);
  validateNodeUpdate(next, old);
  meta.creationTimestamp = oldMeta.creationTimestamp ?? null;
  meta.resourceVersion = state.nextRv();
  const recorded = recordWrite(next, old, { manager: caller.manager, time: timestampNow(), ...(subresource ? { subresource } : {}) });
  state.nodes.set(name, recorded);
  return copy(recorded);
}

/** A patch of the latest version; a resourceVersion it carries is a precondition (see `update`). */
export async function patch(server: NodeServer, name: string, ctx: RequestCtx, subresource: 'status' | null, caller: Caller): Promise<JsonObject> {
  const old = existing(server.state, name);
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
  return update(server, name, patched, subresource, caller);
}

/** Whether a patch body names a resourceVersion (a precondition the server keeps, never retries past). */
export function patchCarriesResourceVersion(body: Buffer): boolean {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (Array.isArray(parsed)) return parsed.some((op) => isObject(op) && typeof op.path === 'string' && op.path === '/metadata/resourceVersion');
    return isObject(parsed) && isObject(parsed.metadata) && typeof parsed.metadata.resourceVersion === 'string' && parsed.metadata.resourceVersion !== '';
  } catch {
    return false;
  }
}
