/**
 * MemorySubnets: the Subnets port (lib/usecases/ports.ts) in memory, as Ec2Subnets answers EC2:
 * the subnets asked for (unknown ids absent), each with its IPv4 block, its associated IPv6 block
 * and its CIDR reservations of both families. Answers are copies.
 */
import { formatCidr, tryParseCidr } from '../../lib/cidr/cidr.ts';
import type { Subnet, SubnetReservation, Subnets } from '../../lib/usecases/ports.ts';

const canonical = (text: string): string => {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new Error(`bad CIDR ${text}`);
  return formatCidr(cidr);
};

export class MemorySubnets implements Subnets {
  private readonly subnets = new Map<string, Subnet>();
  private next = 0;
  /** `describeSubnets <count>` per call. */
  readonly calls: string[] = [];

  /** A subnet with its blocks (IPv4 first, then IPv6). */
  addSubnet(input: { id?: string; cidrs: readonly string[]; availabilityZone?: string }): Subnet {
    this.next += 1;
    const subnetId = input.id ?? `subnet-${this.next.toString(16).padStart(17, '0')}`;
    const subnet: Subnet = { subnetId, availabilityZone: input.availabilityZone ?? 'us-east-1a', cidrs: input.cidrs.map(canonical), reservations: [] };
    this.subnets.set(subnetId, subnet);
    return structuredClone(subnet);
  }

  /** A subnet CIDR reservation (CreateSubnetCidrReservation); `description` absent as EC2 leaves it. */
  addReservation(subnetId: string, input: { cidr: string; type: SubnetReservation['type']; description?: string }): SubnetReservation {
    const subnet = this.subnet(subnetId);
    this.next += 1;
    const reservation: SubnetReservation = { reservationId: `scr-${this.next.toString(16).padStart(17, '0')}`, cidr: canonical(input.cidr), type: input.type, description: input.description };
    subnet.reservations.push(reservation);
    return { ...reservation };
  }

  /** The stored subnet (not a copy), for the prefixes fake that delegates inside it. */
  subnet(subnetId: string): Subnet {
    const subnet = this.subnets.get(subnetId);
    if (!subnet) throw new Error(`no subnet ${subnetId}`);
    return subnet;
  }

  has(subnetId: string): boolean {
    return this.subnets.has(subnetId);
  }

  async describeSubnets(subnetIds: readonly string[]): Promise<Map<string, Subnet>> {
    this.calls.push(`describeSubnets ${subnetIds.length}`);
    const found = new Map<string, Subnet>();
    for (const id of new Set(subnetIds)) {
      const subnet = this.subnets.get(id);
      if (subnet) found.set(id, structuredClone(subnet));
    }
    return found;
  }
}
