/**
 * Events of core/v1 and events.k8s.io/v1, per namespace: create, get, patch and list.
 *
 * - The namespace must exist (404 `namespaces "<ns>" not found`: the NamespaceLifecycle admission
 *   plugin); the emulator has default, kube-system, kube-public, kube-node-lease and any named in
 *   the options.
 * - core/v1 validation (k8s pkg/apis/core/validation/events.go `legacyValidateEvent`): without
 *   `eventTime`, `involvedObject.namespace` must equal the Event's namespace, where an empty one
 *   (a cluster-scoped object such as a Node) only matches `default`; with `eventTime`, an empty one
 *   matches default and kube-system, and `reportingInstance` and `action` are required. An Event
 *   without `involvedObject` is valid (stored with `{}`).
 * - Stored as the server serializes it: metav1.Time fields in whole seconds, a missing `eventTime`
 *   (metav1.MicroTime) as null; managedFields of the writer.
 * - A name taken in the namespace answers 409 AlreadyExists.
 */
import { randomUUID } from 'node:crypto';
import { alreadyExists, ApiError } from './api-error.ts';
import { invalidValue, required, throwIfInvalid, type FieldError } from './field-errors.ts';
import type { RequestCtx } from './http.ts';
import { recordWrite } from './managed-fields.ts';
import { copy, metadataOf, parseJsonBody, randomSuffix, stripTypeMeta, timestampNow } from './objects.ts';
import { applyMergePatch, applyStrategicMergePatch, isObject, type Json, type JsonObject } from './patch.ts';
import type { ServerState } from './state.ts';

type Group = 'core' | 'events.k8s.io';

const apiVersionOf = (group: Group) => (group === 'core' ? 'v1' : 'events.k8s.io/v1');

/** Built-in namespaces of every cluster (Kubernetes docs, "Namespaces: Initial namespaces"). */
export const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function requireNamespace(state: ServerState, namespace: string): void {
  if (!state.namespaces.has(namespace)) throw new ApiError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
}

const text = (value: Json | undefined): string => (typeof value === 'string' ? value : '');

