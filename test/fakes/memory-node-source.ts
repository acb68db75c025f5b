/**
 * MemoryNodeSource: the NodeSource port (lib/usecases/ports.ts) in memory, keeping KubeNodes'
 * promises over the API server: a missing node is NodeNotFoundError on read and `gone` on write;
 * the NetworkUnavailable condition is written with the plane's text (a seeded one as the route
 * controller writes it), times from the clock; pod CIDRs are set only on a node without any (the same ones again:
 * `unchanged`; others: PodCidrConflictError), at most one per family; Warning events are recorded.
 * Answers are copies, so a use case can never change the store by mutating what it read.
 */
import { tryParseCidr } from '../../lib/cidr/cidr.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { PodCidrConflictError } from '../../lib/kube/kube-errors.ts';
import { parseNode, podCidrsOf, type Node } from '../../lib/nodes/node.ts';
import { NodeNotFoundError } from '../../lib/usecases/port-errors.ts';
import type { ConditionText, NodeSource, NodeWriteResult } from '../../lib/usecases/ports.ts';

/** A seeded condition, as upstream's route controller writes it (kubernetes/cloud-provider route_controller.go). */
const CONDITION = {
  routeCreated: { status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' },
  noRouteCreated: { status: 'True', reason: 'NoRouteCreated', message: 'RouteController failed to create a route' },
} as const;

export interface MemoryNodeSpec {
  /** The EC2 instance in `spec.providerID` (`aws:///us-east-1a/<id>`); none when absent. */
  instanceId?: string;
  /** A providerID as given (a Fargate node's, say); wins over `instanceId`. */
  providerID?: string;
  podCidrs?: readonly string[];
  networkUnavailable?: 'True' | 'False';
  /** The condition's lastTransitionTime (ISO); the clock's time when absent. */
  since?: string;
  labels?: Record<string, string>;
}

export class MemoryNodeSource implements NodeSource {
  private readonly stored = new Map<string, Node>();
  /** Warning events, in order. */
  readonly events: Array<{ node: string; reason: string; message: string }> = [];
  /** Calls per port method (`listNodes`, `getNode`, `setNetworkUnavailable`, `updatePodCidr`, `warn`). */
  readonly calls = new Map<string, number>();
  /** Writes that changed a stored node. */
  writes = 0;
  /** Runs once inside every `getNode`, before the answer (a node that changes while it is read). */
  onGet?: (name: string) => Promise<void> | void;

  constructor(private readonly clock: () => number = () => Date.UTC(2026, 0, 1)) {}

  // ---- the world ---------------------------------------------------------------------------------

  /** Stores a node built from `spec`; returns it. */
  add(name: string, spec: MemoryNodeSpec = {}): Node {
    const podCidrs = [...(spec.podCidrs ?? [])];
    const providerID = spec.providerID ?? (spec.instanceId === undefined ? undefined : `aws:///us-east-1a/${spec.instanceId}`);
    const unavailable = spec.networkUnavailable;
    return this.put({
      metadata: { name, uid: `uid-${name}`, ...(spec.labels ? { labels: { ...spec.labels } } : {}) },
      spec: { ...(providerID === undefined ? {} : { providerID }), ...(podCidrs.length > 0 ? { podCIDR: podCidrs[0], podCIDRs: podCidrs } : {}) },
      status: {
        conditions:
          unavailable === undefined
            ? []
            : [{ type: 'NetworkUnavailable', ...(unavailable === 'True' ? CONDITION.noRouteCreated : CONDITION.routeCreated), lastTransitionTime: spec.since ?? this.time() }],
      },
    });
  }

  /** Stores a node object as given (validated as the adapter validates what the API answers). */
  put(object: unknown): Node {
    const node = parseNode(structuredClone(object));
    this.stored.set(node.metadata.name, node);
    return structuredClone(node);
  }

  delete(name: string): void {
    this.stored.delete(name);
  }

  /** The stored node as the API server holds it (a copy), or undefined; no port call is counted. */
  peek(name: string): Node | undefined {
    const node = this.stored.get(name);
    return node === undefined ? undefined : structuredClone(node);
  }

  has(name: string): boolean {
    return this.stored.has(name);
  }

  podCidrs(name: string): string[] {
    const node = this.stored.get(name);
    return node ? podCidrsOf(node) : [];
  }

  /** The stored NetworkUnavailable status ('True' / 'False'), or null. */
  networkUnavailable(name: string): string | null {
    return this.stored.get(name)?.status?.conditions?.find((c) => c.type === 'NetworkUnavailable')?.status ?? null;
  }

  eventReasons(name: string): string[] {
    return this.events.filter((e) => e.node === name).map((e) => e.reason);
  }

  count(method: string): number {
    return this.calls.get(method) ?? 0;
  }

  // ---- the port ----------------------------------------------------------------------------------

  async listNodes(): Promise<Node[]> {
    this.called('listNodes');
    return [...this.stored.values()].map((node) => structuredClone(node));
  }

  async getNode(name: string): Promise<Node> {
    this.called('getNode');
    await this.onGet?.(name);
    const node = this.stored.get(name);
    if (!node) throw new NodeNotFoundError(name);
    return structuredClone(node);
  }

  async setNetworkUnavailable(nodeName: string, unavailable: boolean, text: ConditionText): Promise<NodeWriteResult> {
    this.called('setNetworkUnavailable');
    const node = this.stored.get(nodeName);
    if (!node) return 'gone';
    const now = this.time();
    const condition = { type: 'NetworkUnavailable', status: unavailable ? 'True' : 'False', reason: text.reason, message: text.message, lastTransitionTime: now, lastHeartbeatTime: now };
    const others = (node.status?.conditions ?? []).filter((c) => c.type !== 'NetworkUnavailable');
    this.stored.set(nodeName, { ...node, status: { ...node.status, conditions: [...others, condition] } });
    this.writes += 1;
    return 'patched';
  }

  async updatePodCidr(node: Node, cidrs: string | readonly string[]): Promise<NodeWriteResult> {
    this.called('updatePodCidr');
    const name = node.metadata.name;
    const wanted = typeof cidrs === 'string' ? [cidrs] : [...cidrs];
    if (wanted.length === 0 || wanted.length > 2) throw new InvalidInputError(`node ${name}: want one or two pod CIDRs (one per IP family), got ${wanted.length}`);
    const families = wanted.map((cidr) => {
      const parsed = tryParseCidr(cidr);
      if (!parsed) throw new InvalidInputError(`node ${name}: invalid pod CIDR ${JSON.stringify(cidr)}`);
      return parsed.family;
    });
    if (new Set(families).size !== families.length) throw new InvalidInputError(`node ${name}: pod CIDRs ${wanted.join(',')} hold two of one IP family`);
    const same = (have: string[]) => have.length === wanted.length && have.every((c, i) => c === wanted[i]);
    const read = podCidrsOf(node);
    if (read.length > 0) {
      if (same(read)) return 'unchanged';
      throw new PodCidrConflictError(name, read, wanted);
    }
    const current = this.stored.get(name);
    if (!current) return 'gone';
    // The stored node got pod CIDRs since the caller read it: the API server accepts a patch to the
    // same values (a no-op) and refuses others (422, immutable), which the adapter answers as a conflict.
    const stored = podCidrsOf(current);
    if (stored.length > 0) {
      if (same(stored)) return 'patched';
      throw new PodCidrConflictError(name, stored, wanted);
    }
    this.stored.set(name, { ...current, spec: { ...current.spec, podCIDR: wanted[0], podCIDRs: wanted } });
    this.writes += 1;
    return 'patched';
  }

  async warn(nodeName: string, reason: string, message: string): Promise<boolean> {
    this.called('warn');
    this.events.push({ node: nodeName, reason, message });
    return true;
  }

  private called(method: string): void {
    this.calls.set(method, this.count(method) + 1);
  }

  private time(): string {
    return new Date(this.clock()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}
