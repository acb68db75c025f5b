/**
 * Which subnet CIDR reservations a cluster needs before prefixes mode can work: one per subnet and
 * IP family, inside subnet ∩ cluster CIDR, of the type the node-sync mode needs (RESERVATION_TYPE).
 * A pure function of the subnets (as DescribeSubnets shows them), the cluster CIDRs and the share of
 * each subnet that may go to pods. Reservations never overlap, because a VPC's subnets never do.
 */
import { type Cidr, type Family, addressBits, blockAt, blockCount, containsCidr, formatCidr, lastAddress } from '../../cidr/cidr.ts';
import { InvalidInputError } from '../../errors.ts';
import type { Subnet } from './describe-subnets.ts';

/** The prefix sizes EC2 delegates to an interface (EC2 User Guide, "Prefix delegation ...", Basics). */
export const DELEGATED_PREFIX: Record<Family, number> = { 4: 28, 6: 80 };

/**
 * The description the printed commands give a reservation. podroute takes as its own only the
 * reservations of a node's subnet whose description is its PREFIX_RESERVATION_DESCRIPTION setting
 * (default this same text; lib/dataplane/prefixes/pod-ranges.ts), so a VPC CNI reservation beside it is
 * never taken.
 */
export const PODROUTE_RESERVATION_DESCRIPTION = 'podroute';

export type ReservationType = 'explicit' | 'prefix';
export type NodeSyncMode = 'SyncFromCluster' | 'SyncFromCloud';

/**
 * The reservation type a node-sync mode needs (Amazon VPC User Guide, "Subnet CIDR reservations";
 * EC2 User Guide, "Manage prefixes for your network interfaces"): SyncFromCloud lets EC2 pick the
 * prefix (Ipv4PrefixCount/Ipv6PrefixCount), and EC2 picks from a `prefix` reservation only;
 * SyncFromCluster names the exact prefix, and an `explicit` reservation keeps EC2's own automatic
 * picks (the VPC CNI's prefix delegation among them) out of podroute's range.
 */
export const RESERVATION_TYPE: Record<NodeSyncMode, ReservationType> = { SyncFromCluster: 'explicit', SyncFromCloud: 'prefix' };

/** Default share of a subnet's addresses that may be reserved for pods. */
export const DEFAULT_POD_SHARE = 0.5;

/** Addresses AWS keeps in every subnet CIDR block (Amazon VPC User Guide, "Subnet CIDR blocks"). */
const SUBNET_RESERVED_ADDRESSES = 5n;

interface Reservation {
  readonly subnetId: string;
  readonly availabilityZone: string | null;
  readonly family: Family;
  readonly subnetCidr: string;
  /** The CIDR to reserve, type `prefix`. */
  readonly cidr: string;
  /** How many node prefixes (/28 or /80) it holds. */
  readonly prefixes: number;
  /** Its share of the subnet's addresses (a power of two: 0.5, 0.25, ...). */
  readonly share: number;
}

export interface ReservationPlan {
  readonly reservations: Reservation[];
  /** Things the operator should know that do not stop the plan (one sentence each). */
  readonly warnings: string[];
}

interface PlanReservationsInput {
  subnets: readonly Subnet[];
  /** One IPv4 and/or one IPv6 CIDR, already checked. */
  clusterCidrs: readonly Cidr[];
  /** 0 < podShare < 1: at most this share of each subnet's addresses is reserved. */
  podShare?: number;
}

