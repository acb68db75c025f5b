/**
 * The network side of the in-memory EC2 world: ids, VPCs, subnets with their addresses and CIDR
 * reservations, and the lookups every resource uses. state.ts adds route tables, instances and
 * interfaces on top.
 */
import { formatAddress, formatCidr, lastAddress, tryParseCidr } from '../../../lib/cidr/cidr.ts';
import type { Cidr, Family } from '../../../lib/cidr/cidr.ts';
import { isSubnetReserved, probe } from './addresses.ts';
import { seededRandom } from '../random.ts';
import { checkReservationCidr } from './reservations.ts';
import type { ReservationRecord, ReservationType } from './reservations.ts';
import { Ec2ApiError } from './errors.ts';
import { DEFAULT_ZONE, canonical, within, parsed, ipValue, toTags } from './records.ts';
import type { Tag, VpcRecord, SubnetRecord, RouteTableRecord, NetworkInterfaceRecord, InstanceRecord } from './records.ts';

export class Ec2Network {
  readonly vpcs = new Map<string, VpcRecord>();
  readonly subnets = new Map<string, SubnetRecord>();
  readonly routeTables = new Map<string, RouteTableRecord>();
  readonly instances = new Map<string, InstanceRecord>();
  readonly networkInterfaces = new Map<string, NetworkInterfaceRecord>();
  readonly gateways = new Set<string>();
  /** Subnet CIDR reservations by id (`scr-...`). */
  readonly reservations = new Map<string, ReservationRecord>();
  /** Where automatic addresses and prefixes land (addresses.ts); reseed for another repeatable run. */
  random: () => number = seededRandom(1);
  protected readonly counters = new Map<string, number>();
  protected readonly usedIps = new Map<string, Set<bigint>>();

  /**
   * For this long after a launch, the API answers NotFound for the instance and its interfaces.
   * EC2 Developer Guide, "Eventual consistency in the Amazon EC2 API": a resource just created may
   * not have propagated yet, and a call that describes or modifies it gets an error saying it does
   * not exist (`InvalidInstanceID.NotFound` right after RunInstances "does not mean the instance
   * does not exist"). 0 (the default) turns this off.
   */
  notFoundAfterLaunchMs = 0;

  constructor(
    readonly routeLimit: number,
    protected readonly now: () => number,
  ) {}

