/**
 * What the sandbox reads from the stand-ins for its report: the EC2 emulator's view of each
 * running instance's primary interface (its id, delegated prefixes and subnet), and the checks on
 * nodes that left or whose delete was refused. Like report.ts, nothing here uses podroute's rules.
 */
import type { Ec2State } from '../ec2/index.ts';
import { liveNodes, readNode } from './report.ts';
import type { LeaseRecord, ObservedInterface, ObservedRoute } from './report.ts';
import type { SandboxMode } from './world.ts';

/** A node's pod CIDRs as the Kubernetes emulator stores it (none when it is no node). */
export function podCidrsOfStored(raw: unknown): string[] {
  return readNode(raw)?.podCidrs ?? [];
}

/** Each running instance's primary interface, with its delegated prefixes and subnet. */
export function interfacesOf(state: Ec2State): Map<string, ObservedInterface> {
  const interfaces = new Map<string, ObservedInterface>();
  for (const instance of state.instances.values()) {
    if (instance.state !== 'running') continue;
    const eni = state.primaryInterface(instance.id);
    if (!eni) continue;
    interfaces.set(instance.id, { networkInterfaceId: eni.id, prefixes: [...eni.ipv4Prefixes, ...eni.ipv6Prefixes], subnet: state.subnets.get(eni.subnetId) });
  }
  return interfaces;
}

/** True when the route is active and reaches the instance's primary interface (named by id, or by the instance alone). */
export function routesTo(route: ObservedRoute, instanceId: string, eni: string | undefined): boolean {
  if (route.state !== 'active') return false;
  return route.networkInterfaceId !== undefined ? route.networkInterfaceId === eni : route.instanceId === instanceId;
}

export interface LeaveFacts {
  mode: SandboxMode;
  clusterCidrs: readonly string[];
  routeTableIds: readonly string[];
  ec2: Ec2State;
  getNode(name: string): Record<string, unknown> | undefined;
  /** Nodes whose delete was refused, with their pod CIDRs then. */
  refused: ReadonlyMap<string, string[]>;
  /** Nodes really deleted, with their instance. */
  departed: ReadonlyMap<string, string | undefined>;
  /** The sandbox's record: the instance of each node it registered. */
  instanceOf(name: string): string | undefined;
  leases: readonly LeaseRecord[];
}

/**
 * Refused deletes: the node is still there with the pod CIDRs it had, Ready, and routed in every
 * cluster table (routes mode). Real deletes: no lease of the node and no route to its instance.
 */
export function checkLeaves(facts: LeaveFacts): { deletesRefused: number; refusedNodesBroken: number; departedLeftovers: number } {
  const { ec2, routeTableIds } = facts;
  const destination = (r: ObservedRoute) => r.destinationCidrBlock ?? r.destinationIpv6CidrBlock;
  let refusedNodesBroken = 0;
  for (const [name, cidrs] of facts.refused) {
    const node = facts.getNode(name);
    const live = node ? liveNodes([node], facts.clusterCidrs)[0] : undefined;
    const same = node !== undefined && JSON.stringify(podCidrsOfStored(node)) === JSON.stringify(cidrs) && cidrs.length > 0;
    const instanceId = facts.instanceOf(name);
    const eni = instanceId === undefined ? undefined : ec2.primaryInterface(instanceId)?.id;
    const routed =
      facts.mode !== 'routes' ||
      (instanceId !== undefined && routeTableIds.every((id) => cidrs.every((cidr) => ec2.routes(id).some((r) => destination(r) === cidr && routesTo(r, instanceId, eni)))));
    if (!same || !live?.ready || !routed) refusedNodesBroken += 1;
  }
  let departedLeftovers = 0;
  for (const [name, instanceId] of facts.departed) {
    const leased = facts.leases.some((lease) => lease.owner === name);
    const eni = instanceId === undefined ? undefined : ec2.primaryInterface(instanceId)?.id;
    const routed = instanceId !== undefined && routeTableIds.some((id) => ec2.routes(id).some((r) => r.instanceId === instanceId || (eni !== undefined && r.networkInterfaceId === eni)));
    if (facts.getNode(name) !== undefined || leased || routed) departedLeftovers += 1;
  }
  return { deletesRefused: facts.refused.size, refusedNodesBroken, departedLeftovers };
}

/**
 * Counts routes taken from a live honest node: an active route of one of its pod CIDRs, deleted or
 * replaced by another target while the node is stored with that pod CIDR. Hooked on the EC2
 * emulator (Ec2State.onRouteRemoved); a node that left, a blackhole, a hostile node's route and a
 * write another principal made on purpose (`byOperator`: a scenario's tampering) are not counted.
 */
export function watchLiveRouteRemovals(
  ec2: Ec2State,
  facts: { nodeOfInstance(instanceId: string): { name: string; hostile: boolean } | undefined; getNode(name: string): unknown; byOperator?(routeTableId: string, destination: string): boolean },
): () => number {
  let removed = 0;
  ec2.onRouteRemoved = (table, before) => {
    if (before.state !== 'active') return;
    if (facts.byOperator?.(table, before.destinationCidrBlock ?? before.destinationIpv6CidrBlock ?? '')) return;
    const instanceId = before.networkInterfaceId !== undefined ? ec2.networkInterfaces.get(before.networkInterfaceId)?.attachment?.instanceId : before.instanceId;
    const owner = instanceId === undefined ? undefined : facts.nodeOfInstance(instanceId);
    if (!owner || owner.hostile) return;
    const destination = before.destinationCidrBlock ?? before.destinationIpv6CidrBlock;
    const stored = readNode(facts.getNode(owner.name));
    if (stored && destination !== undefined && stored.podCidrs.includes(destination)) removed += 1;
  };
  return () => removed;
}
