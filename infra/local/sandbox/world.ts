/**
 * The sandbox's EC2 world: a VPC, its subnets (with their CIDR reservations in prefixes mode), an
 * internet gateway, the cluster's tagged route tables and one table of someone else; and the cluster
 * CIDRs that go with it.
 *
 * - routes mode: one /18 node subnet; pod CIDRs outside the VPC (100.64.0.0/10, as EKS custom
 *   networking uses), routed to the nodes by the route tables.
 * - prefixes mode, one subnet (`subnets` unset): the /16 subnet of earlier versions, its upper half
 *   kept for pod prefixes by an `explicit` reservation (EC2 hands instance addresses out anywhere
 *   else in it: Amazon VPC User Guide, "Subnet CIDR reservations").
 * - prefixes mode, `subnets` K: K subnets in K zones (us-east-1a, b, ... cycling over the Region's
 *   six), the VPC's /16 split evenly (a power of two of equal subnets), each with its own IPv6 /64
 *   (Amazon VPC User Guide, "IPv6 subnet sizing": an IPv6 subnet is a /64). In each, a `prefix`
 *   reservation holds its upper half (IPv4) and the upper half of its /64 (IPv6, dual-stack only);
 *   instance addresses land anywhere else. The cluster CIDRs are the VPC's blocks, so every
 *   reservation lies inside them; a prefix delegated to an interface must lie in that interface's
 *   subnet (Amazon EC2 User Guide, "Assign prefixes to network interfaces").
 */
import { formatCidr, parseCidr } from '../../../lib/cidr/cidr.ts';
import { clusterTagKey } from '../../../lib/routes/index.ts';
import { DEFAULT_MUTATING, DEFAULT_NON_MUTATING } from '../ec2/index.ts';
import type { Ec2State, SubnetRecord, ThrottleOptions } from '../ec2/index.ts';

export type SandboxMode = 'routes' | 'prefixes';

export interface ClusterCidrs {
  v4: string;
  v6: string;
  mask4: number;
  mask6: number;
}

export const VPC_V4 = '10.0.0.0/16';
export const VPC_V6 = '2600:1f18:1234:5600::/56';
/** us-east-1's six zones. */
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d', 'us-east-1e', 'us-east-1f'];
/** The most subnets the prefixes world splits its /16 into (each then a /20). */
export const MAX_SUBNETS = 16;

const CLUSTER_CIDRS: Record<SandboxMode | 'prefixesPerSubnet', ClusterCidrs> = {
  // 100.64.0.0/10: 16,384 node blocks, room for the benchmarks' clusters.
  routes: { v4: '100.64.0.0/10', v6: 'fd00:10:244::/56', mask4: 24, mask6: 64 },
  prefixes: { v4: '10.0.128.0/17', v6: '2600:1f18:1234:5600::/64', mask4: 28, mask6: 80 },
  prefixesPerSubnet: { v4: VPC_V4, v6: VPC_V6, mask4: 28, mask6: 80 },
};

export interface WorldOptions {
  mode: SandboxMode;
  dualStack: boolean;
  /** Prefixes mode only: subnets in as many zones; unset = the one-subnet world. */
  subnets?: number | undefined;
  routeTables: number;
  clusterName: string;
  /** Routes mode only: the IPv4 cluster CIDR instead of 100.64.0.0/10 (outside the VPC, /24 blocks). */
  clusterCidr?: string | undefined;
}

export interface World {
  vpcId: string;
  /** Subnets nodes are spread over, in order. */
  subnets: SubnetRecord[];
  routeTableIds: string[];
  cluster: ClusterCidrs;
}

/** The cluster CIDRs of a world, without building it. */
export function clusterCidrsFor(mode: SandboxMode, subnets: number | undefined): ClusterCidrs {
  if (mode === 'prefixes' && subnets !== undefined) return CLUSTER_CIDRS.prefixesPerSubnet;
  return CLUSTER_CIDRS[mode];
}

