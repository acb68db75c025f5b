/**
 * The three patch types the Kubernetes API accepts for a Node without server-side apply:
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch with the Node type's
 * patch metadata (list merge keys and strategies from the core/v1 Go types). Test infrastructure:
 * small, pure, no I/O. Every function returns a new value and never mutates its inputs.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A patch that cannot be applied to the document (the API server answers 422). */
export class PatchApplyError extends Error {
  override name = 'PatchApplyError';
}

/** A patch body of the wrong shape (the API server answers 400). */
export class PatchFormatError extends Error {
  override name = 'PatchFormatError';
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone<T extends Json>(value: T): T {
  return structuredClone(value);
}

// ---------------------------------------------------------------------------------------------
// RFC 7386 JSON merge patch
// ---------------------------------------------------------------------------------------------

export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key] ?? null, value);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// RFC 6902 JSON patch
// ---------------------------------------------------------------------------------------------

type Operation = { op: string; path: string; value?: Json; from?: string };

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchApplyError(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, forInsert: boolean): number {
  if (forInsert && token === '-') return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchApplyError(`invalid array index ${JSON.stringify(token)}`);
  const index = Number(token);
  if (index > length || (!forInsert && index === length)) throw new PatchApplyError(`array index ${index} out of range`);
  return index;
}

function getAt(doc: Json, tokens: string[]): Json {
  let current: Json = doc;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      const item: Json | undefined = current[arrayIndex(token, current.length, false)];
      if (item === undefined) throw new PatchApplyError(`path not found at ${JSON.stringify(token)}`);
      current = item;
    } else if (isObject(current) && Object.hasOwn(current, token)) {
      current = current[token] ?? null;
    } else {
      throw new PatchApplyError(`path not found at ${JSON.stringify(token)}`);
    }
  }
  return current;
}

/** Splits a pointer into its parent container (in `doc`, which is mutated) and the last token. */
function parentOf(doc: Json, tokens: string[]): { parent: Json; last: string } {
  const last = tokens[tokens.length - 1];
  if (last === undefined) throw new PatchApplyError('the root cannot be the target of this operation');
  return { parent: getAt(doc, tokens.slice(0, -1)), last };
}

function addAt(doc: Json, tokens: string[], value: Json): Json {
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
  else if (isObject(parent)) parent[last] = value;
  else throw new PatchApplyError('parent of the target is not a container');
  return doc;
}

function removeAt(doc: Json, tokens: string[]): Json {
  const { parent, last } = parentOf(doc, tokens);
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1);
  else if (isObject(parent) && Object.hasOwn(parent, last)) delete parent[last];
  else throw new PatchApplyError(`path not found at ${JSON.stringify(last)}`);
  return doc;
}

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i] ?? null));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k] ?? null, b[k] ?? null));
  }
  return false;
}

function parseOperations(patch: Json): Operation[] {
  if (!Array.isArray(patch)) throw new PatchFormatError('a JSON patch must be an array of operations');
  return patch.map((raw, i) => {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new PatchFormatError(`operation ${i} needs string "op" and "path"`);
    }
    const op: Operation = { op: raw.op, path: raw.path };
    if (Object.hasOwn(raw, 'value')) op.value = raw.value ?? null;
    if (typeof raw.from === 'string') op.from = raw.from;
    return op;
  });
}

