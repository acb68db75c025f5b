/**
 * The Node resource: create (with admission), delete (admission first, then the latest version
 * goes), get, update and patch of the main resource and of its status subresource, with
 * resourceVersion preconditions and Node validation.
 */
import { randomUUID } from 'node:crypto';
import type { Admission } from './admission.ts';
import { ApiError, conflict, invalid, notFound } from './api-error.ts';
import type { RequestCtx } from './http.ts';
import { copy, metadataOf, nameOf, parseJsonBody, randomSuffix, specField, timestampNow } from './objects.ts';
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

export async function createNode(server: NodeServer, input: Json, runAdmission: boolean): Promise<JsonObject> {
  const { state, admission } = server;
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
  if (state.nodes.has(name)) throw new ApiError(409, 'AlreadyExists', `nodes "${name}" already exists`, { name, kind: 'nodes' });
  if (runAdmission) {
    const admitted = await admission.admit('CREATE', name, node, null);
    if (admitted) node = admitted;
    validate(node, undefined);
    if (nameOf(node) !== name) throw invalid(name, 'metadata.name', 'Forbidden: admission may not change the name');
    if (state.nodes.has(name)) throw new ApiError(409, 'AlreadyExists', `nodes "${name}" already exists`, { name, kind: 'nodes' });
  }
  const stored = metadataOf(node);
  stored.uid = randomUUID();
  stored.creationTimestamp = timestampNow();
  stored.resourceVersion = state.nextRv();
  state.nodes.set(name, node);
  return copy(node);
}

export async function removeNode(server: NodeServer, name: string, runAdmission: boolean): Promise<JsonObject> {
  const { state, admission } = server;
  const old = state.nodes.get(name);
  if (!old) throw notFound(name);
  if (runAdmission) {
    await admission.admit('DELETE', name, null, copy(old));
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
 * it; the main resource keeps the old status (upstream node strategies). A resourceVersion in the
 * candidate is a precondition.
 */
export function update(state: ServerState, name: string, candidate: Json, subresource: 'status' | null): JsonObject {
  const old = existing(state, name);
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
  meta.resourceVersion = state.nextRv();
  state.nodes.set(name, next);
  return copy(next);
}

export function patch(state: ServerState, name: string, ctx: RequestCtx, subresource: 'status' | null): JsonObject {
  const old = existing(state, name);
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
  return update(state, name, patched, subresource);
}
