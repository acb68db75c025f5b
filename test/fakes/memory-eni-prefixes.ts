/**
 * MemoryEniPrefixes: the EniPrefixes port (lib/usecases/ports.ts) in memory, with the rules
 * Ec2EniPrefixes meets in EC2 (Amazon EC2 User Guide, "Assign prefixes to network interfaces"): only
 * `/28` (IPv4) and `/80` (IPv6) prefixes (another size is an InvalidInputError); a named prefix
 * must lie in the interface's subnet and be free (no other interface's prefix, none of the subnet's
 * reserved first four and last addresses), else PrefixUnavailableError; an automatic prefix comes
 * from the subnet's `prefix` reservations when it has any (Amazon VPC User Guide, "Subnet CIDR
 * reservations"), else from the rest of the subnet, never inside an `explicit` reservation; an
 * unknown interface is a ResourceNotFoundError. Subnets come from a MemorySubnets.
 */
import { blockAt, blockCount, containsCidr, formatCidr, lastAddress, overlaps, tryParseCidr, type Cidr, type Family } from '../../lib/cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../../lib/errors.ts';
import { DELEGATED_PREFIX } from '../../lib/dataplane/prefixes/reservation-plan.ts';
import { PrefixUnavailableError, ResourceNotFoundError } from '../../lib/usecases/port-errors.ts';
import type { EniPrefixes, NodeInterface } from '../../lib/usecases/ports.ts';
import type { MemorySubnets } from './memory-subnets.ts';

const parse = (text: string): Cidr => {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new InvalidInputError(`invalid prefix ${JSON.stringify(text)}: want an IPv4 /28 or IPv6 /80 CIDR`);
  return cidr;
};

/** Amazon VPC User Guide, "Subnet CIDR blocks": the first four and the last IPv4 address of a subnet are reserved. */
function holdsReserved(block: Cidr, candidate: Cidr): boolean {
  if (block.family !== 4) return false;
  const reserved = [block.network, block.network + 1n, block.network + 2n, block.network + 3n, lastAddress(block)];
  return reserved.some((address) => address >= candidate.network && address <= lastAddress(candidate));
}

export class MemoryEniPrefixes implements EniPrefixes {
  private readonly interfaces = new Map<string, NodeInterface>();
  private next = 0;
  /** Every port call, in order, as `<method> <argument>`. */
  readonly calls: string[] = [];

  constructor(private readonly subnets: MemorySubnets) {}

  /** An instance's primary interface in `subnetId`, with prefixes already delegated. */
  addInstance(subnetId: string, prefixes: readonly string[] = []): NodeInterface {
    if (!this.subnets.has(subnetId)) throw new Error(`no subnet ${subnetId}`);
    this.next += 1;
    const hex = this.next.toString(16).padStart(17, '0');
    const eni: NodeInterface = { instanceId: `i-${hex}`, networkInterfaceId: `eni-${hex}`, subnetId, prefixes: prefixes.map((p) => formatCidr(parse(p))) };
    this.interfaces.set(eni.instanceId, eni);
    return { ...eni, prefixes: [...eni.prefixes] };
  }

  count(prefix: string): number {
    return this.calls.filter((call) => call.startsWith(prefix)).length;
  }

  async describeInterfaces(instanceIds: readonly string[]): Promise<Map<string, NodeInterface>> {
    this.calls.push(`describeInterfaces ${instanceIds.length}`);
    const found = new Map<string, NodeInterface>();
    for (const id of new Set(instanceIds)) {
      const eni = this.interfaces.get(id);
      if (eni) found.set(id, { ...eni, prefixes: [...eni.prefixes] });
    }
    return found;
  }

  async assignPrefix(networkInterfaceId: string, cidrText: string): Promise<void> {
    this.calls.push(`assignPrefix ${networkInterfaceId} ${cidrText}`);
    const cidr = this.delegable(parse(cidrText));
    const eni = this.eni(networkInterfaceId);
    const prefix = formatCidr(cidr);
    const blocks = this.subnets.subnet(eni.subnetId).cidrs.map(parse).filter((b) => b.family === cidr.family);
    const block = blocks.find((b) => containsCidr(b, cidr));
    if (!block || !this.isFree(cidr, block)) {
      throw new PrefixUnavailableError(`prefix ${prefix} refused for ${networkInterfaceId} (InvalidParameterValue): outside the subnet, delegated elsewhere or in use`, { prefix, code: 'InvalidParameterValue' });
    }
    eni.prefixes.push(prefix);
  }

