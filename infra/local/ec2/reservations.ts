/**
 * Subnet CIDR reservations (Amazon VPC User Guide, "Subnet CIDR reservations"; EC2 API reference,
 * CreateSubnetCidrReservation / GetSubnetCidrReservations / DeleteSubnetCidrReservation):
 * - a reservation is an IPv4 or IPv6 range inside one subnet, of type `prefix` (EC2 assigns its
 *   addresses to interfaces as delegated prefixes) or `explicit` (EC2 never hands its addresses out on
 *   its own; the owner assigns them explicitly);
 * - a subnet may hold several; "When you reserve multiple CIDR ranges within the same VPC, the CIDR
 *   ranges cannot overlap" (an overlap is `InvalidParameterValue`, "Reservation CIDR ... has overlap
 *   with existing reserved CIDR block", as reported in hashicorp/terraform-provider-aws#45304);
 * - the range may include addresses already in use: creating it unassigns nothing, and deleting it
 *   does not unassign what is in use either.
 */
import { formatCidr, overlaps, tryParseCidr, containsCidr } from '../../../lib/cidr/cidr.ts';
import type { Cidr, Family } from '../../../lib/cidr/cidr.ts';
import type { SubnetRecord, Tag } from './state.ts';
import { Ec2ApiError } from './errors.ts';

export type ReservationType = 'prefix' | 'explicit';

export interface ReservationRecord {
  id: string;
  subnetId: string;
  /** Canonical CIDR. */
  cidr: string;
  family: Family;
  type: ReservationType;
  description: string | undefined;
  tags: Tag[];
}

/** The request's ReservationType: `prefix | explicit` (EC2 API reference, "Valid Values"). */
export function parseReservationType(text: string): ReservationType {
  if (text === 'prefix' || text === 'explicit') return text;
  throw new Ec2ApiError('InvalidParameterValue', `Value (${text}) for parameter reservationType is invalid. Valid values: prefix, explicit.`);
}

/**
 * The reservation's range, checked against the subnet and the VPC's other reservations. A CIDR with
 * host bits set is refused rather than rounded (the API reference asks for "the CIDR range to reserve").
 */
export function checkReservationCidr(text: string, subnet: SubnetRecord, vpcReservations: readonly ReservationRecord[]): Cidr {
  const cidr = tryParseCidr(text);
  if (!cidr || formatCidr(cidr) !== text) {
    throw new Ec2ApiError('InvalidParameterValue', `Value (${text}) for parameter cidr is invalid. This is not a valid CIDR block.`);
  }
  const blockText = cidr.family === 4 ? subnet.cidrBlock : subnet.ipv6CidrBlock;
  const block = blockText === undefined ? null : tryParseCidr(blockText);
  if (!block || !containsCidr(block, cidr)) {
    throw new Ec2ApiError('InvalidParameterValue', `Reservation CIDR ${text} is not within the CIDR block of subnet ${subnet.id}.`);
  }
  for (const other of vpcReservations) {
    const otherCidr = tryParseCidr(other.cidr);
    if (otherCidr && overlaps(otherCidr, cidr)) {
      throw new Ec2ApiError('InvalidParameterValue', `Reservation CIDR ${text} has overlap with existing reserved CIDR block`);
    }
  }
  return cidr;
}
