/**
 * Warning Events about Nodes (core/v1), aggregated as upstream's event recorder aggregates them
 * (client-go tools/record `EventCorrelator`): one Event per (node, reason), named after both; a
 * repeat adds to its `count` and moves its `lastTimestamp` and message, instead of piling up new
 * Events in etcd. A CREATE that meets the name (409: it exists, or another writer created it in
 * the same instant) becomes that update, so no occurrence is lost.
 */
import { createHash } from 'node:crypto';
import * as z from '../util/zod-mini.ts';
import { describeIssue } from '../nodes/node.ts';
import { KubeApiError } from './kube-errors.ts';
import type { Call, Target } from './kube-http.ts';
import { rfc3339 } from '../util/time.ts';

/**
 * Where Events about Nodes go. core/v1 validation (k8s pkg/apis/core/validation/events.go
 * `legacyValidateEvent`) wants `involvedObject.namespace` equal to the Event's namespace; a Node is
 * cluster-scoped (its namespace is ""), which only matches `default`. Another namespace is a 422 on
 * every event, and one that does not exist a 404.
 */
export const EVENT_NAMESPACE = 'default';

/** Attempts at folding a repeat into the existing Event when it changed meanwhile (409 on its resourceVersion). */
const EVENT_UPDATE_ATTEMPTS = 3;

const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

const eventSchema = z.onFirstUse(() => z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.optional(z.string()) }),
  count: z.optional(z.number()),
}));

/** One API call returning its parsed answer, failures mapped to typed errors. */
export type CallJson = (target: Target, call: Call) => Promise<unknown>;

export type NodeWarning = { nodeName: string; nodeUid: string; reason: string; message: string; component: string; now: Date };

/**
 * The name of the one Event per (node, reason): `<node>.<16 hex of sha256(reason)>` (upstream names
 * events `<object>.<suffix>`). Event names are DNS subdomains of at most 253 characters: a longer
 * node name is cut and its own digest added.
 */
export function eventName(nodeName: string, reason: string): string {
  const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
  const name = `${nodeName}.${digest(reason)}`;
  if (name.length <= 253) return name;
  return `${nodeName.slice(0, 200).replace(/[-.]+$/, '')}.${digest(nodeName)}.${digest(reason)}`;
}

/** Writes one occurrence of `warning`: a new Event, or one more on the existing one. */
export async function recordNodeWarning(call: CallJson, warning: NodeWarning): Promise<void> {
  const name = eventName(warning.nodeName, warning.reason);
  const collection = `/api/v1/namespaces/${EVENT_NAMESPACE}/events`;
  // core/v1 Event (Kubernetes API reference, "Event v1 core"); no eventTime, so the legacy rules apply.
  const body = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: EVENT_NAMESPACE },
    involvedObject: { kind: 'Node', apiVersion: 'v1', name: warning.nodeName, uid: warning.nodeUid },
    reason: warning.reason,
    message: warning.message,
    type: 'Warning',
    count: 1,
    firstTimestamp: rfc3339(warning.now),
    lastTimestamp: rfc3339(warning.now),
    source: { component: warning.component },
    reportingComponent: warning.component,
    reportingInstance: '',
  };
  try {
    await call({ verb: 'create', resource: 'events', name: warning.nodeName }, { method: 'POST', path: collection, body, contentType: 'application/json' });
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.status !== 409) throw error;
    await repeatEvent(call, `${collection}/${encodeURIComponent(name)}`, name, warning);
  }
}

/** count + 1, lastTimestamp and message now, guarded by the resourceVersion read (a 409 reads again). */
async function repeatEvent(call: CallJson, path: string, name: string, warning: NodeWarning): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const parsed = eventSchema().safeParse(await call({ verb: 'get', resource: 'events', name }, { method: 'GET', path }));
    if (!parsed.success) throw new KubeApiError(`get event ${name}: the answer is not an Event (${describeIssue(parsed.error)})`, { verb: 'get', resource: 'events', retryable: true });
    const body = {
      metadata: { resourceVersion: parsed.data.metadata.resourceVersion },
      count: (parsed.data.count ?? 1) + 1,
      lastTimestamp: rfc3339(warning.now),
      message: warning.message,
    };
    try {
      await call({ verb: 'patch', resource: 'events', name }, { method: 'PATCH', path, body, contentType: STRATEGIC_MERGE_PATCH });
      return;
    } catch (error) {
      if (!(error instanceof KubeApiError) || error.status !== 409 || attempt >= EVENT_UPDATE_ATTEMPTS) throw error;
    }
  }
}
