/**
 * The sandbox's report: what the stand-ins hold, measured against what the live nodes need. Plain
 * functions over plain data (nodes as the Kubernetes emulator stores them, routes as the EC2
 * emulator describes them, leases as the CIDR sets list them), so every number can be recomputed
 * from the state alone. The field names of `SandboxReport` are a contract: `npm start --report`
 * writes them and other tools read them.
 */
import { containsCidr, formatCidr, overlaps, tryParseCidr } from '../../../lib/cidr/cidr.ts';
import type { Cidr } from '../../../lib/cidr/cidr.ts';
import type { Lease } from '../../../lib/ipam/index.ts';
import { instanceIdOf, networkUnavailableOf, nodeSchema, podCidrsOf } from '../../../lib/nodes/node.ts';
import type { Node } from '../../../lib/nodes/node.ts';
import { isResponsibleForRoute } from '../../../lib/routes/index.ts';

export interface SandboxReport {
  /** Live nodes. */
  nodes: number;
  /** Live nodes whose NetworkUnavailable condition is False. */
  nodesReady: number;
  /** Routes mode: (pod CIDR, cluster table) pairs the live nodes need. Prefixes mode: delegated prefixes they need. */
  routesExpected: number;
  /** Of those, how many exist and point at the node's instance (active). */
  routesProgrammed: number;
  /** Pod CIDRs of live nodes that overlap a pod CIDR of another live node (one per pair). */
  duplicateCidrs: number;
  /** CIDR leases that no live node holds. */
  leakedCidrs: number;
  /** Routes (or delegated prefixes) inside the cluster CIDRs that match no live node's pod CIDR and instance. */
  wrongRoutes: number;
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

export interface ObservedState {
  mode: 'routes' | 'prefixes';
  clusterCidrs: readonly string[];
  /** Nodes as the API server stores them (malformed ones are skipped). */
  nodes: readonly unknown[];
  /** The cluster's route tables. */
  tables: ReadonlyArray<{ id: string; routes: readonly ObservedRoute[] }>;
  /** Prefixes mode: prefixes delegated to each running instance's primary interface. */
  instancePrefixes: ReadonlyMap<string, readonly string[]>;
  /** Prefixes mode: the subnet of each running instance's primary interface. */
  instanceSubnets?: ReadonlyMap<string, SubnetBlocks>;
  leases: readonly Lease[];
}

/** A subnet's CIDR blocks, as the EC2 emulator holds them. */
export interface SubnetBlocks {
  cidrBlock: string;
  ipv6CidrBlock?: string | undefined;
}

export interface RouteCounts {
  podCidrsOutsideSubnet: number | null;
  nodes: number;
  nodesReady: number;
  routesExpected: number;
  routesProgrammed: number;
  duplicateCidrs: number;
  wrongRoutes: number;
  leakedCidrs: number;
}

export interface LiveNode {
  name: string;
  instanceId: string | null;
  ready: boolean;
  /** Canonical pod CIDRs inside the cluster CIDRs. */
  cidrs: Cidr[];
}

export function liveNodes(raw: readonly unknown[], clusterCidrs: readonly string[]): LiveNode[] {
  const clusters = clusterCidrs.map((text) => tryParseCidr(text)).filter((cidr): cidr is Cidr => cidr !== null);
  const out: LiveNode[] = [];
  for (const item of raw) {
    const parsed = nodeSchema.safeParse(item);
    if (!parsed.success) continue;
    const node: Node = parsed.data;
    const cidrs = podCidrsOf(node)
      .map((text) => tryParseCidr(text))
      .filter((cidr): cidr is Cidr => cidr !== null && clusters.some((cluster) => overlaps(cluster, cidr)));
    out.push({ name: node.metadata.name, instanceId: instanceIdOf(node), ready: networkUnavailableOf(node) === 'False', cidrs });
  }
  return out;
}

const destinationOf = (route: ObservedRoute): string | undefined => route.destinationCidrBlock ?? route.destinationIpv6CidrBlock;

/** Every number of the report that the cluster's state alone decides. */
export function countState(state: ObservedState): RouteCounts {
  const nodes = liveNodes(state.nodes, state.clusterCidrs);
  // Who should be where: canonical CIDR -> instance of the live node holding it.
  const wanted = new Map<string, string | null>();
  for (const node of nodes) for (const cidr of node.cidrs) wanted.set(formatCidr(cidr), node.instanceId);

  let routesExpected = 0;
  let routesProgrammed = 0;
  let wrongRoutes = 0;

  for (const table of state.tables) {
    const byDestination = new Map<string, ObservedRoute>();
    for (const route of table.routes) {
      const destination = tryParseCidr(destinationOf(route));
      if (destination) byDestination.set(formatCidr(destination), route);
      if (!destination || route.gatewayId === 'local') continue;
      if (!isResponsibleForRoute(formatCidr(destination), state.clusterCidrs)) continue;
      const instance = wanted.get(formatCidr(destination));
      const right = state.mode === 'routes' && instance !== undefined && instance !== null && route.state === 'active' && route.instanceId === instance;
      if (!right) wrongRoutes += 1;
    }
    if (state.mode !== 'routes') continue;
    for (const node of nodes) {
      for (const cidr of node.cidrs) {
        routesExpected += 1;
        const route = byDestination.get(formatCidr(cidr));
        if (route && node.instanceId !== null && route.state === 'active' && route.instanceId === node.instanceId) routesProgrammed += 1;
      }
    }
  }

  if (state.mode === 'prefixes') {
    for (const node of nodes) {
      const delegated = new Set(
        (node.instanceId === null ? [] : (state.instancePrefixes.get(node.instanceId) ?? []))
          .map((text) => tryParseCidr(text))
          .filter((cidr): cidr is Cidr => cidr !== null)
          .map(formatCidr),
      );
      for (const cidr of node.cidrs) {
        routesExpected += 1;
        if (delegated.has(formatCidr(cidr))) routesProgrammed += 1;
      }
    }
    for (const [instanceId, prefixes] of state.instancePrefixes) {
      for (const text of prefixes) {
        const cidr = tryParseCidr(text);
        if (!cidr || !isResponsibleForRoute(formatCidr(cidr), state.clusterCidrs)) continue;
        if (wanted.get(formatCidr(cidr)) !== instanceId) wrongRoutes += 1;
      }
    }
  }

  let duplicateCidrs = 0;
  for (let i = 0; i < nodes.length; i++) {
    for (let j = i + 1; j < nodes.length; j++) {
      const a = nodes[i];
      const b = nodes[j];
      if (!a || !b) continue;
      for (const x of a.cidrs) for (const y of b.cidrs) if (overlaps(x, y)) duplicateCidrs += 1;
    }
  }

  const leakedCidrs = leakedLeases(nodes, state.leases).length;

  return {
    podCidrsOutsideSubnet: state.mode === 'prefixes' ? podCidrsOutsideSubnet(nodes, state.instanceSubnets ?? new Map()) : null,
    nodes: nodes.length,
    nodesReady: nodes.filter((node) => node.ready).length,
    routesExpected,
    routesProgrammed,
    duplicateCidrs,
    wrongRoutes,
    leakedCidrs,
  };
}

/**
 * Nodes with a pod CIDR (inside the cluster CIDRs) that the subnet of their instance's primary
 * interface does not contain, of the family's block. A node whose instance is unknown (not running,
 * no interface) has no subnet to be outside of and is not counted.
 */
export function podCidrsOutsideSubnet(nodes: readonly LiveNode[], subnets: ReadonlyMap<string, SubnetBlocks>): number {
  let outside = 0;
  for (const node of nodes) {
    const subnet = node.instanceId === null ? undefined : subnets.get(node.instanceId);
    if (!subnet) continue;
    const blocks = [tryParseCidr(subnet.cidrBlock), tryParseCidr(subnet.ipv6CidrBlock)].filter((c): c is Cidr => c !== null);
    if (node.cidrs.some((cidr) => !blocks.some((block) => containsCidr(block, cidr)))) outside += 1;
  }
  return outside;
}

/** Leases that no live node holds: an owner that is no live node, or no owner and no node with the CIDR. */
export function leakedLeases(nodes: readonly LiveNode[], leases: readonly Lease[]): Lease[] {
  const liveNames = new Set(nodes.map((node) => node.name));
  const held = new Set(nodes.flatMap((node) => node.cidrs.map(formatCidr)));
  return leases.filter((lease) => {
    if (lease.owner !== null) return !liveNames.has(lease.owner);
    const cidr = tryParseCidr(lease.cidr);
    return cidr === null || !held.has(formatCidr(cidr));
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
    Partial<Pick<SandboxReport, 'refusedNodesBroken' | 'departedLeftovers' | 'podCidrsOutsideSubnet'>>,
): boolean {
  return (
    (report.podCidrsOutsideSubnet ?? 0) === 0 &&
    (report.refusedNodesBroken ?? 0) === 0 &&
    (report.departedLeftovers ?? 0) === 0 &&
    report.nodesReady === report.nodes &&
    report.routesProgrammed === report.routesExpected &&
    report.wrongRoutes === 0 &&
    report.duplicateCidrs === 0 &&
    report.leakedCidrs === 0 &&
    report.dlqMessages === 0
  );
}