  /** Next id of a kind, e.g. `rtb-00000000000000001`. Deterministic. */
  nextId(prefix: string): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return `${prefix}-${n.toString(16).padStart(17, '0')}`;
  }

  addVpc(input: { id?: string; cidrBlock?: string; ipv6CidrBlock?: string } = {}): VpcRecord {
    const cidrBlock = canonical(input.cidrBlock ?? '10.0.0.0/16', 4, 'cidrBlock');
    const ipv6CidrBlock = input.ipv6CidrBlock === undefined ? undefined : canonical(input.ipv6CidrBlock, 6, 'ipv6CidrBlock');
    const vpc: VpcRecord = { id: input.id ?? this.nextId('vpc'), cidrBlock, ipv6CidrBlock };
    this.assertFree(this.vpcs, vpc.id);
    this.vpcs.set(vpc.id, vpc);
    return vpc;
  }

  addSubnet(input: {
    id?: string;
    vpcId: string;
    cidrBlock: string;
    ipv6CidrBlock?: string;
    availabilityZone?: string;
    tags?: Record<string, string> | Tag[];
  }): SubnetRecord {
    const vpc = this.vpc(input.vpcId);
    const cidrBlock = canonical(input.cidrBlock, 4, 'cidrBlock');
    if (!within(vpc.cidrBlock, cidrBlock)) throw new Error(`subnet ${cidrBlock} is outside VPC ${vpc.cidrBlock}`);
    let ipv6CidrBlock: string | undefined;
    if (input.ipv6CidrBlock !== undefined) {
      ipv6CidrBlock = canonical(input.ipv6CidrBlock, 6, 'ipv6CidrBlock');
      if (vpc.ipv6CidrBlock === undefined || !within(vpc.ipv6CidrBlock, ipv6CidrBlock)) {
        throw new Error(`subnet ${ipv6CidrBlock} is outside the VPC's IPv6 block`);
      }
    }
    const subnet: SubnetRecord = {
      id: input.id ?? this.nextId('subnet'),
      vpcId: vpc.id,
      cidrBlock,
      ipv6CidrBlock,
      availabilityZone: input.availabilityZone ?? DEFAULT_ZONE,
      tags: toTags(input.tags),
    };
    // Amazon VPC User Guide, "Subnet CIDR blocks": the CIDR blocks of a VPC's subnets cannot overlap.
    for (const other of this.subnets.values()) {
      if (other.vpcId === vpc.id && (within(other.cidrBlock, cidrBlock) || within(cidrBlock, other.cidrBlock))) {
        throw new Error(`subnet ${cidrBlock} overlaps subnet ${other.id} (${other.cidrBlock})`);
      }
    }
    this.assertFree(this.subnets, subnet.id);
    this.subnets.set(subnet.id, subnet);
    return subnet;
  }

  createReservation(input: { subnetId: string; cidr: string; type: ReservationType; description?: string }): ReservationRecord {
    const subnet = this.subnet(input.subnetId);
    const inVpc = [...this.reservations.values()].filter((r) => this.subnets.get(r.subnetId)?.vpcId === subnet.vpcId);
    const cidr = checkReservationCidr(input.cidr, subnet, inVpc);
    const reservation: ReservationRecord = {
      id: this.nextId('scr'),
      subnetId: subnet.id,
      cidr: formatCidr(cidr),
      family: cidr.family,
      type: input.type,
      description: input.description,
      tags: [],
    };
    this.reservations.set(reservation.id, reservation);
    return reservation;
  }

  /** Removes a reservation; what was assigned from it stays assigned. */
  deleteReservation(id: string): ReservationRecord {
    const reservation = this.reservations.get(id);
    if (!reservation) {
      throw new Ec2ApiError('InvalidSubnetCidrReservationID.NotFound', `The subnet CIDR reservation ID '${id}' does not exist`);
    }
    this.reservations.delete(id);
    return reservation;
  }

  /** Reservations of a subnet (of one family when given), in creation order. */
  reservationsOf(subnetId: string, family?: Family): ReservationRecord[] {
    return [...this.reservations.values()].filter((r) => r.subnetId === subnetId && (family === undefined || r.family === family));
  }

  /** Whether the API still hides the instance: launched inside the eventual-consistency window. */
  isFreshInstance(instance: InstanceRecord): boolean {
    return this.now() - instance.launchedAtMs < this.notFoundAfterLaunchMs;
  }

  isFreshInterface(eni: NetworkInterfaceRecord): boolean {
    return this.now() - eni.createdAtMs < this.notFoundAfterLaunchMs;
  }

  table(id: string): RouteTableRecord {
    const table = this.routeTables.get(id);
    if (!table) throw new Ec2ApiError('InvalidRouteTableID.NotFound', `The routeTable ID '${id}' does not exist`);
    return table;
  }

  /** The instance as the API sees it: unknown, or launched inside the window, is NotFound. */
  instance(id: string): InstanceRecord {
    const instance = this.instances.get(id);
    if (!instance || this.isFreshInstance(instance)) throw new Ec2ApiError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
    return instance;
  }

  /** The interface as the API sees it: unknown, or created inside the window, is NotFound. */
  networkInterface(id: string): NetworkInterfaceRecord {
    const eni = this.networkInterfaces.get(id);
    if (!eni || this.isFreshInterface(eni)) {
      throw new Ec2ApiError('InvalidNetworkInterfaceID.NotFound', `The networkInterface ID '${id}' does not exist`);
    }
    return eni;
  }

  protected vpc(id: string): VpcRecord {
    const vpc = this.vpcs.get(id);
    if (!vpc) throw new Ec2ApiError('InvalidVpcID.NotFound', `The vpc ID '${id}' does not exist`);
    return vpc;
  }

  subnet(id: string): SubnetRecord {
    const subnet = this.subnets.get(id);
    if (!subnet) throw new Ec2ApiError('InvalidSubnetID.NotFound', `The subnet ID '${id}' does not exist`);
    return subnet;
  }

  /** Prefixes delegated to the subnet's interfaces. */
  protected subnetPrefixes(subnetId: string, family: Family): Cidr[] {
    const out: Cidr[] = [];
    for (const eni of this.networkInterfaces.values()) {
      if (eni.subnetId !== subnetId) continue;
      for (const p of family === 4 ? eni.ipv4Prefixes : eni.ipv6Prefixes) out.push(parsed(p));
    }
    return out;
  }

  /** Whether an IPv4 range holds an address in use or one of the subnet's five. */
  protected addressInside(subnetId: string, subnetBlock: Cidr, range: Cidr): boolean {
    // CIDR-aligned inside the subnet: it holds one of the five only at its first or last address.
    const last = lastAddress(range);
    if (isSubnetReserved(subnetBlock, range.network) || isSubnetReserved(subnetBlock, last)) return true;
    for (const ip of this.usedIps.get(subnetId) ?? []) {
      if (ip >= range.network && ip <= last) return true;
    }
    return false;
  }

  /**
   * An address of the subnet: the one asked for, or one EC2 would pick (addresses.ts): anywhere in the
   * subnet, never one of its five, one in use, one inside a reservation or a delegated prefix.
   */
  protected takeIp(subnet: SubnetRecord, wanted: string | undefined): string {
    const used = this.usedIps.get(subnet.id) ?? new Set<bigint>();
    this.usedIps.set(subnet.id, used);
    const block = parsed(subnet.cidrBlock);
    if (wanted !== undefined) {
      const value = ipValue(wanted);
      if (!within(subnet.cidrBlock, `${wanted}/32`)) throw new Error(`${wanted} is outside subnet ${subnet.cidrBlock}`);
      if (used.has(value)) throw new Error(`${wanted} is already in use in ${subnet.id}`);
      // Amazon VPC User Guide, "Subnet CIDR blocks": the first four addresses and the last one of a
      // subnet cannot be assigned to an interface.
      if (isSubnetReserved(block, value)) throw new Error(`${wanted} is one of the five addresses ${subnet.id} keeps`);
      used.add(value);
      return wanted;
    }
    const kept = [...this.reservationsOf(subnet.id, 4).map((r) => parsed(r.cidr)), ...this.subnetPrefixes(subnet.id, 4)];
    const size = 1n << BigInt(32 - block.prefix);
    const index = probe(this.random, size, (i) => {
      const value = block.network + i;
      if (isSubnetReserved(block, value) || used.has(value)) return false;
      return !kept.some((k) => value >= k.network && value <= lastAddress(k));
    });
    if (index === null) throw new Error(`subnet ${subnet.id} is full`);
    used.add(block.network + index);
    return formatAddress(4, block.network + index);
  }

  protected defaultVpc(): VpcRecord {
    const first = this.vpcs.values().next();
    if (!first.done) return first.value;
    return this.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  }

  protected subnetInZone(zone: string): SubnetRecord {
    for (const subnet of this.subnets.values()) if (subnet.availabilityZone === zone) return subnet;
    const vpc = this.defaultVpc();
    const index = this.subnets.size;
    const v4 = tryParseCidr(vpc.cidrBlock);
    if (!v4 || v4.prefix > 20) throw new Error(`VPC ${vpc.id} is too small for automatic /20 subnets`);
    const cidrBlock = formatCidr({ family: 4, prefix: 20, network: v4.network + (BigInt(index) << 12n) });
    const v6 = vpc.ipv6CidrBlock === undefined ? null : tryParseCidr(vpc.ipv6CidrBlock);
    const ipv6CidrBlock = v6 && v6.prefix <= 64 ? formatCidr({ family: 6, prefix: 64, network: v6.network + (BigInt(index) << 64n) }) : undefined;
    return this.addSubnet({ vpcId: vpc.id, cidrBlock, availabilityZone: zone, ...(ipv6CidrBlock ? { ipv6CidrBlock } : {}) });
  }

  protected assertFree(map: Map<string, unknown>, id: string): void {
    if (map.has(id)) throw new Error(`${id} already exists`);
  }
}
