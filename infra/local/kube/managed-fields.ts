/**
 * managedFields as the API server records them for `Update` writes (Kubernetes docs, "Server-Side
 * Apply: Field management"; the FieldsV1 format of k8s.io/apimachinery meta/v1 `ManagedFieldsEntry`):
 * one entry per manager and subresource, naming the fields that writer set. The manager is the
 * request's `fieldManager`, else the part of its User-Agent before the first `/`
 * (apiserver endpoints/handlers `prefixFromUserAgent`), else `unknown`.
 *
 * FieldsV1 here: `f:<name>` per field with a value (null and "" are none); `.` marks a map-typed field or an associative-list item
 * that is itself owned; `k:{"type":"…"}` keys list items merged by key; `v:"…"` the items of a
 * set; atomic values (object references, atomic lists) are one leaf.
 */
import { isObject, type Json, type JsonObject } from './patch.ts';

/** Lists whose items are keyed, by path (the core/v1 Go types' `listMapKey`). */
const KEYED_LISTS: Record<string, string> = {
  'status.conditions': 'type',
  'status.addresses': 'type',
  'status.volumesAttached': 'name',
  'metadata.ownerReferences': 'uid',
};
/** Lists that are sets of strings. */
const SET_LISTS = new Set(['spec.podCIDRs', 'metadata.finalizers']);
/** Map-typed fields (their keys are data, not schema). */
const MAP_FIELDS = new Set(['metadata.labels', 'metadata.annotations', 'status.capacity', 'status.allocatable']);
/** Atomic structs: owned as a whole. */
const ATOMIC = new Set(['involvedObject', 'related', 'regarding']);
/** Set by the server, never a writer's. */
const SERVER_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds']);

function fieldsOfValue(value: Json, path: string): JsonObject {
  if (ATOMIC.has(path) || value === null) return {};
  if (Array.isArray(value)) {
    const key = KEYED_LISTS[path];
    if (key !== undefined) {
      const out: JsonObject = {};
      for (const item of value) {
        if (!isObject(item)) continue;
        out[`k:${JSON.stringify({ [key]: item[key] ?? null })}`] = { '.': {}, ...fieldsOfObject(item, `${path}[]`) };
      }
      return Object.keys(out).length > 0 ? { '.': {}, ...out } : {};
    }
    if (SET_LISTS.has(path)) return { '.': {}, ...Object.fromEntries(value.map((v) => [`v:${JSON.stringify(v)}`, {}])) };
    return {};
  }
  if (isObject(value)) {
    const inner = fieldsOfObject(value, path);
    return MAP_FIELDS.has(path) ? { '.': {}, ...inner } : inner;
  }
  return {};
}

function fieldsOfObject(object: JsonObject, path: string): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(object).sort()) {
    if (path === '' && (key === 'apiVersion' || key === 'kind')) continue;
    if (path === 'metadata' && SERVER_META.has(key)) continue;
    const value = object[key] ?? null;
    // Zero values (null, "") are not fields a writer set (the typed object omits them), except as map entries.
    if ((value === null || value === '') && !MAP_FIELDS.has(path)) continue;
    const child = fieldsOfValue(value, path === '' ? key : `${path}.${key}`);
    if (path === '' && isObject(object[key]) && Object.keys(child).length === 0 && !ATOMIC.has(key)) continue;
    out[`f:${key}`] = child;
  }
  return out;
}

/** What changed from `before` to `after`: the keys of `after` whose values differ, recursively. */
function changedPart(before: Json | undefined, after: JsonObject): JsonObject {
  const out: JsonObject = {};
  const old = isObject(before) ? before : {};
  for (const [key, value] of Object.entries(after)) {
    const was = old[key];
    if (JSON.stringify(was) === JSON.stringify(value)) continue;
    out[key] = isObject(value) && isObject(was) ? changedPart(was, value) : value;
  }
  return out;
}

function union(a: Json, b: Json): Json {
  if (!isObject(a) || !isObject(b)) return b;
  const out: JsonObject = { ...a };
  for (const [key, value] of Object.entries(b)) out[key] = key in out ? union(out[key] ?? {}, value) : value;
  return out;
}

export type Writer = { manager: string; subresource?: 'status'; time: string };

/** The manager of a request (see the file comment). */
export function managerOf(fieldManager: string | null, userAgent: string): string {
  if (fieldManager !== null && fieldManager !== '') return fieldManager;
  const prefix = userAgent.split('/')[0]?.trim() ?? '';
  return prefix !== '' ? prefix : 'unknown';
}

/** `next` with managedFields updated for this write from `before` (null at CREATE). */
export function recordWrite(next: JsonObject, before: JsonObject | null, writer: Writer): JsonObject {
  const meta = isObject(next.metadata) ? next.metadata : {};
  const previous = before && isObject(before.metadata) && Array.isArray(before.metadata.managedFields) ? before.metadata.managedFields : [];
  const { managedFields: _dropped, ...restMeta } = meta;
  const body: JsonObject = { ...next, metadata: restMeta };
  const oldBody: JsonObject | null = before ? { ...before, metadata: { ...(isObject(before.metadata) ? before.metadata : {}), managedFields: null } } : null;
  const changed = oldBody ? changedPart(oldBody, body) : body;
  const scoped = writer.subresource === 'status' ? { status: changed.status ?? {} } : { ...changed, status: undefined };
  const clean: JsonObject = Object.fromEntries(Object.entries(scoped).filter(([, v]) => v !== undefined)) as JsonObject;
  const fields = fieldsOfObject(clean, '');
  const entries = previous.filter(isObject).map((e) => ({ ...e }));
  const same = (e: JsonObject) => e.manager === writer.manager && e.operation === 'Update' && (e.subresource ?? undefined) === writer.subresource;
  const index = entries.findIndex(same);
  if (Object.keys(fields).length > 0) {
    const entry: JsonObject = {
      manager: writer.manager,
      operation: 'Update',
      apiVersion: typeof next.apiVersion === 'string' ? next.apiVersion : 'v1',
      time: writer.time,
      fieldsType: 'FieldsV1',
      fieldsV1: index >= 0 ? union(entries[index]?.fieldsV1 ?? {}, fields) : fields,
      ...(writer.subresource ? { subresource: writer.subresource } : {}),
    };
    if (index >= 0) entries[index] = entry;
    else entries.push(entry);
  }
  return { ...next, metadata: { ...meta, managedFields: entries } };
}