export function buildWorld(state: Ec2State, options: WorldOptions): World {
  const { mode, dualStack } = options;
  if (options.clusterCidr !== undefined && mode !== 'routes') throw new RangeError('clusterCidr: only in routes mode (prefixes mode takes its pod ranges from the subnets)');
  if (options.subnets !== undefined && (mode !== 'prefixes' || !Number.isInteger(options.subnets) || options.subnets < 1 || options.subnets > MAX_SUBNETS)) {
    throw new RangeError(`subnets ${options.subnets}: want a whole number from 1 to ${MAX_SUBNETS}, in prefixes mode`);
  }
  const vpc = state.addVpc({ cidrBlock: VPC_V4, ...(dualStack ? { ipv6CidrBlock: VPC_V6 } : {}) });
  const subnets: SubnetRecord[] = [];
  if (mode === 'routes') {
    subnets.push(state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.0.0/18', ...(dualStack ? { ipv6CidrBlock: '2600:1f18:1234:5600::/64' } : {}) }));
  } else if (options.subnets === undefined) {
    const subnet = state.addSubnet({ vpcId: vpc.id, cidrBlock: VPC_V4, ...(dualStack ? { ipv6CidrBlock: '2600:1f18:1234:5600::/64' } : {}) });
    // Description `podroute`: what marks a reservation as podroute's (lib/dataplane/prefixes/pod-ranges.ts).
    state.createReservation({ subnetId: subnet.id, cidr: CLUSTER_CIDRS.prefixes.v4, type: 'explicit', description: 'podroute' });
    if (dualStack) state.createReservation({ subnetId: subnet.id, cidr: '2600:1f18:1234:5600:8000::/65', type: 'explicit', description: 'podroute' });
    subnets.push(subnet);
  } else {
    const count = options.subnets;
    const bits = Math.ceil(Math.log2(count));
    const v4 = parseCidr(VPC_V4);
    const v6 = parseCidr(VPC_V6);
    const prefix = v4.prefix + bits;
    for (let i = 0; i < count; i++) {
      const network = v4.network + (BigInt(i) << BigInt(32 - prefix));
      const cidrBlock = formatCidr({ family: 4, prefix, network });
      const ipv6 = { family: 6 as const, prefix: 64, network: v6.network + (BigInt(i) << 64n) };
      const subnet = state.addSubnet({
        vpcId: vpc.id,
        cidrBlock,
        ...(dualStack ? { ipv6CidrBlock: formatCidr(ipv6) } : {}),
        availabilityZone: ZONES[i % ZONES.length] ?? 'us-east-1a',
        tags: { Name: `${options.clusterName}-nodes-${i + 1}` },
      });
      const upper4 = { family: 4 as const, prefix: prefix + 1, network: network + (1n << BigInt(32 - prefix - 1)) };
      state.createReservation({ subnetId: subnet.id, cidr: formatCidr(upper4), type: 'prefix', description: 'podroute' });
      if (dualStack) {
        const upper6 = { family: 6 as const, prefix: 65, network: ipv6.network + (1n << 63n) };
        state.createReservation({ subnetId: subnet.id, cidr: formatCidr(upper6), type: 'prefix', description: 'podroute' });
      }
      subnets.push(subnet);
    }
  }
  const gateway = state.addGateway();
  const tagKey = clusterTagKey(options.clusterName);
  const routeTableIds: string[] = [];
  for (let i = 0; i < options.routeTables; i++) {
    const table = state.addRouteTable({ vpcId: vpc.id, tags: { [tagKey]: 'owned', Name: `${options.clusterName}-${i + 1}` } });
    state.addRoute({ routeTableId: table.id, destinationCidr: '0.0.0.0/0', gatewayId: gateway });
    routeTableIds.push(table.id);
  }
  // Someone else's table in the same VPC: podroute must never touch it.
  state.addRouteTable({ vpcId: vpc.id, tags: { Name: 'not-the-cluster' } });
  const cluster = clusterCidrsFor(mode, options.subnets);
  return { vpcId: vpc.id, subnets, routeTableIds, cluster: options.clusterCidr === undefined ? cluster : { ...cluster, v4: options.clusterCidr } };
}

/**
 * Instance addresses the world's subnets hold, for a check before a run: in prefixes mode with
 * subnets, each subnet's lower half less its first four addresses.
 */
export function instanceCapacity(mode: SandboxMode, subnets: number | undefined): number {
  if (mode === 'routes') return 2 ** 14 - 5;
  if (subnets === undefined) return 2 ** 15 - 5;
  const prefix = 16 + Math.ceil(Math.log2(subnets));
  return subnets * (2 ** (32 - prefix - 1) - 4);
}

/** EC2's default token buckets, refilled `timeScale` times faster (bursts unchanged). */
export function scaledThrottle(timeScale: number): ThrottleOptions {
  return {
    mutating: { capacity: DEFAULT_MUTATING.capacity, refillPerSecond: DEFAULT_MUTATING.refillPerSecond * timeScale },
    nonMutating: { capacity: DEFAULT_NON_MUTATING.capacity, refillPerSecond: DEFAULT_NON_MUTATING.refillPerSecond * timeScale },
  };
}
