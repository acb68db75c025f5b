/**
 * Prefixes mode's placement, pure: which reservations of a subnet are podroute's pod ranges, where a
 * node's pod CIDRs come from, and what to tell the operator when its subnet has none. A prefix comes
 * from the interface's subnet (EC2 User Guide, "Assign prefixes to Amazon EC2 network interfaces"),
 * from a reservation whose Description is PREFIX_RESERVATION_DESCRIPTION (overlap alone is not
 * enough: the VPC CNI may hold some too), cut to a cluster CIDR; each such pod range is one CIDR set.
 */
import { containsCidr, formatCidr, intersection, tryParseCidr } from '../../cidr/cidr.ts';
import type { Cidr, Family } from '../../cidr/cidr.ts';
import type { Config } from '../../config.ts';
import { instanceIdOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import type { NodeInterface, Subnet, SubnetReservation } from '../../usecases/ports.ts';
import { DELEGATED_PREFIX, PODROUTE_RESERVATION_DESCRIPTION, RESERVATION_TYPE } from './reservation-plan.ts';

export type PrefixConfig = Pick<Config, 'clusterCidrs' | 'nodeSyncMode'> & Partial<Pick<Config, 'nodeSelector' | 'prefixReservationDescription'>>;

/** What one run read from EC2: the nodes' primary interfaces and their subnets. */
export interface PrefixWorld {
  interfaces: Map<string, NodeInterface>;
  subnets: Map<string, Subnet>;
}

/** A podroute reservation cut to the cluster CIDR it overlaps. */
export interface PodRange {
  range: string;
  family: Family;
  clusterCidr: string;
  reservation: SubnetReservation;
}

export type Placement =
  | { kind: 'unlisted'; message: string }
  | { kind: 'no-reservation'; subnet: Subnet; message: string }
  | { kind: 'placed'; eni: NodeInterface; subnet: Subnet; ranges: PodRange[] };

/**
 * SyncFromCloud: EC2 picks an automatic prefix from any of the subnet's `prefix` reservations, at
 * random among them (Amazon VPC User Guide, "Subnet CIDR reservations"). With another owner's
 * prefix reservation in the subnet (the VPC CNI's), podroute's count-of-one could land there (a
 * prefix podroute cannot adopt: one leaked per try) and the CNI's picks could land in podroute's.
 * So such a subnet is refused: podroute's prefix reservations must be the subnet's only ones.
 */
export function foreignPrefixReservations(subnet: Subnet, config: Pick<PrefixConfig, 'prefixReservationDescription'>): SubnetReservation[] {
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  return subnet.reservations.filter((r) => r.type === 'prefix' && r.description !== mark);
}


/** Pure: podroute's pod ranges in a subnet, in cluster CIDR order, then by range (none narrower than a delegated prefix). */
export function podRanges(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): PodRange[] {
  return podroutesCuts(subnet, config).filter((r) => !undersized(r));
}

/** Pure: podroute's reservations of a subnet whose cut to a cluster CIDR is too small for one delegated prefix. */
export function undersizedRanges(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): PodRange[] {
  return podroutesCuts(subnet, config).filter(undersized);
}

function undersized(r: PodRange): boolean {
  const cidr = tryParseCidr(r.range);
  return cidr === null || cidr.prefix > DELEGATED_PREFIX[cidr.family];
}

function podroutesCuts(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): PodRange[] {
  const found: PodRange[] = [];
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  for (const clusterText of config.clusterCidrs) {
    const cluster = tryParseCidr(clusterText);
    if (!cluster) continue;
    const inCluster: PodRange[] = [];
    for (const reservation of subnet.reservations) {
      if (reservation.description !== mark) continue;
      const cidr = tryParseCidr(reservation.cidr);
      const cut = cidr ? intersection(cluster, cidr) : null;
      if (cut) inCluster.push({ range: formatCidr(cut), family: cut.family, clusterCidr: formatCidr(cluster), reservation });
    }
    found.push(...inCluster.sort((a, b) => a.range.localeCompare(b.range)));
  }
  return found;
}

/** One line about reservations skipped as too small (empty when none). */
function undersizedNote(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): string {
  return undersizedRanges(subnet, config)
    .map((r) => `; reservation ${r.reservation.reservationId} (${r.reservation.cidr}) is skipped: its pod range ${r.range} is smaller than the /${DELEGATED_PREFIX[r.family]} prefix EC2 delegates`)
    .join('');
}

/**
 * Pure: where a node's pod CIDRs come from (one pod range per cluster CIDR), or why nowhere.
 * Exported for its test (test/usecases/prefix-mode.test.ts).
 */
export function placeNode(node: Node, world: PrefixWorld, config: PrefixConfig): Placement {
  const instanceId = instanceIdOf(node);
  const eni = instanceId ? world.interfaces.get(instanceId) : undefined;
  if (!instanceId || !eni) return { kind: 'unlisted', message: `EC2 does not list instance ${instanceId ?? '(none)'} of node ${node.metadata.name} (yet)` };
  const subnet = world.subnets.get(eni.subnetId);
  if (!subnet) return { kind: 'unlisted', message: `EC2 does not list subnet ${eni.subnetId} of node ${node.metadata.name} (yet)` };
  const all = podRanges(subnet, config);
  const held = [...podCidrsOf(node), ...eni.prefixes].flatMap((text) => tryParseCidr(text) ?? []);
  const chosen: PodRange[] = [];
  const missing: string[] = [];
  for (const clusterText of config.clusterCidrs) {
    const cluster = tryParseCidr(clusterText);
    const candidates = all.filter((r) => cluster !== null && r.clusterCidr === formatCidr(cluster));
    // The range that already holds the node's pod CIDR (or a prefix of it) first; else the first.
    const pick = candidates.find((r) => held.some((c) => inside(c, r.range))) ?? candidates[0];
    if (pick) chosen.push(pick);
    else missing.push(clusterText);
  }
  if (missing.length > 0) return { kind: 'no-reservation', subnet, message: noReservationMessage(subnet, missing, config) };
  return { kind: 'placed', eni, subnet, ranges: chosen };
}

/**
 * What to tell the operator about a subnet without a pod range (an Event message: one line).
 * Exported for its table-driven test (test/usecases/prefix-mode.test.ts).
 */
export function noReservationMessage(subnet: Subnet, clusterCidrs: readonly string[], config: Pick<PrefixConfig, 'nodeSyncMode' | 'prefixReservationDescription'>): string {
  // SyncFromCloud lets EC2 pick, which only a `prefix` reservation serves; SyncFromCluster names
  // its prefixes, and an `explicit` one keeps EC2's automatic picks (the VPC CNI's) out of it.
  const type = RESERVATION_TYPE[config.nodeSyncMode];
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  const parts = clusterCidrs.map((clusterText) => {
    const cluster = tryParseCidr(clusterText);
    const room = subnet.cidrs.flatMap((text) => {
      const cidr = tryParseCidr(text);
      const cut = cidr && cluster ? intersection(cluster, cidr) : null;
      return cut ? [formatCidr(cut)] : [];
    });
    return room.length > 0
      ? `aws ec2 create-subnet-cidr-reservation --subnet-id ${subnet.subnetId} --reservation-type ${type} --description ${mark} --cidr <a range inside ${room.join(' or ')}>`
      : `none can be made for cluster CIDR ${clusterText}: the subnet's blocks (${subnet.cidrs.join(', ')}) do not overlap it`;
  });
  const skipped = undersizedNote(subnet, { ...config, clusterCidrs: [...clusterCidrs] });
  return `subnet ${subnet.subnetId}${subnet.availabilityZone ? ` (${subnet.availabilityZone})` : ''} has no podroute subnet CIDR reservation (Description ${mark}) inside cluster CIDR(s) ${clusterCidrs.join(', ')}, so this node gets no pod CIDR: ${parts.join('; ')}${skipped}`;
}


export function inside(cidr: Cidr | null, rangeText: string): boolean {
  const range = tryParseCidr(rangeText);
  return cidr !== null && range !== null && containsCidr(range, cidr);
}
