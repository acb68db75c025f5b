/**
 * The sandbox's report: what the stand-ins hold, judged against the truth of the cluster the
 * sandbox built. The judge is independent of podroute: it reads the emulators' state (nodes as the
 * Kubernetes emulator stores them, routes and interfaces as the EC2 emulator holds them, leases as
 * the CIDR table holds its items) and the sandbox's own record (which instance it launched for each
 * node, and what a hostile node claimed for itself), and imports nothing of podroute but plain CIDR
 * arithmetic. A bug in podroute's rules cannot hide from it that way.
 *
 * What it checks:
 * - every honest live node's pod CIDR is routed to its primary interface in every cluster table
 *   (routes mode) or delegated on its primary interface (prefixes mode): `routesProgrammed` of
 *   `routesExpected`;
 * - no route (or delegated prefix) inside the cluster CIDRs points at a node that does not hold
 *   that exact pod CIDR by the lease table: `routesToNonLeaseholder`; nor anywhere but at the live
 *   node whose pod CIDR it is: `wrongRoutes`;
 * - every lease belongs to a live node that has that pod CIDR: `leakedCidrs`;
 * - no two live nodes share a block: `duplicateCidrs` (a hostile node's own claim, which the
 *   sandbox planted on purpose, is not a pod CIDR podroute gave; it is left out).
 * The field names of `SandboxReport` are a contract: `npm start --report` writes them and other
 * tools read them.
 */
import { containsCidr, formatCidr, overlaps, tryParseCidr } from '../../../lib/cidr/cidr.ts';
import type { Cidr } from '../../../lib/cidr/cidr.ts';

export interface SandboxReport {
  /** Live nodes. */
  nodes: number;
  /** Live nodes whose NetworkUnavailable condition is False. */
  nodesReady: number;
  /** Live nodes the sandbox registered as an attacker would (hostile scenarios); 0 otherwise. */
  hostileNodes: number;
  /** Live nodes registered honestly whose NetworkUnavailable condition is not False (must be 0). */
  honestNodesNotReady: number;
  /** Nodes that were ready once and got NetworkUnavailable=True written later, from the writes podroute made (must be 0). */
  readyNodesTainted: number;
  /** Active routes of an honest live node's pod CIDR deleted or replaced away from it, seen by the EC2 emulator (must be 0). */
  liveRoutesRemoved: number;
  /** Routes mode: (pod CIDR, cluster table) pairs the honest live nodes need. Prefixes mode: delegated prefixes they need. */
  routesExpected: number;
  /** Of those, how many exist, are active and point at the node's primary interface. */
  routesProgrammed: number;
  /** Pod CIDRs of live nodes that overlap a pod CIDR of another live node (one per pair). */
  duplicateCidrs: number;
  /** CIDR leases that no live node holds as its pod CIDR (a hostile node's own claims not counted). */
  leakedCidrs: number;
  /** Routes (or delegated prefixes) inside the cluster CIDRs that are not the right route of a live node's pod CIDR. */
  wrongRoutes: number;
  /** Routes (or delegated prefixes) inside the cluster CIDRs whose target node does not hold the lease of exactly that CIDR (must be 0). */
  routesToNonLeaseholder: number;
  dlqMessages: number;
  /** EC2 API calls received per action (throttled and failed ones included). */
  ec2Calls: Record<string, number>;
  /**
   * SQS requests per action that production would make and pay for: the functions' sends and
   * visibility changes, and the event source's receives (empty ones included) and deletes. The
   * sandbox's own depth checks are not in it.
   */
  sqsCalls: Record<string, number>;
  /** Of those, ReceiveMessage requests that returned no message (billed all the same). */
  sqsEmptyReceives: number;
  /** EC2 calls refused by the token buckets. */
  throttled: number;
  /** Milliseconds from the start of the run to convergence; null when it did not converge. */
  convergedMs: number | null;
  /** Per node: from its join call to its NetworkUnavailable condition turning False. */
  joinToReadyMs: { p50: number | null; p99: number | null };
  /** Node deletes that a later validating webhook refused after podroute admitted them (`--deny-deletes`). */
  deletesRefused: number;
  /** Of those nodes, how many lost a pod CIDR, a route or their Ready condition (must be 0). */
  refusedNodesBroken: number;
  /** Nodes really deleted that still exist, hold a lease or have a route to their instance (must be 0). */
  departedLeftovers: number;
  /**
   * Prefixes mode: live nodes with a pod CIDR outside the subnet of their instance's primary
   * interface, from the EC2 emulator's state (must be 0: EC2 delegates no prefix outside the
   * interface's subnet). null in routes mode, where pod CIDRs lie outside the VPC by design.
   */
  podCidrsOutsideSubnet: number | null;
}

