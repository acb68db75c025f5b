/**
 * In-memory ports for prefixes-mode use-case tests: an EC2 side (interfaces, subnets and their CIDR
 * reservations, counted calls) and a Kubernetes node store (conditions, pod CIDRs, events).
 */
import { blockAt, blockCount, containsCidr, formatCidr, overlaps, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { loadConfig } from '../../lib/config.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { Node } from '../../lib/nodes/node.ts';
import type { EniPrefixes, NodeInterface, NodeSource, NodeWriteResult, Subnet, SubnetReservation, Subnets } from '../../lib/usecases/ports.ts';
import type { ReconcileDeps } from '../../lib/usecases/reconcile.ts';
import { prefixesPlane } from '../../lib/dataplane/prefixes/prefixes-plane.ts';
import type { PrefixesPlanePorts } from '../../lib/dataplane/prefixes/prefixes-plane.ts';
import { noRouteTables } from '../../lib/dataplane/prefixes/no-route-tables.ts';
import { RecordingQueue, TimedMemoryCidrStore } from '../support/world.ts';
import { NodeNotFoundError, PrefixUnavailableError } from '../../lib/usecases/port-errors.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';

const parse = (text: string) => {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new Error(`bad CIDR ${text}`);
  return cidr;
};

export class FakeEc2 implements EniPrefixes, Subnets {
  readonly interfaces = new Map<string, NodeInterface>();
  readonly subnetMap = new Map<string, Subnet>();
  readonly calls: string[] = [];
  private next = 0;

  /** Reservations are podroute's (Description `podroute`) unless they say otherwise. */
  addSubnet(subnetId: string, cidrs: string[], reservations: Array<Pick<SubnetReservation, 'cidr' | 'type'> & { description?: string | undefined }> = []): Subnet {
    const subnet: Subnet = {
      subnetId,
      availabilityZone: `us-east-1${String.fromCharCode(97 + this.subnetMap.size)}`,
      cidrs,
      reservations: reservations.map((r, i) => ({ description: 'podroute', ...r, reservationId: `scr-${subnetId}-${i}` })),
    };
    this.subnetMap.set(subnetId, subnet);
    return subnet;
  }

  addInstance(subnetId: string, prefixes: string[] = []): NodeInterface {
    this.next += 1;
    const hex = this.next.toString(16).padStart(17, '0');
    const eni: NodeInterface = { instanceId: `i-${hex}`, networkInterfaceId: `eni-${hex}`, subnetId, prefixes: [...prefixes] };
    this.interfaces.set(eni.instanceId, eni);
    return eni;
  }

  count(prefix: string): number {
    return this.calls.filter((call) => call.startsWith(prefix)).length;
  }

  async describeInterfaces(instanceIds: readonly string[]): Promise<Map<string, NodeInterface>> {
    this.calls.push(`describeInterfaces ${instanceIds.length}`);
    const found = new Map<string, NodeInterface>();
    for (const id of instanceIds) {
      const eni = this.interfaces.get(id);
      if (eni) found.set(id, { ...eni, prefixes: [...eni.prefixes] });
    }
    return found;
  }

  async describeSubnets(subnetIds: readonly string[]): Promise<Map<string, Subnet>> {
    this.calls.push(`describeSubnets ${subnetIds.length}`);
    return new Map(subnetIds.flatMap((id) => {
      const subnet = this.subnetMap.get(id);
      return subnet ? [[id, structuredClone(subnet)] as const] : [];
    }));
  }

  async prefixDelegation(cidr: string): Promise<string | null> {
    this.calls.push(`prefixDelegation ${cidr}`);
    return [...this.interfaces.values()].find((eni) => eni.prefixes.includes(cidr))?.networkInterfaceId ?? null;
  }

  async unassignPrefix(networkInterfaceId: string, cidr: string): Promise<void> {
    this.calls.push(`unassignPrefix ${networkInterfaceId} ${cidr}`);
    const eni = this.eni(networkInterfaceId);
    if (!eni.prefixes.includes(cidr)) throw new Error(`InvalidParameterValue: ${cidr} is not on ${networkInterfaceId}`);
    eni.prefixes = eni.prefixes.filter((p) => p !== cidr);
  }

  async assignPrefix(networkInterfaceId: string, cidr: string): Promise<void> {
    this.calls.push(`assignPrefix ${networkInterfaceId} ${cidr}`);
    const eni = this.eni(networkInterfaceId);
    const subnet = this.subnetMap.get(eni.subnetId);
    // EC2 User Guide, "Assign prefixes to network interfaces": a prefix lies in the interface's subnet.
    if (!subnet?.cidrs.some((block) => containsCidr(parse(block), parse(cidr)))) throw new Error(`InvalidParameterValue: ${cidr} is not in subnet ${eni.subnetId}`);
    if (this.taken().some((p) => overlaps(parse(p), parse(cidr)))) throw new PrefixUnavailableError(`InvalidParameterValue: ${cidr} is in use`, { prefix: cidr });
    eni.prefixes.push(cidr);
  }

  async assignAnyPrefix(networkInterfaceId: string, family: 4 | 6): Promise<string> {
    this.calls.push(`assignAnyPrefix ${networkInterfaceId} ${family}`);
    const eni = this.eni(networkInterfaceId);
    const subnet = this.subnetMap.get(eni.subnetId);
    const mask = family === 4 ? 28 : 80;
    // Amazon VPC User Guide, "Subnet CIDR reservations": automatic assignment takes from `prefix` reservations.
    for (const r of subnet?.reservations ?? []) {
      const range = parse(r.cidr);
      if (r.type !== 'prefix' || range.family !== family) continue;
      for (let i = 0n; i < blockCount(range, mask); i++) {
        const block = formatCidr(blockAt(range, mask, i));
        if (!this.taken().some((p) => overlaps(parse(p), parse(block)))) {
          eni.prefixes.push(block);
          return block;
        }
      }
    }
    throw new Error('InsufficientCidrBlocks');
  }

  private taken(): string[] {
    return [...this.interfaces.values()].flatMap((eni) => eni.prefixes);
  }

  private eni(id: string): NodeInterface {
    const eni = [...this.interfaces.values()].find((e) => e.networkInterfaceId === id);
    if (!eni) throw new Error(`InvalidNetworkInterfaceID.NotFound: ${id}`);
    return eni;
  }
}

export class MemoryNodes implements NodeSource {
  readonly stored = new Map<string, Node>();
  readonly events: Array<{ node: string; reason: string; message: string }> = [];
  writes = 0;

  add(name: string, instanceId: string, podCidrs: string[] = []): void {
    this.stored.set(name, {
      metadata: { name },
      spec: { providerID: `aws:///us-east-1a/${instanceId}`, ...(podCidrs.length > 0 ? { podCIDR: podCidrs[0], podCIDRs: podCidrs } : {}) },
      status: { conditions: [] },
    } as Node);
  }

  podCidrs(name: string): string[] {
    return [...(this.get(name).spec?.podCIDRs ?? [])];
  }

  networkUnavailable(name: string): string | undefined {
    return this.get(name).status?.conditions?.find((c) => c.type === 'NetworkUnavailable')?.status;
  }

  async listNodes(): Promise<Node[]> {
    return [...this.stored.values()].map((node) => structuredClone(node));
  }

  async getNode(name: string): Promise<Node> {
    return structuredClone(this.get(name));
  }

  async setNetworkUnavailable(nodeName: string, unavailable: boolean): Promise<NodeWriteResult> {
    const node = this.get(nodeName);
    const status = unavailable ? 'True' : 'False';
    const conditions = node.status?.conditions ?? [];
    if (conditions.find((c) => c.type === 'NetworkUnavailable')?.status === status) return 'unchanged';
    this.writes += 1;
    this.stored.set(nodeName, { ...node, status: { ...node.status, conditions: [...conditions.filter((c) => c.type !== 'NetworkUnavailable'), { type: 'NetworkUnavailable', status, lastTransitionTime: '2026-12-01T00:00:00Z' }] } } as Node);
    return 'patched';
  }

  async updatePodCidr(node: Node, cidrs: string | readonly string[]): Promise<NodeWriteResult> {
    const list = typeof cidrs === 'string' ? [cidrs] : [...cidrs];
    const current = this.get(node.metadata.name);
    if ((current.spec?.podCIDRs ?? []).length > 0) throw new Error(`node ${node.metadata.name}: spec.podCIDRs may only change from empty`);
    this.writes += 1;
    this.stored.set(node.metadata.name, { ...current, spec: { ...current.spec, podCIDR: list[0], podCIDRs: list } } as Node);
    return 'patched';
  }

  async warn(nodeName: string, reason: string, message: string): Promise<unknown> {
    this.events.push({ node: nodeName, reason, message });
    return undefined;
  }

  private get(name: string): Node {
    const node = this.stored.get(name);
    // The port's answer for a node that does not exist (lib/usecases/ports.ts NodeSource.getNode).
    if (!node) throw new NodeNotFoundError(name);
    return node;
  }
}

/** Reconcile deps in prefixes mode over the fakes; one memory CIDR set per pod range. `ports` are the plane's, read at each call. */
export function prefixDeps(ec2: FakeEc2, nodes: MemoryNodes, env: Record<string, string> = {}) {
  const config = loadConfig({ CLUSTER_NAME: 'alpha', MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/8,2600:1f18:1234::/48', ...env });
  const sets = new Map<string, Promise<CidrSet>>();
  const log = memoryLogger();
  let clock = Date.parse('2026-12-01T12:00:00Z');
  const now = () => clock;
  const ports: PrefixesPlanePorts = {
    config,
    prefixes: ec2,
    subnets: ec2,
    reservationSets: (range) => {
      let set = sets.get(range);
      if (!set) {
        set = createCidrSet({ clusterCidr: range, nodeMaskSize: range.includes(':') ? 80 : 28, store: new TimedMemoryCidrStore(now), rangeKind: 'pod range' });
        sets.set(range, set);
      }
      return set;
    },
    usedReservationSets: () => Promise.all([...sets.values()]),
    nodes,
    log,
  };
  const deps: ReconcileDeps = {
    config,
    plane: prefixesPlane(ports),
    routeTables: noRouteTables,
    nodes,
    queue: new RecordingQueue(),
    cidrSets: [],
    log,
    now,
  };
  return { deps, ports, log, setOf: (range: string) => ports.reservationSets(range), advance: (ms: number) => (clock += ms) };
}

/** A queue whose backlog is `depth` messages (GetQueueAttributes' visible, in flight and delayed). */
export class BackloggedQueue extends RecordingQueue {
  constructor(public depth = 0) {
    super();
  }
  async backlog(): Promise<number> {
    return this.depth;
  }
}

/** One subnet with podroute's IPv4 and IPv6 pod ranges and one instance in it, reconciled over `queue`. */
export function onePodRangeSubnet(queue: RecordingQueue, env: Record<string, string> = {}) {
  const ec2 = new FakeEc2();
  ec2.addSubnet('subnet-0', ['10.0.0.0/20', '2600:1f18:1234:0::/64'], [
    { cidr: '10.0.8.0/22', type: 'explicit' },
    { cidr: '2600:1f18:1234:0:8000::/65', type: 'explicit' },
  ]);
  const eni = ec2.addInstance('subnet-0');
  const nodes = new MemoryNodes();
  const fakes = prefixDeps(ec2, nodes, env);
  const deps = { ...fakes.deps, queue };
  const delegated = () => [...(ec2.interfaces.get(eni.instanceId)?.prefixes ?? [])].sort();
  return { ec2, eni, nodes, fakes, deps, delegated };
}

/** Admits node `name` on `instanceId`, then stores it as the admission patched it, created now: answers its pod CIDRs. */
export async function admitAndStore(name: string, instanceId: string, nodes: MemoryNodes, deps: ReconcileDeps): Promise<string[]> {
  const object = { metadata: { name }, spec: { providerID: `aws:///us-east-1a/${instanceId}` } };
  const review = await admit({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: `u-${name}`, operation: 'CREATE', object } } as never, deps);
  const patch = JSON.parse(Buffer.from(review.response.patch ?? '', 'base64').toString()) as Array<{ path: string; value: unknown }>;
  const podCidrs = (patch.find((op) => op.path === '/spec/podCIDRs')?.value as string[] | undefined) ?? [];
  nodes.add(name, instanceId, podCidrs);
  const stored = nodes.stored.get(name);
  if (stored) stored.metadata.creationTimestamp = new Date(deps.now()).toISOString();
  return podCidrs;
}
