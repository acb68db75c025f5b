/**
 * What the sandbox reads from the stand-ins for its report: the EC2 emulator's view of each
 * running instance (prefixes and subnet of its primary interface), and the checks on nodes that
 * left or whose delete was refused.
 */
import type { Lease } from '../../../lib/ipam/index.ts';
import { nodeSchema, podCidrsOf } from '../../../lib/nodes/node.ts';
import type { Ec2State } from '../ec2/index.ts';
import { liveNodes } from './report.ts';
import type { SubnetBlocks } from './report.ts';
import type { SandboxMode } from './world.ts';

/** A node's pod CIDRs as the Kubernetes emulator stores it (none when it is no valid Node). */
export function podCidrsOfStored(raw: unknown): string[] {
  const parsed = nodeSchema.safeParse(raw);
  return parsed.success ? podCidrsOf(parsed.data) : [];
}

/** Prefixes mode: each running instance's delegated prefixes and subnet, from its primary interface. */
export function instanceView(state: Ec2State, mode: SandboxMode): { instancePrefixes: Map<string, string[]>; instanceSubnets: Map<string, SubnetBlocks> } {
  const instancePrefixes = new Map<string, string[]>();
  const instanceSubnets = new Map<string, SubnetBlocks>();
  if (mode !== 'prefixes') return { instancePrefixes, instanceSubnets };
  for (const instance of state.instances.values()) {
    if (instance.state !== 'running') continue;
    const eni = state.primaryInterface(instance.id);
    if (!eni) continue;
    instancePrefixes.set(instance.id, [...eni.ipv4Prefixes, ...eni.ipv6Prefixes]);
    const subnet = state.subnets.get(eni.subnetId);
    if (subnet) instanceSubnets.set(instance.id, subnet);
  }
  return { instancePrefixes, instanceSubnets };
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
  leases: readonly Lease[];
}

/**
 * Refused deletes: the node is still there with the pod CIDRs it had, Ready, and routed in every
 * cluster table (routes mode). Real deletes: no lease of the node and no route to its instance.
 */
export function checkLeaves(facts: LeaveFacts): { deletesRefused: number; refusedNodesBroken: number; departedLeftovers: number } {
  const { ec2, routeTableIds } = facts;
  let refusedNodesBroken = 0;
  for (const [name, cidrs] of facts.refused) {
    const node = facts.getNode(name);
    const live = node ? liveNodes([node], facts.clusterCidrs)[0] : undefined;
    const same = node !== undefined && JSON.stringify(podCidrsOfStored(node)) === JSON.stringify(cidrs) && cidrs.length > 0;
    const routed =
      facts.mode !== 'routes' ||
      (live !== undefined &&
        routeTableIds.every((id) =>
          cidrs.every((cidr) => ec2.routes(id).some((r) => (r.destinationCidrBlock ?? r.destinationIpv6CidrBlock) === cidr && r.state === 'active' && r.instanceId === live.instanceId)),
        ));
    if (!same || !live?.ready || !routed) refusedNodesBroken += 1;
  }
  let departedLeftovers = 0;
  for (const [name, instanceId] of facts.departed) {
    const leased = facts.leases.some((lease) => lease.owner === name);
    const routed = instanceId !== undefined && routeTableIds.some((id) => ec2.routes(id).some((r) => r.instanceId === instanceId));
    if (facts.getNode(name) !== undefined || leased || routed) departedLeftovers += 1;
  }
  return { deletesRefused: facts.refused.size, refusedNodesBroken, departedLeftovers };
}