  async assignAnyPrefix(networkInterfaceId: string, family: Family): Promise<string> {
    this.calls.push(`assignAnyPrefix ${networkInterfaceId} ${family}`);
    const eni = this.eni(networkInterfaceId);
    const subnet = this.subnets.subnet(eni.subnetId);
    const block = subnet.cidrs.map(parse).find((b) => b.family === family);
    if (!block) throw new PodrouteError(`subnet ${subnet.subnetId} has no IPv${family} block (InvalidParameterValue)`, { retryable: false });
    const reservations = subnet.reservations.filter((r) => parse(r.cidr).family === family);
    const fromReservations = reservations.filter((r) => r.type === 'prefix').map((r) => parse(r.cidr));
    const pools = fromReservations.length > 0 ? fromReservations : [block];
    const kept = fromReservations.length > 0 ? [] : reservations.map((r) => parse(r.cidr));
    const size = DELEGATED_PREFIX[family];
    for (const pool of pools) {
      for (let i = 0n; i < blockCount(pool, size); i++) {
        const candidate = blockAt(pool, size, i);
        if (this.isFree(candidate, block) && !kept.some((k) => overlaps(k, candidate))) {
          eni.prefixes.push(formatCidr(candidate));
          return formatCidr(candidate);
        }
      }
    }
    throw new PodrouteError(`EC2 AssignPrivateIpAddresses ${networkInterfaceId}: InsufficientCidrBlocks`, { retryable: false });
  }

  async prefixHolder(subnetId: string, cidr: string): Promise<string | null> {
    this.calls.push(`prefixHolder ${subnetId} ${cidr}`);
    const wanted = formatCidr(parse(cidr));
    return [...this.interfaces.values()].find((eni) => eni.subnetId === subnetId && eni.prefixes.includes(wanted))?.networkInterfaceId ?? null;
  }

  async prefixDelegation(cidr: string): Promise<string | null> {
    this.calls.push(`prefixDelegation ${cidr}`);
    const wanted = formatCidr(parse(cidr));
    return [...this.interfaces.values()].find((eni) => eni.prefixes.includes(wanted))?.networkInterfaceId ?? null;
  }

  /** A prefix the interface does not hold is refused (InvalidParameterValue, as the emulator answers). */
  async unassignPrefix(networkInterfaceId: string, cidr: string): Promise<void> {
    this.calls.push(`unassignPrefix ${networkInterfaceId} ${cidr}`);
    const eni = this.eni(networkInterfaceId);
    const prefix = formatCidr(this.delegable(parse(cidr)));
    if (!eni.prefixes.includes(prefix)) {
      throw new PodrouteError(`prefix ${prefix} is not assigned to ${networkInterfaceId} (InvalidParameterValue)`, { retryable: false });
    }
    eni.prefixes = eni.prefixes.filter((p) => p !== prefix);
  }

  /** The instance terminates: its primary interface goes, and the prefixes delegated to it with it. */
  terminate(instanceId: string): void {
    this.interfaces.delete(instanceId);
  }

  private delegable(cidr: Cidr): Cidr {
    const wanted = DELEGATED_PREFIX[cidr.family];
    if (cidr.prefix !== wanted) throw new InvalidInputError(`node CIDR mask /${cidr.prefix} cannot be an ENI prefix: EC2 delegates only /${wanted} prefixes`);
    return cidr;
  }

  private isFree(candidate: Cidr, block: Cidr): boolean {
    const taken = [...this.interfaces.values()].flatMap((eni) => eni.prefixes).map(parse);
    return !taken.some((t) => overlaps(t, candidate)) && !holdsReserved(block, candidate);
  }

  private eni(networkInterfaceId: string): NodeInterface {
    const eni = [...this.interfaces.values()].find((e) => e.networkInterfaceId === networkInterfaceId);
    if (!eni) {
      throw new ResourceNotFoundError(`network interface ${networkInterfaceId}: InvalidNetworkInterfaceID.NotFound`, { operation: 'AssignPrivateIpAddresses', code: 'InvalidNetworkInterfaceID.NotFound', mayBeLaunchLag: true, cause: undefined });
    }
    return eni;
  }
}
