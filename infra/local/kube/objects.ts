/** Small helpers over API objects as plain JSON. */
import { ApiError } from './api-error.ts';
import { isObject, type Json, type JsonObject } from './patch.ts';

export const copy = <T extends Json>(value: T): T => structuredClone(value);

export function labelsOf(node: JsonObject): Record<string, string> {
  const labels = isObject(node.metadata) ? node.metadata.labels : undefined;
  const out: Record<string, string> = {};
  if (isObject(labels)) for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

export function metadataOf(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

export function nameOf(obj: JsonObject): string | undefined {
  const meta = obj.metadata;
  return isObject(meta) && typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
}

export function specField(node: JsonObject, field: string): Json | undefined {
  return isObject(node.spec) ? node.spec[field] : undefined;
}

/** JSON.parse yields JSON values by definition; `Json` is exactly that type, so no schema is needed. */
export function parseJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/** Plain JSON of any value (Dates become RFC 3339 strings), as it would travel over the wire. */
export function toJson(value: unknown): Json {
  return parseJson(JSON.stringify(value));
}

export function parseJsonBody(body: Buffer): Json {
  try {
    return parseJson(body.toString('utf8'));
  } catch (cause) {
    throw new ApiError(400, 'BadRequest', `error decoding request body: ${(cause as Error).message}`);
  }
}

export function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < 5; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)] ?? 'x';
  return out;
}

/** A creation timestamp as the API server writes it: RFC 3339, whole seconds. */
export const timestampNow = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An object without apiVersion and kind, as a list's items are served (the list says what they are). */
export function stripTypeMeta(object: JsonObject): JsonObject {
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return rest;
}
