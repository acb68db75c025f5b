/**
 * The node-sync "cloud alias" on AWS: the prefix delegated to a node's primary interface, a `/28`
 * for IPv4 or a `/80` for IPv6 (the only sizes EC2 delegates), read and assigned.
 */
import { AssignIpv6AddressesCommand, AssignPrivateIpAddressesCommand } from '@aws-sdk/client-ec2';
import type { EC2Client } from '@aws-sdk/client-ec2';
import { cidrEquals, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Family } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { toPodrouteError } from './ec2-errors.ts';
import { primaryInterface } from './ec2-instances.ts';

/** EC2 delegates prefixes of exactly these sizes to a network interface. */
export const DELEGATED_PREFIX_MASK: Readonly<Record<Family, number>> = { 4: 28, 6: 80 };

/** The node mask is wrong for prefix delegation: a configuration error, not retryable. */
export class PrefixMaskError extends InvalidInputError {
  override name = 'PrefixMaskError';
}

/** Throws a `PrefixMaskError` unless the node mask is the size EC2 delegates for the family. */
export function assertPrefixMask(family: Family, nodeMask: number): void {
  const wanted = DELEGATED_PREFIX_MASK[family];
  if (nodeMask !== wanted) {
    throw new PrefixMaskError(
      `node CIDR mask /${nodeMask} cannot be an ENI prefix: EC2 delegates only /${wanted} ${family === 4 ? 'IPv4' : 'IPv6'} prefixes; ` +
        `set the IPv${family} node mask size to ${wanted} or use route mode`,
    );
  }
}

export class Ec2EniPrefixes {
  constructor(private readonly client: EC2Client) {}

  /** The first delegated prefix of the family on the instance's primary interface, or null. */
  async alias(instanceId: string, family: Family): Promise<string | null> {
    const prefixes = await this.prefixes(instanceId, family);
    return prefixes[0] ?? null;
  }

  /** Delegates `cidr` to the instance's primary interface; nothing to do when it already is. */
  async addAlias(instanceId: string, cidrText: string): Promise<void> {
    const cidr = tryParseCidr(cidrText);
    if (!cidr) throw new InvalidInputError(`invalid prefix ${JSON.stringify(cidrText)}: want an IPv4 /28 or IPv6 /80 CIDR`);
    assertPrefixMask(cidr.family, cidr.prefix);
    const prefix = formatCidr(cidr);
    const { eni } = await primaryInterface(this.client, instanceId, 'DescribeInstances');
    const current = cidr.family === 4 ? (eni.Ipv4Prefixes ?? []).map((p) => p.Ipv4Prefix) : (eni.Ipv6Prefixes ?? []).map((p) => p.Ipv6Prefix);
    if (current.some((p) => { const c = tryParseCidr(p); return c !== null && cidrEquals(c, cidr); })) return;
    const operation = cidr.family === 4 ? 'AssignPrivateIpAddresses' : 'AssignIpv6Addresses';
    try {
      if (cidr.family === 4) {
        await this.client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni.NetworkInterfaceId, Ipv4Prefixes: [prefix] }));
      } else {
        await this.client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni.NetworkInterfaceId, Ipv6Prefixes: [prefix] }));
      }
    } catch (error) {
      throw toPodrouteError(error, { operation, subject: `${instanceId} ${prefix}` });
    }
  }

  private async prefixes(instanceId: string, family: Family): Promise<string[]> {
    const { eni } = await primaryInterface(this.client, instanceId, 'DescribeInstances');
    const raw = family === 4 ? (eni.Ipv4Prefixes ?? []).map((p) => p.Ipv4Prefix) : (eni.Ipv6Prefixes ?? []).map((p) => p.Ipv6Prefix);
    return raw.flatMap((text) => {
      const cidr = tryParseCidr(text);
      return cidr && cidr.family === family && cidr.prefix === DELEGATED_PREFIX_MASK[family] ? [formatCidr(cidr)] : [];
    });
  }
}