/** A subnet that cannot hold a reservation: the plan as a whole fails with its reason. */
class ReservationPlanError extends InvalidInputError {
  override name = 'ReservationPlanError';
  constructor(
    readonly subnetId: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** Why `share` cannot be a pod share, or null. */
export function podShareProblem(share: number): string | null {
  if (!Number.isFinite(share) || share <= 0 || share >= 1) return `must be a number above 0 and below 1, not ${String(share)}`;
  return null;
}

export function planReservations(input: PlanReservationsInput): ReservationPlan {
  const podShare = input.podShare ?? DEFAULT_POD_SHARE;
  const problem = podShareProblem(podShare);
  if (problem !== null) throw new InvalidInputError(`pod share ${problem}`);
  if (input.subnets.length === 0) throw new InvalidInputError('no subnets: the DescribeSubnets result lists none');
  const subnets = [...input.subnets].sort((a, b) => (a.subnetId < b.subnetId ? -1 : a.subnetId > b.subnetId ? 1 : 0));
  const clusterCidrs = [...input.clusterCidrs].sort((a, b) => a.family - b.family);
  const reservations: Reservation[] = [];
  const warnings: string[] = [];
  const failures: ReservationPlanError[] = [];
  for (const subnet of subnets) {
    for (const cluster of clusterCidrs) {
      try {
        const reservation = reservationFor(subnet, cluster, podShare);
        reservations.push(reservation.value);
        if (reservation.warning !== null) warnings.push(reservation.warning);
      } catch (error) {
        if (!(error instanceof ReservationPlanError)) throw error;
        failures.push(error);
      }
    }
  }
  const first = failures[0];
  if (first !== undefined) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more problem${failures.length > 2 ? 's' : ''})` : '';
    throw new ReservationPlanError(first.subnetId, `${first.message}${more}`, { cause: failures.length > 1 ? new AggregateError(failures) : first });
  }
  return { reservations, warnings };
}

function reservationFor(subnet: Subnet, cluster: Cidr, podShare: number): { value: Reservation; warning: string | null } {
  const family = cluster.family;
  const name = `subnet ${subnet.subnetId}`;
  const clusterText = formatCidr(cluster);
  const blocks = family === 4 ? (subnet.ipv4 ? [subnet.ipv4] : []) : subnet.ipv6;
  if (blocks.length === 0) {
    throw new ReservationPlanError(subnet.subnetId, `${name} has no ${family === 4 ? 'IPv4' : 'associated IPv6'} CIDR block, so it cannot hold pods of cluster CIDR ${clusterText}`);
  }
  const reasons: string[] = [];
  for (const subnetCidr of blocks) {
    const found = blockIn(subnetCidr, cluster, podShare);
    if (typeof found === 'string') {
      reasons.push(found);
      continue;
    }
    return {
      value: {
        subnetId: subnet.subnetId,
        availabilityZone: subnet.availabilityZone,
        family,
        subnetCidr: formatCidr(subnetCidr),
        cidr: formatCidr(found),
        prefixes: Number(blockCount(found, DELEGATED_PREFIX[family])),
        share: 2 ** (subnetCidr.prefix - found.prefix),
      },
      warning: family === 4 ? inUseWarning(subnet, subnetCidr, found) : null,
    };
  }
  throw new ReservationPlanError(subnet.subnetId, `${name} cannot hold a /${DELEGATED_PREFIX[family]} reservation: ${reasons.join('; ')}`);
}

/**
 * The block picked inside `subnetCidr` ∩ `cluster`, or why there is none:
 * 1. inside the subnet: EC2 delegates a prefix only from the interface's own subnet (EC2 User Guide,
 *    "Prefix delegation for Amazon EC2 network interfaces");
 * 2. one CIDR (CreateSubnetCidrReservation takes one `Cidr`, EC2 API Reference) no larger than
 *    `podShare` of the subnet, the rest left for EC2's own addresses ("Subnet CIDR reservations");
 * 3. at least one delegable prefix (DELEGATED_PREFIX);
 * 4. not the subnet's first or last block, which hold the five addresses AWS keeps ("Subnet CIDR blocks");
 * 5. of those, the largest, then the highest in the subnet.
 */
function blockIn(subnetCidr: Cidr, cluster: Cidr, podShare: number): Cidr | string {
  const family = subnetCidr.family;
  const delegated = DELEGATED_PREFIX[family];
  const subnetText = formatCidr(subnetCidr);
  // Two CIDRs overlap only when one holds the other; their intersection is the smaller one.
  const inside = containsCidr(cluster, subnetCidr) ? subnetCidr : containsCidr(subnetCidr, cluster) ? cluster : null;
  if (inside === null) return `${subnetText} does not overlap the cluster CIDR ${formatCidr(cluster)}`;
  if (inside.prefix > delegated) return `${subnetText} ∩ cluster CIDR is ${formatCidr(inside)}, smaller than one /${delegated} prefix`;
  // Largest 2^k <= podShare * 2^hostBits: k = hostBits + floor(log2(podShare)).
  const longest = subnetCidr.prefix - Math.floor(Math.log2(podShare));
  if (longest > delegated) {
    return `a pod share of ${podShare} of ${subnetText} is less than one /${delegated} prefix`;
  }
  const subnetLast = lastAddress(subnetCidr);
  for (let prefix = Math.max(longest, inside.prefix); prefix <= delegated; prefix++) {
    const count = blockCount(inside, prefix);
    // Only the first and the last block of the subnet hold reserved addresses, so the highest
    // acceptable block is among the last three.
    for (let index = count - 1n; index >= 0n && index >= count - 3n; index--) {
      const block = blockAt(inside, prefix, index);
      if (block.network !== subnetCidr.network && lastAddress(block) !== subnetLast) return block;
    }
  }
  return `no /${delegated} inside ${formatCidr(inside)} avoids the subnet's first four and last addresses, which AWS keeps`;
}

/**
 * EC2 does not take back addresses in use when a reservation is created (Amazon VPC User Guide,
 * "Subnet CIDR reservations"). From DescribeSubnets' free-address count alone we know some are
 * inside the block when more are in use than fit outside it.
 */
function inUseWarning(subnet: Subnet, subnetCidr: Cidr, block: Cidr): string | null {
  if (subnet.availableIpAddressCount === null) return null;
  const size = (cidr: Cidr): bigint => 1n << BigInt(addressBits(cidr.family) - cidr.prefix);
  const usable = size(subnetCidr) - SUBNET_RESERVED_ADDRESSES;
  const inUse = usable - BigInt(subnet.availableIpAddressCount);
  const outside = usable - size(block);
  if (inUse <= outside) return null;
  return `subnet ${subnet.subnetId}: ${inUse} of its addresses are in use and only ${outside} lie outside ${formatCidr(block)}, so at least ${inUse - outside} in-use addresses sit inside the reservation; prefixes holding them cannot be delegated until those addresses are freed`;
}
