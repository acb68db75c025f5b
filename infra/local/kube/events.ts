/** Events of core/v1 and events.k8s.io/v1, in one namespace each: create and list. */
import { randomUUID } from 'node:crypto';
import { ApiError } from './api-error.ts';
import type { RequestCtx } from './http.ts';
import { copy, metadataOf, parseJsonBody, randomSuffix, timestampNow } from './objects.ts';
import { isObject, type JsonObject } from './patch.ts';
import type { ServerState } from './state.ts';

export function createEvent(state: ServerState, ctx: RequestCtx, group: 'core' | 'events.k8s.io'): JsonObject {
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
  if (state.events.some((e) => e.apiVersion === event.apiVersion && isObject(e.metadata) && e.metadata.namespace === namespace && e.metadata.name === name)) {
    throw new ApiError(409, 'AlreadyExists', `events "${name}" already exists`, { name, kind: 'events' });
  }
  if (group === 'core' && !isObject(event.involvedObject)) {
    throw new ApiError(422, 'Invalid', `Event "${name}" is invalid: involvedObject: Required value`);
  }
  meta.uid = randomUUID();
  meta.resourceVersion = state.nextRv();
  meta.creationTimestamp = timestampNow();
  state.events.push(event);
  return copy(event);
}

export function listEvents(state: ServerState, ctx: RequestCtx, group: 'core' | 'events.k8s.io'): JsonObject {
  const namespace = ctx.params[0] ?? '';
  const apiVersion = group === 'core' ? 'v1' : 'events.k8s.io/v1';
  const items = state.events.filter((e) => e.apiVersion === apiVersion && isObject(e.metadata) && e.metadata.namespace === namespace);
  return { kind: 'EventList', apiVersion, metadata: { resourceVersion: String(state.rv) }, items: items.map((e) => copy(e)) };
}