function coreEventErrors(event: JsonObject, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const involved = isObject(event.involvedObject) ? event.involvedObject : {};
  const involvedNamespace = text(involved.namespace);
  const mismatch = invalidValue('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  const eventTime = event.eventTime;
  if (eventTime === undefined || eventTime === null || eventTime === '') {
    if (involvedNamespace === '' ? namespace !== 'default' : namespace !== involvedNamespace) errors.push(mismatch);
  } else {
    if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') errors.push(mismatch);
    if (text(event.reportingComponent) === '') errors.push(required('reportingComponent'));
    if (text(event.reportingInstance) === '') errors.push(required('reportingInstance'));
    if (text(event.action) === '') errors.push(required('action'));
  }
  return errors;
}

/** metav1.Time in whole seconds (RFC 3339), as the server serializes it; other values as they are. */
function seconds(value: Json | undefined): Json | undefined {
  if (typeof value !== 'string') return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function asStored(event: JsonObject, group: Group): JsonObject {
  const out = { ...event };
  if (group === 'core') {
    if (!isObject(out.involvedObject)) out.involvedObject = {};
    for (const field of ['firstTimestamp', 'lastTimestamp'] as const) {
      const value = seconds(out[field]);
      if (value !== undefined) out[field] = value;
    }
    if (out.eventTime === undefined) out.eventTime = null;
  }
  return out;
}

const sameEvent = (e: JsonObject, apiVersion: string, namespace: string, name: string) =>
  e.apiVersion === apiVersion && isObject(e.metadata) && e.metadata.namespace === namespace && e.metadata.name === name;

export function createEvent(state: ServerState, ctx: RequestCtx, group: Group, manager: string): JsonObject {
  const namespace = ctx.params[0] ?? '';
  const body = parseJsonBody(ctx.body);
  if (!isObject(body)) throw new ApiError(400, 'BadRequest', 'the body of the request was in an unknown format');
  const event = copy(body);
  const meta = metadataOf(event);
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
    throw new ApiError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  }
  requireNamespace(state, namespace);
  meta.namespace = namespace;
  if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string') meta.name = meta.generateName + randomSuffix();
  if (typeof meta.name !== 'string' || meta.name === '') {
    throw new ApiError(422, 'Invalid', 'Event is invalid: metadata.name: Required value: name or generateName is required');
  }
  const name = meta.name;
  event.apiVersion = apiVersionOf(group);
  event.kind = 'Event';
  if (group === 'core') throwIfInvalid('Event', name, coreEventErrors(event, namespace));
  if (state.events.some((e) => sameEvent(e, event.apiVersion as string, namespace, name))) throw alreadyExists('events', name);
  delete meta.uid;
  meta.uid = randomUUID();
  meta.resourceVersion = state.nextRv();
  meta.creationTimestamp = timestampNow();
  const stored = asStored(recordWrite(event, null, { manager, time: timestampNow() }), group);
  state.events.push(stored);
  return copy(stored);
}

function eventAt(state: ServerState, ctx: RequestCtx, group: Group): number {
  const [namespace = '', name = ''] = ctx.params;
  requireNamespace(state, namespace);
  const index = state.events.findIndex((e) => sameEvent(e, apiVersionOf(group), namespace, name));
  if (index < 0) throw new ApiError(404, 'NotFound', `events "${name}" not found`, { name, kind: 'events' });
  return index;
}

export function getEvent(state: ServerState, ctx: RequestCtx, group: Group): JsonObject {
  return copy(state.events[eventAt(state, ctx, group)] ?? {});
}

/** A strategic merge or merge patch of one Event; a resourceVersion in it is a precondition. */
export function patchEvent(state: ServerState, ctx: RequestCtx, group: Group, manager: string): JsonObject {
  const index = eventAt(state, ctx, group);
  const old = state.events[index] ?? {};
  const body = parseJsonBody(ctx.body);
  if (!isObject(body)) throw new ApiError(400, 'BadRequest', 'a patch of an Event must be a JSON object');
  let patched: Json;
  if (ctx.contentType === 'application/strategic-merge-patch+json') patched = applyStrategicMergePatch(old, body);
  else if (ctx.contentType === 'application/merge-patch+json') patched = applyMergePatch(old, body);
  else throw new ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/strategic-merge-patch+json');
  if (!isObject(patched)) throw new ApiError(400, 'BadRequest', 'the patch did not leave an object');
  const name = ctx.params[1] ?? '';
  const wanted = metadataOf(patched).resourceVersion;
  if (wanted !== metadataOf(old).resourceVersion) {
    throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on events "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'events' });
  }
  const meta = metadataOf(patched);
  const oldMeta = metadataOf(old);
  meta.name = oldMeta.name ?? name;
  meta.namespace = oldMeta.namespace ?? '';
  meta.uid = oldMeta.uid ?? null;
  meta.creationTimestamp = oldMeta.creationTimestamp ?? null;
  if (group === 'core') throwIfInvalid('Event', name, coreEventErrors(patched, text(meta.namespace)));
  meta.resourceVersion = state.nextRv();
  const stored = asStored(recordWrite(patched, old, { manager, time: timestampNow() }), group);
  state.events[index] = stored;
  return copy(stored);
}

export function listEvents(state: ServerState, ctx: RequestCtx, group: Group): JsonObject {
  const namespace = ctx.params[0] ?? '';
  requireNamespace(state, namespace);
  const apiVersion = apiVersionOf(group);
  const items = state.events.filter((e) => e.apiVersion === apiVersion && isObject(e.metadata) && e.metadata.namespace === namespace);
  return { kind: 'EventList', apiVersion, metadata: { resourceVersion: String(state.rv) }, items: items.map((e) => stripTypeMeta(copy(e))) };
}