/** A route as the EC2 emulator describes it. */
export interface ObservedRoute {
  destinationCidrBlock?: string;
  destinationIpv6CidrBlock?: string;
  gatewayId?: string;
  networkInterfaceId?: string;
  instanceId?: string;
  state: 'active' | 'blackhole';
}

/** A subnet's CIDR blocks, as the EC2 emulator holds them. */
export interface SubnetBlocks {
  cidrBlock: string;
  ipv6CidrBlock?: string | undefined;
}

/** A running instance's primary interface, as the EC2 emulator holds it. */
export interface ObservedInterface {
  networkInterfaceId: string;
  /** Prefixes delegated to it (IPv4 and IPv6). */
  prefixes: readonly string[];
  subnet?: SubnetBlocks | undefined;
}

/** A lease as the CIDR table holds it (lease-table.ts reads it). */
export interface LeaseRecord {
  cidr: string;
  owner: string | null;
}

/** What the sandbox itself did for a node: the instance it launched and, for a hostile node, what it claimed. */
export interface NodeRecord {
  instanceId: string;
  /** Registered as an attacker would (hostile scenarios). */
  hostile?: boolean;
  /** Pod CIDRs the node wrote on itself at registration (hostile): not podroute's to have given. */
  planted?: readonly string[];
}

export interface ObservedState {
  mode: 'routes' | 'prefixes';
  clusterCidrs: readonly string[];
  /** Nodes as the API server stores them (malformed ones are skipped). */
  nodes: readonly unknown[];
  /** The sandbox's record of the nodes it registered, by name. A node missing from it is taken at its providerID's word. */
  record?: ReadonlyMap<string, NodeRecord>;
  /** The cluster's route tables. */
  tables: ReadonlyArray<{ id: string; routes: readonly ObservedRoute[] }>;
  /** Each running instance's primary interface. */
  interfaces: ReadonlyMap<string, ObservedInterface>;
  leases: readonly LeaseRecord[];
  /** Nodes ready once and marked unavailable later (the sandbox observes podroute's writes). */
  readyNodesTainted?: number;
  /** Routes taken from live honest nodes (observe.ts, watchLiveRouteRemovals). */
  liveRoutesRemoved?: number;
}

export type RouteCounts = Pick<
  SandboxReport,
  | 'podCidrsOutsideSubnet'
  | 'nodes'
  | 'nodesReady'
  | 'hostileNodes'
  | 'honestNodesNotReady'
  | 'readyNodesTainted'
  | 'liveRoutesRemoved'
  | 'routesExpected'
  | 'routesProgrammed'
  | 'duplicateCidrs'
  | 'wrongRoutes'
  | 'routesToNonLeaseholder'
  | 'leakedCidrs'
>;

