/**
 * The node-sync "cloud alias" on AWS: the prefixes delegated to nodes' primary interfaces, a `/28`
 * for IPv4 or a `/80` for IPv6 (the only sizes EC2 delegates), read in batches and assigned.
 */
import {
  AssignIpv6AddressesCommand,
  AssignPrivateIpAddressesCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSubnetsCommand,
  UnassignIpv6AddressesCommand,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import type { DescribeInstancesCommandOutput, EC2Client, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Cidr, Family } from '../cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../errors.ts';
import type { EniPrefixes, NodeInterface } from '../usecases/ports.ts';
import { Ec2Error, toPodrouteError } from './ec2-errors.ts';
import { PrefixUnavailableError } from '../usecases/port-errors.ts';
import { primaryInterfaceOf } from './ec2-instances.ts';
import { forEachLimit } from '../util/concurrency.ts';
import { allPages } from './ec2-paging.ts';
import { DELEGATED_PREFIX } from '../dataplane/prefixes/reservation-plan.ts';

/** The node mask is wrong for prefix delegation: a configuration error, not retryable. */
class PrefixMaskError extends InvalidInputError {
  override name = 'PrefixMaskError';
}

/** Throws a `PrefixMaskError` unless the node mask is the size EC2 delegates for the family. */
export function assertPrefixMask(family: Family, nodeMask: number): void {
  const wanted = DELEGATED_PREFIX[family];
  if (nodeMask !== wanted) {
    throw new PrefixMaskError(
      `node CIDR mask /${nodeMask} cannot be an ENI prefix: EC2 delegates only /${wanted} ${family === 4 ? 'IPv4' : 'IPv6'} prefixes; ` +
        `set the IPv${family} node mask size to ${wanted} or use route mode`,
    );
  }
}

/** Instance ids per DescribeInstances call: one `instance-id` filter holds them all. */
const INSTANCE_IDS_PER_CALL = 200;

/**
 * DescribeInstances chunks in flight at once. A steady-state prefixes-mode tick over N nodes costs
 * ceil(N/200) DescribeInstances (read 4 at a time), one DescribeSubnets per 200 subnets and one
 * GetSubnetCidrReservations per subnet (4 at a time, ec2-subnets.ts): for 5,000 nodes in 6 subnets,
 * 25 + 1 + 6 describe calls, in about 7 + 1 + 2 round trips, and no writes.
 */
export const DESCRIBE_CONCURRENCY = 4;

export class Ec2EniPrefixes implements EniPrefixes {
  constructor(private readonly client: EC2Client) {}

  /**
   * One DescribeInstances per 200 ids (and per page of answers). The ids go in an `instance-id`
   * filter, not in `InstanceIds`: EC2 API Reference, DescribeInstances: an unknown id in
   * `InstanceIds` fails the whole call (InvalidInstanceID.NotFound, also for an instance still
   * inside its launch window), while a filter just leaves it out, and only a filtered call may page
   * with MaxResults (5..1000).
   */
  async describeInterfaces(instanceIds: readonly string[]): Promise<Map<string, NodeInterface>> {
    const ids = [...new Set(instanceIds)];
    const found = new Map<string, NodeInterface>();
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += INSTANCE_IDS_PER_CALL) chunks.push(ids.slice(i, i + INSTANCE_IDS_PER_CALL));
    // Bounded, never an unbounded Promise.all: DescribeInstances shares EC2's describe bucket.
    await forEachLimit(chunks, DESCRIBE_CONCURRENCY, async (chunk) => {
      const instances = await allPages('DescribeInstances', async (nextToken) => {
        let out: DescribeInstancesCommandOutput;
        try {
          out = await this.client.send(
            new DescribeInstancesCommand({ Filters: [{ Name: 'instance-id', Values: chunk }], MaxResults: 1000, ...(nextToken ? { NextToken: nextToken } : {}) }),
          );
        } catch (error) {
          throw toPodrouteError(error, { operation: 'DescribeInstances', subject: `${chunk.length} instance(s)` });
        }
        return { items: (out.Reservations ?? []).flatMap((r) => r.Instances ?? []), nextToken: out.NextToken };
      });
      for (const instance of instances) {
        const eni = primaryInterfaceOf(instance);
        if (!instance.InstanceId || !eni?.NetworkInterfaceId || !eni.SubnetId) continue;
        found.set(instance.InstanceId, { instanceId: instance.InstanceId, networkInterfaceId: eni.NetworkInterfaceId, subnetId: eni.SubnetId, prefixes: delegatedPrefixes(eni) });
      }
    });
    return found;
  }

  /** Delegates exactly `cidr` (an IPv4 /28 or IPv6 /80) to the interface. */
  async assignPrefix(networkInterfaceId: string, cidrText: string): Promise<void> {
    const { cidr, prefix } = delegablePrefix(cidrText);
    try {
      await this.assign(networkInterfaceId, cidr.family, { prefix }, prefix);
    } catch (error) {
      // EC2 answers InvalidParameterValue for a named prefix it cannot delegate to this interface:
      // already delegated elsewhere or holding an address in use (the caller asks only for prefixes
      // inside the interface's subnet; EC2 User Guide, "Assign prefixes to Amazon EC2 network
      // interfaces"; EC2 API Reference, "Error codes": InvalidParameterValue).
      if (error instanceof Ec2Error && error.code === 'InvalidParameterValue') {
        throw new PrefixUnavailableError(`EC2 refused prefix ${prefix} for ${networkInterfaceId} (InvalidParameterValue): delegated elsewhere or in use`, { prefix, code: error.code, cause: error });
      }
      throw error;
    }
  }

  /**
   * Lets EC2 pick one prefix (Ipv4PrefixCount / Ipv6PrefixCount = 1). Amazon VPC User Guide, "Subnet
   * CIDR reservations": automatic prefix assignment takes from the subnet's `prefix` reservations.
   */
  async assignAnyPrefix(networkInterfaceId: string, family: Family): Promise<string> {
    const assigned = await this.assign(networkInterfaceId, family, { count: 1 }, 'one automatic prefix');
    const first = assigned.map((text) => tryParseCidr(text)).find((c) => c !== null && c.family === family);
    if (!first) throw new PodrouteError(`EC2 assigned no IPv${family} prefix to ${networkInterfaceId}`, { retryable: true });
    return formatCidr(first);
  }

  /**
   * Pages through the subnet's interfaces (DescribeNetworkInterfaces, `subnet-id` filter, EC2 API
   * Reference) for the one holding `cidr`: a delegated prefix lies inside its interface's subnet
   * (EC2 User Guide, "Prefix delegation for Amazon EC2 network interfaces"), so no other subnet
   * needs reading. Only after a refusal, so its cost (a page per 1,000 interfaces) is rare.
   */
  async prefixHolder(subnetId: string, cidr: string): Promise<string | null> {
    const wanted = tryParseCidr(cidr);
    if (!wanted) throw new InvalidInputError(`invalid prefix ${JSON.stringify(cidr)}`);
    const interfaces = await allPages('DescribeNetworkInterfaces', async (nextToken) => {
      try {
        const out = await this.client.send(
          new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'subnet-id', Values: [subnetId] }], MaxResults: 1000, ...(nextToken ? { NextToken: nextToken } : {}) }),
        );
        return { items: out.NetworkInterfaces, nextToken: out.NextToken };
      } catch (error) {
        throw toPodrouteError(error, { operation: 'DescribeNetworkInterfaces', subject: subnetId });
      }
    });
    const holder = interfaces.find((eni) => delegatedPrefixes(eni).includes(formatCidr(wanted)));
    return holder?.NetworkInterfaceId ?? null;
  }

  /**
   * EC2 API Reference, DescribeNetworkInterfaces: its filters name no delegated prefix (only
   * addresses), so the holder is found in the one subnet whose block holds the prefix (a prefix
   * lies inside its interface's subnet): one paged DescribeSubnets, then that subnet's interfaces
   * (`prefixHolder`). No subnet holds it: no interface can (a subnet is deleted only without
   * interfaces), so null.
   */
  async prefixDelegation(cidr: string): Promise<string | null> {
    const wanted = tryParseCidr(cidr);
    if (!wanted) throw new InvalidInputError(`invalid prefix ${JSON.stringify(cidr)}`);
    const subnets = await allPages('DescribeSubnets', async (nextToken) => {
      try {
        const out = await this.client.send(new DescribeSubnetsCommand({ MaxResults: 1000, ...(nextToken ? { NextToken: nextToken } : {}) }));
        return { items: out.Subnets, nextToken: out.NextToken };
      } catch (error) {
        throw toPodrouteError(error, { operation: 'DescribeSubnets', subject: `the subnet of ${cidr}` });
      }
    });
    const holds = (text: string | undefined) => {
      const block = text === undefined ? null : tryParseCidr(text);
      return block !== null && block.family === wanted.family && containsCidr(block, wanted);
    };
    // Subnets of different VPCs may overlap (Amazon VPC User Guide, "VPC CIDR blocks": only one
    // VPC's own subnets may not), so every subnet that contains the prefix is read until one holds it.
    const containing = subnets.filter((s) => holds(s.CidrBlock) || (s.Ipv6CidrBlockAssociationSet ?? []).some((a) => holds(a.Ipv6CidrBlock)));
    for (const subnet of containing) {
      const holder = subnet.SubnetId ? await this.prefixHolder(subnet.SubnetId, cidr) : null;
      if (holder !== null) return holder;
    }
    return null;
  }

  /**
   * EC2 API Reference, UnassignPrivateIpAddresses (`Ipv4Prefix.N`) and UnassignIpv6Addresses
   * (`Ipv6Prefix.N`): takes the named prefix off the interface.
   */
  async unassignPrefix(networkInterfaceId: string, cidrText: string): Promise<void> {
    const { cidr, prefix } = delegablePrefix(cidrText);
    const operation = cidr.family === 4 ? 'UnassignPrivateIpAddresses' : 'UnassignIpv6Addresses';
    try {
      if (cidr.family === 4) await this.client.send(new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: networkInterfaceId, Ipv4Prefixes: [prefix] }));
      else await this.client.send(new UnassignIpv6AddressesCommand({ NetworkInterfaceId: networkInterfaceId, Ipv6Prefixes: [prefix] }));
    } catch (error) {
      throw toPodrouteError(error, { operation, subject: `${networkInterfaceId} ${prefix}` });
    }
  }

  private async assign(eniId: string, family: Family, what: { prefix: string } | { count: number }, subject: string): Promise<string[]> {
    const operation = family === 4 ? 'AssignPrivateIpAddresses' : 'AssignIpv6Addresses';
    try {
      if (family === 4) {
        const out = await this.client.send(
          new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eniId, ...('prefix' in what ? { Ipv4Prefixes: [what.prefix] } : { Ipv4PrefixCount: what.count }) }),
        );
        return (out.AssignedIpv4Prefixes ?? []).flatMap((p) => (p.Ipv4Prefix ? [p.Ipv4Prefix] : []));
      }
      const out = await this.client.send(
        new AssignIpv6AddressesCommand({ NetworkInterfaceId: eniId, ...('prefix' in what ? { Ipv6Prefixes: [what.prefix] } : { Ipv6PrefixCount: what.count }) }),
      );
      return out.AssignedIpv6Prefixes ?? [];
    } catch (error) {
      throw toPodrouteError(error, { operation, subject: `${eniId} ${subject}` });
    }
  }
}

/** `text` as a prefix EC2 can delegate (an IPv4 /28 or IPv6 /80), canonical; an `InvalidInputError` otherwise. */
function delegablePrefix(text: string): { cidr: Cidr; prefix: string } {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new InvalidInputError(`invalid prefix ${JSON.stringify(text)}: want an IPv4 /28 or IPv6 /80 CIDR`);
  assertPrefixMask(cidr.family, cidr.prefix);
  return { cidr, prefix: formatCidr(cidr) };
}

/** The one reading of an interface's delegated prefixes: both families, delegated sizes only, canonical. */
function delegatedPrefixes(eni: Pick<InstanceNetworkInterface, 'Ipv4Prefixes' | 'Ipv6Prefixes'>): string[] {
  const raw = [...(eni.Ipv4Prefixes ?? []).map((p) => p.Ipv4Prefix), ...(eni.Ipv6Prefixes ?? []).map((p) => p.Ipv6Prefix)];
  return raw.flatMap((text) => {
    const cidr = tryParseCidr(text);
    return cidr && cidr.prefix === DELEGATED_PREFIX[cidr.family] ? [formatCidr(cidr)] : [];
  });
}
