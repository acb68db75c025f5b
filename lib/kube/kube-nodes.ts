/**
 * Kubernetes Node adapter: the only reader and writer of Node objects and Node events. It pages
 * through the node list keeping only the fields podroute reads of each node, validates every node
 * with the core's schema, writes the NetworkUnavailable condition and pod CIDRs with strategic
 * merge patches (as upstream's route and node-IPAM controllers do), and maps API failures by HTTP
 * status to typed errors.
 *
 * The calls are plain HTTPS requests of the Kubernetes REST API (core/v1: `GET /api/v1/nodes`,
 * `GET /api/v1/nodes/{name}`, `PATCH /api/v1/nodes/{name}` and `.../status`, `POST
 * /api/v1/namespaces/{namespace}/events`), with TLS and credentials from the kubeconfig
 * (`applyToHTTPSOptions`, @kubernetes/client-node's KubeConfig or podroute's own for EKS), so the
 * generated API client and its models are not loaded (they would slow the cold start).
 */
import * as z from '../util/zod-mini.ts';
import { tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../errors.ts';
import { describeIssue, nodeSchema, podCidrsOf, type Node } from '../nodes/node.ts';
import type { ConditionText, NodeWriteResult } from '../usecases/ports.ts';
import { KubeApiError, NodeNotFoundError, PodCidrConflictError } from './kube-errors.ts';
import { EVENT_NAMESPACE, recordNodeWarning } from './kube-events.ts';
import { callJson, callStreamed, type Call, type KubeEndpoint, type Target } from './kube-http.ts';
import { pickValue } from './list-items.ts';
import { ListStream } from './list-stream.ts';
import { LISTED_NODE_FIELDS, projectListedNode, projectNode } from './node-projection.ts';
import { rfc3339 } from '../util/time.ts';

export { KubeApiError, NodeNotFoundError, PodCidrConflictError } from './kube-errors.ts';

type MalformedNode = { name: string | null; problem: string };

/** A list that started over: how many pages and nodes it had read, and what the server said. */
type ListRestart = { resource: 'nodes'; pagesDiscarded: number; nodesDiscarded: number; reason: string };

/**
 * A list continues from where it stopped only while its continue token lives: the API server
 * answers an expired one with 410 Gone, reason `Expired` (apimachinery `NewResourceExpired`; tokens
 * live about 5 minutes, the `--etcd-compaction-interval`: Kubernetes docs, "API Concepts:
 * Retrieving large results sets in chunks"). Its Status carries a new, inconsistent token; we do
 * not use it (objects changed meanwhile could be missed or seen twice) and start the list over,
 * once per call.
 */
const LIST_RESTARTS = 1;

/** Nodes per page of the node list (`limit`) unless `pageSize` says otherwise; the scale benchmark's stand-in pre-builds pages of it. */
export const NODE_LIST_PAGE_SIZE = 500;

type KubeNodesOptions = {
  /** Clock for condition and event timestamps. */
  clock?: () => Date;
  /** Told about every node the API returned that does not fit the Node schema (it is skipped). */
  onMalformedNode?: (report: MalformedNode) => void;
  /** Told when a best-effort event could not be written. */
  onEventError?: (error: PodrouteError) => void;
  /** Told when the node list started over because its continue token expired (410) part-way. */
  onListRestart?: (report: ListRestart) => void;
  /** Attempts of a patch that keeps meeting 409 Conflict (upstream retries 5 times). */
  conflictAttempts?: number;
  /** Pause between conflict retries, multiplied by the attempt number. */
  conflictBackoffMs?: number;
  /** Page size of the node list (default NODE_LIST_PAGE_SIZE). */
  pageSize?: number;
  /**
   * The labels kept on each listed node: the keys the node selector reads (`selectorKeys` of
   * lib/nodes/label-selector.ts). Absent: every label is kept.
   */
  keepLabels?: readonly string[];
  /**
   * Namespace of the events written by `warn`: `default`, the only one the API server accepts for
   * an Event about a Node (see EVENT_NAMESPACE); anything else is refused at construction.
   */
  eventNamespace?: string;
  component?: string;
  /** How a Retry-After wait is slept (tests record it instead). */
  sleep?: (ms: number) => Promise<void>;
};

const listEnvelopeSchema = z.onFirstUse(() => z.looseObject({
  items: z.nullish(z.array(z.unknown())),
  metadata: z.optional(z.looseObject({ continue: z.optional(z.string()), resourceVersion: z.optional(z.string()) })),
}));

const nameProbeSchema = z.onFirstUse(() => z.looseObject({ metadata: z.looseObject({ name: z.string() }) }));

/** Content type of a strategic merge patch (Kubernetes docs, "Update API Objects in Place Using kubectl patch"). */
const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** A list page read as it arrives: its members, with `items` as each node's members that a listed node keeps (./list-stream.ts). */
function pageReader(): { push(part: Buffer): void; end(): Record<string, unknown> } {
  const stream = new ListStream((body, at) => pickValue(body, at, LISTED_NODE_FIELDS));
  return {
    push: (part) => notJson(() => stream.push(part)),
    end: () =>
      notJson(() => {
        const { members, items } = stream.end();
        return { ...Object.fromEntries(members), ...(items === null ? {} : { items }) };
      }),
  };
}

/** What `read` answers; a body that is not JSON is a retryable KubeApiError. */
function notJson<T>(read: () => T): T {
  try {
    return read();
  } catch (cause) {
    throw new KubeApiError('list nodes: the answer is not JSON', { verb: 'list', resource: 'nodes', retryable: true, cause });
  }
}

/** Internal: a continue token expired after `pages` pages (`nodes` nodes) were read. */
class ContinueExpiredError extends Error {
  constructor(
    message: string,
    readonly pages: number,
    readonly nodes: number,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

export class KubeNodes {
  private readonly endpoint: KubeEndpoint;
  private readonly clock: () => Date;
  private readonly options: KubeNodesOptions;
  /** uids of nodes seen by the last reads, for the involvedObject of events. */
  private readonly uids = new Map<string, string>();
  private readonly keepLabels: ReadonlySet<string> | null;

  constructor(endpoint: KubeEndpoint, options: KubeNodesOptions = {}) {
    if (options.eventNamespace !== undefined && options.eventNamespace !== EVENT_NAMESPACE) {
      throw new InvalidInputError(
        `event namespace ${JSON.stringify(options.eventNamespace).slice(0, 80)}: the API server only accepts Events about a Node in "${EVENT_NAMESPACE}" (involvedObject.namespace must match, and a Node has none)`,
      );
    }
    this.endpoint = endpoint;
    this.clock = options.clock ?? (() => new Date());
    this.options = options;
    this.keepLabels = options.keepLabels ? new Set(options.keepLabels) : null;
  }

  /**
   * Every node of the cluster, all pages; malformed nodes are reported and skipped. A continue
   * token that expires part-way (410) starts the list over once, discarding the pages read; a
   * second expiry in one call is a retryable KubeApiError.
   */
  async listNodes(): Promise<Node[]> {
    for (let restarts = 0; ; restarts++) {
      try {
        return await this.listNodesOnce();
      } catch (error) {
        if (!(error instanceof ContinueExpiredError)) throw error;
        if (restarts >= LIST_RESTARTS) {
          throw new KubeApiError(`list nodes: the continue token expired again after a restart (${error.message}); the next run lists again`, {
            status: 410,
            verb: 'list',
            resource: 'nodes',
            retryable: true,
            cause: error.cause,
          });
        }
        this.options.onListRestart?.({ resource: 'nodes', pagesDiscarded: error.pages, nodesDiscarded: error.nodes, reason: error.message });
      }
    }
  }

  private async listNodesOnce(): Promise<Node[]> {
    const limit = this.options.pageSize ?? NODE_LIST_PAGE_SIZE;
    const nodes: Node[] = [];
    let next: string | undefined;
    let pages = 0;
    do {
      const page = pageReader();
      try {
        // GET /api/v1/nodes?limit=&continue= (Kubernetes docs, "API Concepts: Retrieving large
        // results sets in chunks"), with resourceVersion unset: "Most Recent", a consistent read,
        // which Kubernetes 1.31+ serves from the watch cache (same page: "Semantics for get and
        // list"). Not resourceVersion=0 ("Any"): the watch cache answers it ignoring `limit`
        // (kubernetes/kubernetes#118394), one body of every node, and it may be arbitrarily old.
        // A stale list could still lack a live node; absence is confirmed by a keyed read
        // (lib/usecases/absence.ts) before any release or deletion.
        // The body is read as it arrives (./list-stream.ts), never held as one string.
        await this.callStreamed({ verb: 'list', resource: 'nodes' }, { method: 'GET', path: '/api/v1/nodes', query: { limit, continue: next } }, page.push);
      } catch (error) {
        if (next !== undefined && error instanceof KubeApiError && error.status === 410) {
          throw new ContinueExpiredError(error.message, pages, nodes.length, { cause: error });
        }
        throw error;
      }
      // Only the members a listed node keeps are parsed (./list-items.ts): no full node is built.
      const envelope = listEnvelopeSchema().safeParse(page.end());
      if (!envelope.success) {
        throw new KubeApiError(`list nodes: the API server answered something that is not a NodeList (${describeIssue(envelope.error)})`, {
          verb: 'list',
          resource: 'nodes',
          retryable: true,
        });
      }
      for (const item of envelope.data.items ?? []) {
        const node = this.validNode(item);
        if (node) nodes.push(node);
      }
      next = envelope.data.metadata?.continue || undefined;
      pages += 1;
      if (pages > 100_000) throw new KubeApiError('list nodes: the continue chain does not end', { verb: 'list', resource: 'nodes', retryable: true });
    } while (next);
    return nodes;
  }

  /** One node; NodeNotFoundError when it does not exist, InvalidInputError when it is malformed. */
  async getNode(name: string): Promise<Node> {
    let body: unknown;
    try {
      body = await this.call({ verb: 'get', resource: 'nodes', name }, { method: 'GET', path: `/api/v1/nodes/${encodeURIComponent(name)}` });
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) throw new NodeNotFoundError(name, { cause: error });
      throw error;
    }
    const parsed = nodeSchema().safeParse(projectNode(body));
    if (!parsed.success) throw new InvalidInputError(`node ${JSON.stringify(name)} from the API is malformed: ${describeIssue(parsed.error)}`);
    this.remember(parsed.data);
    return parsed.data;
  }

  /**
   * Writes the node's NetworkUnavailable condition as upstream's route controller does: a strategic
   * merge patch of `nodes/status` that touches only that condition (merged by `type`), worded by
   * the data plane (`text`).
   */
  async setNetworkUnavailable(nodeName: string, unavailable: boolean, text: ConditionText): Promise<NodeWriteResult> {
    const wanted = { status: unavailable ? 'True' : 'False', reason: text.reason, message: text.message };
    return this.patchWithRetry({ verb: 'patch', resource: 'nodes/status', name: nodeName }, () => {
      const now = rfc3339(this.clock());
      const body = {
        status: {
          conditions: [{ type: 'NetworkUnavailable', ...wanted, lastTransitionTime: now, lastHeartbeatTime: now }],
        },
      };
      return { method: 'PATCH', path: `/api/v1/nodes/${encodeURIComponent(nodeName)}/status`, body, contentType: STRATEGIC_MERGE_PATCH };
    });
  }

  /**
   * Sets `spec.podCIDR` and `spec.podCIDRs` of a node that has none: at most one CIDR per family,
   * `podCIDR` equal to `podCIDRs[0]` (else the v1 conversion rewrites the list to `[podCIDR]`). The
   * same CIDRs again is a no-op; different ones are a PodCidrConflictError (the API forbids changing
   * them, and so do we).
   */
  async updatePodCidr(node: Node, cidrs: string | readonly string[]): Promise<NodeWriteResult> {
    const wanted = typeof cidrs === 'string' ? [cidrs] : [...cidrs];
    const nodeName = node.metadata.name;
    if (wanted.length === 0 || wanted.length > 2) throw new InvalidInputError(`node ${nodeName}: want one or two pod CIDRs (one per IP family), got ${wanted.length}`);
    const families = wanted.map((cidr) => {
      const parsed = tryParseCidr(cidr);
      if (!parsed) throw new InvalidInputError(`node ${nodeName}: invalid pod CIDR ${JSON.stringify(cidr)}`);
      return parsed.family;
    });
    // ValidateNode (k8s pkg/apis/core/validation): at most one CIDR per IP family; the API would answer 422.
    if (new Set(families).size !== families.length) {
      throw new InvalidInputError(`node ${nodeName}: pod CIDRs ${wanted.join(',')} hold two of one IP family; a node takes at most one per family`);
    }
    const same = (have: string[]) => have.length === wanted.length && have.every((c, i) => c === wanted[i]);
    const existing = podCidrsOf(node);
    if (existing.length > 0) {
      if (same(existing)) return 'unchanged';
      throw new PodCidrConflictError(nodeName, existing, wanted);
    }
    const target = { verb: 'patch', resource: 'nodes', name: nodeName };
    try {
      return await this.patchWithRetry(target, () => ({
        method: 'PATCH',
        path: `/api/v1/nodes/${encodeURIComponent(nodeName)}`,
        body: { spec: { podCIDR: wanted[0], podCIDRs: wanted } },
        contentType: STRATEGIC_MERGE_PATCH,
      }));
    } catch (error) {
      // 422: the node got pod CIDRs since it was read. Same ones: done; others: a conflict.
      if (!(error instanceof KubeApiError) || error.status !== 422) throw error;
      let fresh: Node;
      try {
        fresh = await this.getNode(nodeName);
      } catch (readError) {
        if (readError instanceof NodeNotFoundError) return 'gone';
        throw readError;
      }
      const now = podCidrsOf(fresh);
      if (same(now)) return 'unchanged';
      if (now.length > 0) throw new PodCidrConflictError(nodeName, now, wanted, { cause: error });
      throw error;
    }
  }

  /**
   * Records a Warning event on the node, aggregated (kube-events.ts `recordNodeWarning`). Best
   * effort, as upstream: a failure is reported through `onEventError` and returns false, never throws.
   */
  async warn(nodeName: string, reason: string, message: string): Promise<boolean> {
    const warning = { nodeName, nodeUid: this.uids.get(nodeName) ?? nodeName, reason, message, component: this.options.component ?? 'podroute', now: this.clock() };
    try {
      await recordNodeWarning((target, call) => this.call(target, call), warning);
      return true;
    } catch (error) {
      const reported = error instanceof PodrouteError ? error : new PodrouteError('create event failed', { retryable: true, cause: error });
      this.options.onEventError?.(reported);
      return false;
    }
  }

  private validNode(item: unknown): Node | null {
    const small = projectListedNode(item, this.keepLabels);
    const parsed = nodeSchema().safeParse(small);
    if (parsed.success) {
      this.remember(parsed.data);
      return parsed.data;
    }
    const probe = nameProbeSchema().safeParse(small);
    this.options.onMalformedNode?.({ name: probe.success ? probe.data.metadata.name : null, problem: describeIssue(parsed.error) });
    return null;
  }

  private remember(node: Node): void {
    if (node.metadata.uid) this.uids.set(node.metadata.name, node.metadata.uid);
  }

  /** A patch retried on 409 Conflict; 404 means the node is gone. */
  private async patchWithRetry(target: Target, patch: () => Call): Promise<NodeWriteResult> {
    const attempts = Math.max(1, this.options.conflictAttempts ?? 5);
    const backoff = this.options.conflictBackoffMs ?? 100;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.call(target, patch());
        return 'patched';
      } catch (error) {
        if (!(error instanceof KubeApiError)) throw error;
        if (error.status === 404) return 'gone';
        if (error.status !== 409) throw error;
        if (attempt >= attempts) {
          throw new KubeApiError(`${target.verb} ${target.resource} ${target.name ?? ''}: still conflicting after ${attempts} attempts`, {
            status: 409,
            verb: target.verb,
            resource: target.resource,
            retryable: true,
            cause: error,
          });
        }
        if (backoff > 0) await new Promise((resolve) => setTimeout(resolve, backoff * attempt));
      }
    }
  }

  /** One API call whose 2xx body goes to `sink` as it arrives; failures mapped as `call`'s (kube-http.ts `callStreamed`). */
  private callStreamed(target: Target, call: Call, sink: (part: Buffer) => void): Promise<void> {
    return callStreamed(this.endpoint, target, call, { clock: this.clock, ...(this.options.sleep ? { sleep: this.options.sleep } : {}) }, sink);
  }

  /** One API call's parsed answer; failures mapped, a 429 with Retry-After retried (kube-http.ts `callJson`). */
  private call(target: Target, call: Call): Promise<unknown> {
    return callJson(this.endpoint, target, call, { clock: this.clock, ...(this.options.sleep ? { sleep: this.options.sleep } : {}) });
  }
}