export interface LiveNode {
  name: string;
  /** The instance the sandbox launched for it (its providerID's, for a node the sandbox did not register). */
  instanceId: string | null;
  ready: boolean;
  hostile: boolean;
  /** Canonical pod CIDRs inside the cluster CIDRs, the node's own planted claims left out. */
  cidrs: Cidr[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const canonical = (text: string | undefined): string | null => {
  const cidr = tryParseCidr(text);
  return cidr === null ? null : formatCidr(cidr);
};

/** The instance id at the end of an `aws:///<zone>/<instance>` providerID, or null. */
function providerInstance(providerId: unknown): string | null {
  if (typeof providerId !== 'string' || !providerId.startsWith('aws://')) return null;
  const last = providerId.split('/').pop() ?? '';
  return /^i-[0-9a-f]{8,17}$/.test(last) ? last : null;
}

/** A stored node read as the judge needs it, or null when it has no name. */
export function readNode(raw: unknown): { name: string; providerInstance: string | null; podCidrs: string[]; networkUnavailable: string | null } | null {
  if (!isObject(raw) || !isObject(raw.metadata) || typeof raw.metadata.name !== 'string') return null;
  const spec = isObject(raw.spec) ? raw.spec : {};
  const listed = texts(spec.podCIDRs);
  const podCidrs = listed.length > 0 ? listed : typeof spec.podCIDR === 'string' && spec.podCIDR !== '' ? [spec.podCIDR] : [];
  const conditions = isObject(raw.status) && Array.isArray(raw.status.conditions) ? raw.status.conditions : [];
  const condition = conditions.find((c): c is Record<string, unknown> => isObject(c) && c.type === 'NetworkUnavailable');
  return { name: raw.metadata.name, providerInstance: providerInstance(spec.providerID), podCidrs, networkUnavailable: typeof condition?.status === 'string' ? condition.status : null };
}

export function liveNodes(raw: readonly unknown[], clusterCidrs: readonly string[], record: ReadonlyMap<string, NodeRecord> = new Map()): LiveNode[] {
  const clusters = clusterCidrs.map((text) => tryParseCidr(text)).filter((cidr): cidr is Cidr => cidr !== null);
  const out: LiveNode[] = [];
  for (const item of raw) {
    const node = readNode(item);
    if (!node) continue;
    const own = record.get(node.name);
    const planted = new Set((own?.planted ?? []).map(canonical));
    const cidrs = node.podCidrs
      .map((text) => tryParseCidr(text))
      .filter((cidr): cidr is Cidr => cidr !== null && clusters.some((cluster) => overlaps(cluster, cidr)) && !planted.has(formatCidr(cidr)));
    out.push({ name: node.name, instanceId: own?.instanceId ?? node.providerInstance, ready: node.networkUnavailable === 'False', hostile: own?.hostile === true, cidrs });
  }
  return out;
}

const destinationOf = (route: ObservedRoute): string | undefined => route.destinationCidrBlock ?? route.destinationIpv6CidrBlock;

/** Who is where: node by instance and instance by primary interface, and each owner's leased CIDRs. */
interface Truth {
  clusters: Cidr[];
  nodes: LiveNode[];
  byName: Map<string, LiveNode>;
  /** Instance -> node name: the sandbox's record first, then the providerIDs of nodes it did not register. */
  nodeOfInstance: Map<string, string>;
  instanceOfInterface: Map<string, string>;
  leased: Map<string, Set<string>>;
}

function truthOf(state: ObservedState): Truth {
  const record = state.record ?? new Map<string, NodeRecord>();
  const nodes = liveNodes(state.nodes, state.clusterCidrs, record);
  const nodeOfInstance = new Map<string, string>();
  for (const [name, own] of record) nodeOfInstance.set(own.instanceId, name);
  for (const node of nodes) if (node.instanceId !== null && !nodeOfInstance.has(node.instanceId)) nodeOfInstance.set(node.instanceId, node.name);
  const instanceOfInterface = new Map([...state.interfaces].map(([instanceId, eni]) => [eni.networkInterfaceId, instanceId]));
  const leased = new Map<string, Set<string>>();
  for (const lease of state.leases) {
    const cidr = canonical(lease.cidr);
    if (lease.owner === null || cidr === null) continue;
    leased.set(lease.owner, (leased.get(lease.owner) ?? new Set()).add(cidr));
  }
  const clusters = state.clusterCidrs.map((text) => tryParseCidr(text)).filter((cidr): cidr is Cidr => cidr !== null);
  return { clusters, nodes, byName: new Map(nodes.map((n) => [n.name, n])), nodeOfInstance, instanceOfInterface, leased };
}

/** The node a route sends traffic to: by its interface (the instance it is attached to), else by its instance. */
function targetNode(route: ObservedRoute, truth: Truth): string | undefined {
  const instance = route.networkInterfaceId !== undefined ? truth.instanceOfInterface.get(route.networkInterfaceId) : route.instanceId;
  return instance === undefined ? undefined : truth.nodeOfInstance.get(instance);
}

/** True when the route is active and reaches the node's primary interface (named by id, or by its instance alone). */
function reaches(route: ObservedRoute, node: LiveNode, interfaces: ReadonlyMap<string, ObservedInterface>): boolean {
  if (route.state !== 'active' || node.instanceId === null) return false;
  const eni = interfaces.get(node.instanceId)?.networkInterfaceId;
  if (route.networkInterfaceId !== undefined) return eni !== undefined && route.networkInterfaceId === eni;
  return route.instanceId === node.instanceId;
}

const holds = (truth: Truth, name: string | undefined, cidr: string): boolean => name !== undefined && (truth.leased.get(name)?.has(cidr) ?? false);

/** Every number of the report that the cluster's state alone decides. */
export function countState(state: ObservedState): RouteCounts {
  const truth = truthOf(state);
  const { nodes } = truth;
  const inCluster = (cidr: Cidr) => truth.clusters.some((cluster) => overlaps(cluster, cidr));
  let routesExpected = 0;
  let routesProgrammed = 0;
  let wrongRoutes = 0;
  let routesToNonLeaseholder = 0;
  const judge = (cidr: string, name: string | undefined, right: boolean) => {
    if (!right) wrongRoutes += 1;
    if (name !== undefined && !holds(truth, name, cidr)) routesToNonLeaseholder += 1;
  };

  if (state.mode === 'routes') {
    for (const table of state.tables) {
      const byDestination = new Map<string, ObservedRoute>();
      for (const route of table.routes) {
        const destination = tryParseCidr(destinationOf(route));
        if (!destination || route.gatewayId !== undefined || !inCluster(destination)) continue;
        const cidr = formatCidr(destination);
        byDestination.set(cidr, route);
        const name = targetNode(route, truth);
        const node = name === undefined ? undefined : truth.byName.get(name);
        judge(cidr, name, node !== undefined && node.cidrs.some((c) => formatCidr(c) === cidr) && reaches(route, node, state.interfaces));
      }
      for (const node of nodes) {
        if (node.hostile) continue;
        for (const cidr of node.cidrs) {
          routesExpected += 1;
          const route = byDestination.get(formatCidr(cidr));
          if (route && reaches(route, node, state.interfaces)) routesProgrammed += 1;
        }
      }
    }
  } else {
    for (const [instanceId, eni] of state.interfaces) {
      const name = truth.nodeOfInstance.get(instanceId);
      const node = name === undefined ? undefined : truth.byName.get(name);
      for (const text of eni.prefixes) {
        const cidr = tryParseCidr(text);
        if (!cidr || !inCluster(cidr)) continue;
        judge(formatCidr(cidr), name, node !== undefined && node.cidrs.some((c) => formatCidr(c) === formatCidr(cidr)));
      }
    }
    for (const node of nodes) {
      if (node.hostile) continue;
      const delegated = new Set((node.instanceId === null ? [] : (state.interfaces.get(node.instanceId)?.prefixes ?? [])).map(canonical));
      for (const cidr of node.cidrs) {
        routesExpected += 1;
        if (delegated.has(formatCidr(cidr))) routesProgrammed += 1;
      }
    }
  }

  return {
    podCidrsOutsideSubnet: state.mode === 'prefixes' ? podCidrsOutsideSubnet(nodes, state.interfaces) : null,
    nodes: nodes.length,
    nodesReady: nodes.filter((node) => node.ready).length,
    hostileNodes: nodes.filter((node) => node.hostile).length,
    honestNodesNotReady: nodes.filter((node) => !node.hostile && !node.ready).length,
    readyNodesTainted: state.readyNodesTainted ?? 0,
    liveRoutesRemoved: state.liveRoutesRemoved ?? 0,
    routesExpected,
    routesProgrammed,
    duplicateCidrs: duplicatePairs(nodes),
    wrongRoutes,
    routesToNonLeaseholder,
    leakedCidrs: leakedLeases(nodes, state.leases).length,
  };
}

/** Overlapping pod CIDRs of two live nodes, one per pair of CIDRs. */
function duplicatePairs(nodes: readonly LiveNode[]): number {
  let duplicates = 0;
  for (let i = 0; i < nodes.length; i++) {
    for (let j = i + 1; j < nodes.length; j++) {
      const a = nodes[i];
      const b = nodes[j];
      if (!a || !b) continue;
      for (const x of a.cidrs) for (const y of b.cidrs) if (overlaps(x, y)) duplicates += 1;
    }
  }
  return duplicates;
}

/**
 * Nodes with a pod CIDR (inside the cluster CIDRs) that the subnet of their instance's primary
 * interface does not contain, of the family's block. A node whose instance is unknown (not running,
 * no interface) has no subnet to be outside of and is not counted.
 */
export function podCidrsOutsideSubnet(nodes: readonly LiveNode[], interfaces: ReadonlyMap<string, ObservedInterface>): number {
  let outside = 0;
  for (const node of nodes) {
    const subnet = node.instanceId === null ? undefined : interfaces.get(node.instanceId)?.subnet;
    if (!subnet) continue;
    const blocks = [tryParseCidr(subnet.cidrBlock), tryParseCidr(subnet.ipv6CidrBlock)].filter((c): c is Cidr => c !== null);
    if (node.cidrs.some((cidr) => !blocks.some((block) => containsCidr(block, cidr)))) outside += 1;
  }
  return outside;
}

/**
 * Leases that no live node holds: an owner that is no live node or has no such pod CIDR (a hostile
 * node's own claim does not count: a block leased under a claim of the whole cluster CIDR is
 * withheld from every other node), or no owner and no node with the CIDR.
 */
export function leakedLeases<T extends LeaseRecord>(nodes: readonly LiveNode[], leases: readonly T[]): T[] {
  const cidrsOf = new Map(nodes.map((node) => [node.name, new Set(node.cidrs.map(formatCidr))]));
  const held = new Set(nodes.flatMap((node) => node.cidrs.map(formatCidr)));
  return leases.filter((lease) => {
    const cidr = canonical(lease.cidr);
    if (cidr === null) return true;
    if (lease.owner !== null) return !(cidrsOf.get(lease.owner)?.has(cidr) ?? false);
    return !held.has(cidr);
  });
}

/** Nearest-rank percentile of a list of numbers; null for an empty list. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? null;
}

/** True when the cluster is where podroute should have brought it (the exit criterion of `npm start`). */
export function isConverged(
  report: Pick<SandboxReport, 'nodes' | 'nodesReady' | 'routesExpected' | 'routesProgrammed' | 'wrongRoutes' | 'duplicateCidrs' | 'leakedCidrs' | 'dlqMessages'> &
    Partial<
      Pick<SandboxReport, 'refusedNodesBroken' | 'departedLeftovers' | 'podCidrsOutsideSubnet' | 'honestNodesNotReady' | 'routesToNonLeaseholder' | 'readyNodesTainted' | 'liveRoutesRemoved'>
    >,
): boolean {
  return (
    (report.podCidrsOutsideSubnet ?? 0) === 0 &&
    (report.refusedNodesBroken ?? 0) === 0 &&
    (report.departedLeftovers ?? 0) === 0 &&
    (report.routesToNonLeaseholder ?? 0) === 0 &&
    (report.readyNodesTainted ?? 0) === 0 &&
    (report.liveRoutesRemoved ?? 0) === 0 &&
    (report.honestNodesNotReady ?? report.nodes - report.nodesReady) === 0 &&
    report.routesProgrammed === report.routesExpected &&
    report.wrongRoutes === 0 &&
    report.duplicateCidrs === 0 &&
    report.leakedCidrs === 0 &&
    report.dlqMessages === 0
  );
}
