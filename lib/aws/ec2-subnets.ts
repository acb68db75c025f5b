/**
 * Subnets and their CIDR reservations, for prefixes mode: where a node's pod CIDRs may come from.
 * Read once per run for the subnets of the nodes at hand (one DescribeSubnets per page, one
 * GetSubnetCidrReservations per subnet and page), never per node.
 */
import { DescribeSubnetsCommand, GetSubnetCidrReservationsCommand } from '@aws-sdk/client-ec2';
import type { DescribeSubnetsCommandOutput, EC2Client, GetSubnetCidrReservationsCommandOutput, SubnetCidrReservation } from '@aws-sdk/client-ec2';
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Subnet, SubnetReservation, Subnets } from '../usecases/ports.ts';
import { toPodrouteError } from './ec2-errors.ts';
import { allPages } from './ec2-paging.ts';
import { DESCRIBE_CONCURRENCY } from './ec2-prefixes.ts';
import { forEachLimit } from '../util/concurrency.ts';

/** Subnet ids per DescribeSubnets call (one `subnet-id` filter). */
const SUBNET_IDS_PER_CALL = 200;

export class Ec2Subnets implements Subnets {
  constructor(private readonly client: EC2Client) {}

  /**
   * EC2 API Reference, DescribeSubnets: the ids go in a `subnet-id` filter (an unknown id in
   * `SubnetIds` fails the whole call); MaxResults 5..1000 pages a filtered call. The subnet's IPv6
   * blocks are its `Ipv6CidrBlockAssociationSet` entries in state `associated`.
   * GetSubnetCidrReservations takes one SubnetId (required) and answers the IPv4 and IPv6
   * reservations apart, each with its ReservationType (`prefix` | `explicit`).
   */
  async describeSubnets(subnetIds: readonly string[]): Promise<Map<string, Subnet>> {
    const ids = [...new Set(subnetIds)];
    const found = new Map<string, Subnet>();
    for (let i = 0; i < ids.length; i += SUBNET_IDS_PER_CALL) {
      const chunk = ids.slice(i, i + SUBNET_IDS_PER_CALL);
      const subnets = await allPages('DescribeSubnets', async (NextToken) => {
        let out: DescribeSubnetsCommandOutput;
        try {
          out = await this.client.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'subnet-id', Values: chunk }], MaxResults: 1000, ...(NextToken ? { NextToken } : {}) }));
        } catch (error) {
          throw toPodrouteError(error, { operation: 'DescribeSubnets', subject: `${chunk.length} subnet(s)` });
        }
        return { items: out.Subnets, nextToken: out.NextToken };
      });
      for (const subnet of subnets) {
        if (!subnet.SubnetId) continue;
        const v6 = (subnet.Ipv6CidrBlockAssociationSet ?? []).filter((a) => a.Ipv6CidrBlockState?.State === 'associated').map((a) => a.Ipv6CidrBlock);
        const cidrs = [subnet.CidrBlock, ...v6].flatMap((text) => {
          const cidr = tryParseCidr(text);
          return cidr ? [formatCidr(cidr)] : [];
        });
        found.set(subnet.SubnetId, { subnetId: subnet.SubnetId, availabilityZone: subnet.AvailabilityZone, cidrs, reservations: [] });
      }
    }
    // One GetSubnetCidrReservations per subnet (it takes one SubnetId), 4 in flight: never unbounded.
    await forEachLimit([...found.values()], DESCRIBE_CONCURRENCY, async (subnet) => {
      subnet.reservations = await this.reservations(subnet.subnetId);
    });
    return found;
  }

  private async reservations(subnetId: string): Promise<SubnetReservation[]> {
    const all = await allPages('GetSubnetCidrReservations', async (NextToken) => {
      let out: GetSubnetCidrReservationsCommandOutput;
      try {
        out = await this.client.send(new GetSubnetCidrReservationsCommand({ SubnetId: subnetId, MaxResults: 1000, ...(NextToken ? { NextToken } : {}) }));
      } catch (error) {
        throw toPodrouteError(error, { operation: 'GetSubnetCidrReservations', subject: subnetId });
      }
      return { items: [...(out.SubnetIpv4CidrReservations ?? []), ...(out.SubnetIpv6CidrReservations ?? [])], nextToken: out.NextToken };
    });
    return all.flatMap((r) => toReservation(r) ?? []);
  }
}

function toReservation(r: SubnetCidrReservation): SubnetReservation | null {
  const cidr = tryParseCidr(r.Cidr);
  if (!cidr || !r.SubnetCidrReservationId) return null;
  if (r.ReservationType !== 'prefix' && r.ReservationType !== 'explicit') return null;
  return { reservationId: r.SubnetCidrReservationId, cidr: formatCidr(cidr), type: r.ReservationType, description: r.Description };
}

/**
 * How long a container trusts a subnet and its reservations before reading them again. They are
 * read once per run, not per node: a mass join sends one admission per node, so each
 * webhook container would otherwise make a DescribeSubnets and a GetSubnetCidrReservations per
 * node (82 and 102 for 60 nodes in the sandbox). Subnets rarely change and a reservation is
 * created by an operator before nodes need it, so a minute is a short wait for a new one to be
 * seen, while a join burst of any size costs a few calls per container.
 */
export const SUBNET_CACHE_TTL_MS = 60_000;

/**
 * Subnets read through `inner`, each remembered for `ttlMs` of `now`. Ids not fresh are read in one
 * call; a read under way is shared with concurrent callers asking for the same id. A subnet EC2
 * does not list is not remembered (it may appear), and a failed read is not either.
 */
export class CachedSubnets implements Subnets {
  private readonly fresh = new Map<string, { subnet: Subnet; at: number }>();
  private readonly reading = new Map<string, Promise<Map<string, Subnet>>>();

  constructor(
    private readonly inner: Subnets,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  async describeSubnets(subnetIds: readonly string[]): Promise<Map<string, Subnet>> {
    const ids = [...new Set(subnetIds)];
    const found = new Map<string, Subnet>();
    const waits: Array<Promise<Map<string, Subnet>>> = [];
    const missing: string[] = [];
    for (const id of ids) {
      const cached = this.fresh.get(id);
      const pending = this.reading.get(id);
      if (cached && this.now() - cached.at < this.ttlMs) found.set(id, cached.subnet);
      else if (pending) waits.push(pending);
      else missing.push(id);
    }
    if (missing.length > 0) {
      const read = this.inner.describeSubnets(missing).then((subnets) => {
        const at = this.now();
        for (const [id, subnet] of subnets) this.fresh.set(id, { subnet, at });
        return subnets;
      });
      for (const id of missing) this.reading.set(id, read);
      const forget = () => {
        for (const id of missing) if (this.reading.get(id) === read) this.reading.delete(id);
      };
      read.then(forget, forget);
      waits.push(read);
    }
    for (const subnets of await Promise.all(waits)) {
      for (const id of ids) {
        const subnet = subnets.get(id);
        if (subnet && !found.has(id)) found.set(id, subnet);
      }
    }
    return found;
  }
}