export function applyJsonPatch(target: Json, patch: Json): Json {
  let doc = clone(target);
  for (const op of parseOperations(patch)) {
    const tokens = parsePointer(op.path);
    switch (op.op) {
      case 'add':
        if (op.value === undefined) throw new PatchFormatError('"add" needs a value');
        doc = addAt(doc, tokens, clone(op.value));
        break;
      case 'remove':
        doc = removeAt(doc, tokens);
        break;
      case 'replace':
        if (op.value === undefined) throw new PatchFormatError('"replace" needs a value');
        getAt(doc, tokens);
        doc = tokens.length === 0 ? clone(op.value) : addAt(removeAt(doc, tokens), tokens, clone(op.value));
        break;
      case 'test':
        if (op.value === undefined) throw new PatchFormatError('"test" needs a value');
        if (!deepEqual(getAt(doc, tokens), op.value)) throw new PatchApplyError(`test failed at ${op.path}`);
        break;
      case 'move':
      case 'copy': {
        if (op.from === undefined) throw new PatchFormatError(`"${op.op}" needs "from"`);
        const fromTokens = parsePointer(op.from);
        const value = clone(getAt(doc, fromTokens));
        if (op.op === 'move') doc = removeAt(doc, fromTokens);
        doc = addAt(doc, tokens, value);
        break;
      }
      default:
        throw new PatchFormatError(`unsupported JSON patch operation ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch, with the patch metadata of core/v1 Node
// ---------------------------------------------------------------------------------------------

/**
 * Lists of a Node that do not simply get replaced by a strategic merge patch: `mergeKey` lists merge
 * their items by that field (`patchMergeKey`), primitive lists marked `patchStrategy:"merge"` take
 * the union. Every other list is replaced whole, as with a merge patch.
 */
const NODE_LIST_STRATEGY: Record<string, { mergeKey?: string }> = {
  'metadata.finalizers': {},
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'spec.podCIDRs': {},
  'status.conditions': { mergeKey: 'type' },
  'status.addresses': { mergeKey: 'type' },
  'status.volumesAttached': { mergeKey: 'name' },
};

const DIRECTIVE = '$patch';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';
const RETAIN_KEYS = '$retainKeys';

/** Applies a strategic merge patch to a Node document. */
export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) throw new PatchFormatError('a strategic merge patch must be a JSON object');
  return mergeMap(isObject(target) ? target : {}, patch, '');
}

function mergeMap(target: JsonObject, patch: JsonObject, path: string): JsonObject {
  const directive = patch[DIRECTIVE];
  if (directive === 'replace') {
    const replaced: JsonObject = {};
    for (const [key, value] of Object.entries(patch)) if (key !== DIRECTIVE) replaced[key] = clone(value);
    return replaced;
  }
  if (directive === 'delete') return {};
  if (directive !== undefined) throw new PatchFormatError(`unknown patch directive ${JSON.stringify(directive)}`);

  const result: JsonObject = clone(target);
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    const keep = new Set(retain.filter((k): k is string => typeof k === 'string'));
    for (const key of Object.keys(result)) if (!keep.has(key) && !Object.hasOwn(patch, key)) delete result[key];
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) {
        result[field] = current.filter((item) => !value.some((gone) => deepEqual(item, gone)));
      }
      continue;
    }
    const childPath = path === '' ? key : `${path}.${key}`;
    if (value === null) {
      delete result[key];
    } else if (isObject(value)) {
      const current = result[key];
      result[key] = mergeMap(isObject(current) ? current : {}, value, childPath);
    } else if (Array.isArray(value)) {
      const current = result[key];
      const order = patch[`${SET_ELEMENT_ORDER}${key}`];
      result[key] = mergeList(Array.isArray(current) ? current : [], value, childPath, Array.isArray(order) ? order : undefined);
    } else {
      result[key] = value;
    }
  }
  return result;
}

/**
 * The order of a merged list (apimachinery strategicpatch `normalizeElementOrder` and
 * `mergeSortedSlice`): the patch's items in the patch's order (or its `$setElementOrder`), the
 * server-only items in the server's order, merged so that a server-only item goes first only when
 * both it and the next patch item are in the server's list and it came earlier there. So an item
 * new to the list comes before the server's remaining ones.
 */
function orderMerged(merged: Json[], patchOrder: Json[], serverOrder: Json[], keyOf: (item: Json) => Json): Json[] {
  const indexIn = (list: Json[], item: Json) => list.findIndex((x) => deepEqual(keyOf(x), keyOf(item)));
  const inPatch = merged.filter((item) => indexIn(patchOrder, item) >= 0);
  const serverOnly = merged.filter((item) => indexIn(patchOrder, item) < 0);
  inPatch.sort((a, b) => indexIn(patchOrder, a) - indexIn(patchOrder, b));
  serverOnly.sort((a, b) => indexIn(serverOrder, a) - indexIn(serverOrder, b));
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < inPatch.length) {
    const left = serverOnly[i];
    const right = inPatch[j];
    if (right === undefined) {
      if (left !== undefined) out.push(left);
      i += 1;
    } else if (left === undefined) {
      out.push(right);
      j += 1;
    } else {
      const li = indexIn(serverOrder, left);
      const ri = indexIn(serverOrder, right);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push(left);
        i += 1;
      } else {
        out.push(right);
        j += 1;
      }
    }
  }
  return out;
}

function mergeList(target: Json[], patch: Json[], path: string, setOrder: Json[] | undefined): Json[] {
  const strategy = NODE_LIST_STRATEGY[path];
  if (!strategy) return clone(patch);
  const { mergeKey } = strategy;
  if (mergeKey === undefined) {
    const result = clone(target);
    for (const item of patch) if (!result.some((have) => deepEqual(have, item))) result.push(clone(item));
    return orderMerged(result, setOrder ?? patch, target, (x) => x);
  }
  const result = clone(target);
  const kept: Json[] = [];
  for (const item of patch) {
    if (!isObject(item)) throw new PatchFormatError(`items of ${path} must be objects`);
    const key = item[mergeKey];
    if (key === undefined) throw new PatchFormatError(`an item of ${path} lacks its merge key "${mergeKey}"`);
    const index = result.findIndex((have) => isObject(have) && deepEqual(have[mergeKey] ?? null, key));
    if (item[DIRECTIVE] === 'delete') {
      if (index >= 0) result.splice(index, 1);
      continue;
    }
    kept.push(item);
    const existing = index >= 0 ? result[index] : undefined;
    if (existing !== undefined && isObject(existing)) result[index] = mergeMap(existing, item, path);
    else result.push(mergeMap({}, item, path));
  }
  const keyOf = (x: Json): Json => (isObject(x) ? (x[mergeKey] ?? null) : x);
  return orderMerged(result, setOrder ?? kept, target, keyOf);
}
