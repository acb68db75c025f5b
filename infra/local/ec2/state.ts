/**
 * In-memory EC2 world for the local emulator: VPCs and subnets (network-state.ts), route tables with their routes, instances and
 * their network interfaces (a primary one and any number of secondary ones). Test infrastructure, not product: it keeps only what
 * podroute reads and writes, and follows EC2's rules for those (one route per destination, a per-table route quota, blackhole routes).
 *
 * IDs come from counters, so a run is deterministic: `rtb-`, `i-`, `eni-`... + 17 hex digits.
 */
import { type Cidr, type Family, containsCidr, formatCidr, overlaps, tryParseCidr } from '../../../lib/cidr/cidr.ts';
import { blockRange, blocksIn, probe } from './addresses.ts';
import { DEFAULT_INSTANCE_TYPE, limitsOf } from './instance-types.ts';
import { Ec2ApiError } from './errors.ts';
import { ACCOUNT_ID, DEFAULT_ZONE, MAX_SECONDARY_ENIS, isStatic, parseDestination, parsed, ipValue, dnsNameFor, macFor, toTags } from './records.ts';
import type { Tag, RouteTarget, RouteTargetFields, RouteRecord, RouteTableRecord, NetworkInterfaceRecord, InstanceRecord, DescribedRoute, AddRouteInput } from './records.ts';
import { Ec2Network } from './network-state.ts';

export * from './records.ts';

export class Ec2State extends Ec2Network {
  /** Which target fields a route to an attached interface is described with (records.ts, RouteTargetFields). */
  routeTargetFields: RouteTargetFields = 'both';
  /** Observer: a static route deleted, or replaced by another target (`before` as it was described). */
  onRouteRemoved?: (routeTableId: string, before: DescribedRoute) => void;
  /** Observer: an instance entered a state (the emulator sends its EC2 Instance State-change Notification). */
  onInstanceState?: (instanceId: string, state: 'shutting-down' | 'terminated') => void;

  /** Records a gateway id (igw-/vgw-...) that routes may target. */
  addGateway(id?: string): string {
    const gatewayId = id ?? this.nextId('igw');
    this.gateways.add(gatewayId);
    return gatewayId;
  }

  /** A route table with its `local` route(s), as CreateRouteTable makes it. */
  addRouteTable(input: { id?: string; vpcId?: string; tags?: Record<string, string> | Tag[] } = {}): RouteTableRecord {
    const vpc = input.vpcId === undefined ? this.defaultVpc() : this.vpc(input.vpcId);
    const routes: RouteRecord[] = [{ destination: vpc.cidrBlock, family: 4, target: { kind: 'local' }, origin: 'CreateRouteTable' }];
    if (vpc.ipv6CidrBlock !== undefined) {
      routes.push({ destination: vpc.ipv6CidrBlock, family: 6, target: { kind: 'local' }, origin: 'CreateRouteTable' });
    }
    const table: RouteTableRecord = { id: input.id ?? this.nextId('rtb'), vpcId: vpc.id, tags: toTags(input.tags), routes };
    this.assertFree(this.routeTables, table.id);
    this.routeTables.set(table.id, table);
    return table;
  }

  /**
   * A running instance with its primary interface (device index 0) and `secondaryEnis` more
   * interfaces (device indexes 1..N, as the VPC CNI, Multus or EFA attach them), each with its own
   * id, address in the subnet and source/destination check. Without a subnet it lands in the first
   * subnet of its zone, created on demand in the default VPC.
   */
  addInstance(input: {
    id?: string;
    subnetId?: string;
    availabilityZone?: string;
    privateIpAddress?: string;
    privateDnsName?: string;
    /**
     * The primary interface's check; secondary interfaces start with it on, as EC2 creates them
     * (EC2 API reference, NetworkInterface.SourceDestCheck and ModifyNetworkInterfaceAttribute:
     * the check is enabled on a new interface until it is turned off).
     */
    sourceDestCheck?: boolean;
    secondaryEnis?: number;
    /** Default m5.large; an unknown type gets m5.large's limits (instance-types.ts). */
    instanceType?: string;
    tags?: Record<string, string> | Tag[];
    /** Tags of the primary interface (none by default: instance tags do not reach interfaces). */
    primaryInterfaceTags?: Record<string, string> | Tag[];
  } = {}): InstanceRecord {
    const secondary = input.secondaryEnis ?? 0;
    if (!Number.isInteger(secondary) || secondary < 0 || secondary > MAX_SECONDARY_ENIS) {
      throw new RangeError(`secondaryEnis ${secondary}: want a whole number from 0 to ${MAX_SECONDARY_ENIS}`);
    }
    const subnet = input.subnetId === undefined ? this.subnetInZone(input.availabilityZone ?? DEFAULT_ZONE) : this.subnet(input.subnetId);
    const id = input.id ?? this.nextId('i');
    this.assertFree(this.instances, id);
    const privateIpAddress = this.takeIp(subnet, input.privateIpAddress);
    const privateDnsName = input.privateDnsName ?? dnsNameFor(privateIpAddress);
    const launchedAtMs = this.now();
    const launchTime = new Date(launchedAtMs).toISOString();
    const eniIds: string[] = [];
    for (let deviceIndex = 0; deviceIndex <= secondary; deviceIndex++) {
      const address = deviceIndex === 0 ? privateIpAddress : this.takeIp(subnet, undefined);
      const eni: NetworkInterfaceRecord = {
        id: this.nextId('eni'),
        subnetId: subnet.id,
        vpcId: subnet.vpcId,
        availabilityZone: subnet.availabilityZone,
        privateIpAddress: address,
        privateDnsName: deviceIndex === 0 ? privateDnsName : dnsNameFor(address),
        macAddress: macFor(this.networkInterfaces.size + 1),
        sourceDestCheck: deviceIndex === 0 ? (input.sourceDestCheck ?? true) : true,
        ipv4Prefixes: [],
        ipv6Prefixes: [],
        attachment: { attachmentId: this.nextId('eni-attach'), instanceId: id, deviceIndex, attachTime: launchTime },
        tags: deviceIndex === 0 ? toTags(input.primaryInterfaceTags) : [],
        createdAtMs: launchedAtMs,
      };
      this.networkInterfaces.set(eni.id, eni);
      eniIds.push(eni.id);
    }
    const instance: InstanceRecord = {
      id,
      subnetId: subnet.id,
      vpcId: subnet.vpcId,
      availabilityZone: subnet.availabilityZone,
      privateIpAddress,
      privateDnsName,
      launchTime,
      instanceType: input.instanceType ?? DEFAULT_INSTANCE_TYPE,
      launchedAtMs,
      state: 'running',
      tags: toTags(input.tags),
      networkInterfaceIds: eniIds,
    };
    this.instances.set(id, instance);
    return instance;
  }

  /**
   * Terminates an instance, through `shutting-down`: its interfaces are deleted, so routes through them become
   * blackholes (EC2 API reference, Route: State `blackhole` means the route's target is not available).
   */
  terminateInstance(id: string): void {
    const instance = this.instances.get(id);
    if (!instance) throw new Error(`no instance ${id}`);
    this.onInstanceState?.(id, 'shutting-down');
    for (const eniId of instance.networkInterfaceIds) {
      const eni = this.networkInterfaces.get(eniId);
      if (eni) this.usedIps.get(eni.subnetId)?.delete(ipValue(eni.privateIpAddress));
      this.networkInterfaces.delete(eniId);
    }
    instance.networkInterfaceIds = [];
    instance.state = 'terminated';
    this.onInstanceState?.(id, 'terminated');
  }

  /** Source/dest check of an instance is the one of its primary interface. */
  sourceDestCheck(instanceId: string): boolean {
    const eni = this.primaryInterface(instanceId);
    return eni?.sourceDestCheck ?? true;
  }

  primaryInterface(instanceId: string): NetworkInterfaceRecord | undefined {
    const first = this.instances.get(instanceId)?.networkInterfaceIds[0];
    return first === undefined ? undefined : this.networkInterfaces.get(first);
  }

  /** Routes of a table as DescribeRouteTables shows them. Throws for an unknown table. */
  routes(tableId: string): DescribedRoute[] {
    const table = this.routeTables.get(tableId);
    if (!table) throw new Error(`no route table ${tableId}`);
    return table.routes.map((route) => this.describeRoute(route));
  }

  describeRoute(route: RouteRecord): DescribedRoute {
    const destination = route.family === 4 ? { destinationCidrBlock: route.destination } : { destinationIpv6CidrBlock: route.destination };
    const base = { ...destination, origin: route.origin };
    switch (route.target.kind) {
      case 'local':
        return { ...base, gatewayId: 'local', state: 'active' };
      case 'gateway':
        return { ...base, gatewayId: route.target.gatewayId, state: this.gateways.has(route.target.gatewayId) ? 'active' : 'blackhole' };
      case 'interface': {
        const eni = this.networkInterfaces.get(route.target.networkInterfaceId);
        const attached = eni?.attachment;
        if (!eni) return { ...base, networkInterfaceId: route.target.networkInterfaceId, state: 'blackhole' };
        if (!attached) return { ...base, networkInterfaceId: eni.id, state: 'blackhole' };
        const instance = { instanceId: attached.instanceId, instanceOwnerId: ACCOUNT_ID };
        if (this.routeTargetFields === 'as-created') {
          return route.target.createdWith === 'instance' ? { ...base, ...instance, state: 'active' } : { ...base, networkInterfaceId: eni.id, state: 'active' };
        }
        return { ...base, networkInterfaceId: eni.id, ...instance, state: 'active' };
      }
    }
  }

  /** Adds a route with CreateRoute's rules (quota included); throws `Ec2ApiError`. */
  addRoute(input: AddRouteInput): RouteRecord {
    const table = this.table(input.routeTableId);
    const dest = parseDestination(input.destinationCidr, 'destinationCidrBlock');
    const target = this.resolveTarget(input);
    if (table.routes.some((r) => isStatic(r) && r.destination === formatCidr(dest))) {
      throw new Ec2ApiError('RouteAlreadyExists', `The route identified by ${formatCidr(dest)} already exists.`);
    }
    // Amazon VPC User Guide, "Amazon VPC quotas": "Routes per route table (non-propagated routes)"
    // (default 50, adjustable to 1,000) is a quota apart from "Propagated routes per route table".
    const used = table.routes.filter((r) => r.origin === 'CreateRoute').length;
    if (used >= this.routeLimit) {
      throw new Ec2ApiError('RouteLimitExceeded', `The maximum number of routes has been reached for ${table.id}.`);
    }
    const route: RouteRecord = { destination: formatCidr(dest), family: dest.family, target, origin: 'CreateRoute' };
    table.routes.push(route);
    return route;
  }

  /**
   * Test only: a route a virtual private gateway propagates into the table (`Origin:
   * EnableVgwRoutePropagation`, target the gateway), which no route call changes. It may share its
   * destination with a static route: EC2 keeps both and the static one takes priority (Amazon VPC
   * User Guide, "How route priority works", its example table holds 172.31.0.0/24 -> vgw-…
   * (propagated) beside 172.31.0.0/24 -> igw-… (static)); DescribeRouteTables lists both. Propagated
   * routes do not count against the quota of routes added with CreateRoute (Amazon VPC User Guide,
   * "Amazon VPC quotas": non-propagated and propagated routes per route table are two quotas).
   */
  addPropagatedRoute(input: { routeTableId: string; destinationCidr: string; gatewayId?: string }): RouteRecord {
    const table = this.table(input.routeTableId);
    const dest = parseDestination(input.destinationCidr, 'destinationCidrBlock');
    const gatewayId = this.addGateway(input.gatewayId ?? this.nextId('vgw'));
    const destination = formatCidr(dest);
    if (table.routes.some((r) => !isStatic(r) && r.destination === destination && r.target.kind === 'gateway' && r.target.gatewayId === gatewayId)) {
      throw new Error(`${gatewayId} already propagates ${destination} into ${table.id}`);
    }
    const route: RouteRecord = { destination, family: dest.family, target: { kind: 'gateway', gatewayId }, origin: 'EnableVgwRoutePropagation' };
    table.routes.push(route);
    return route;
  }

  replaceRoute(input: AddRouteInput): RouteRecord {
    const table = this.table(input.routeTableId);
    const dest = formatCidr(parseDestination(input.destinationCidr, 'destinationCidrBlock'));
    const target = this.resolveTarget(input);
    const route = table.routes.find((r) => isStatic(r) && r.destination === dest);
    if (!route) {
      // EC2 answers InvalidParameterValue here, not InvalidRoute.NotFound (checked against AWS in
      // getmoto/moto#6425; the EC2 API reference, ReplaceRoute, does not name the code).
      throw new Ec2ApiError('InvalidParameterValue', `There is no route defined for '${dest}' in the route table. Use CreateRoute instead.`);
    }
    if (route.target.kind === 'local') {
      throw new Ec2ApiError('InvalidParameterValue', `The route identified by ${dest} is the local route and cannot be replaced.`);
    }
    const before = this.describeRoute(route);
    route.target = target;
    this.onRouteRemoved?.(table.id, before);
    return route;
  }

  deleteRoute(input: { routeTableId: string; destinationCidr: string }): void {
    const table = this.table(input.routeTableId);
    const dest = formatCidr(parseDestination(input.destinationCidr, 'destinationCidrBlock'));
    const index = table.routes.findIndex((r) => isStatic(r) && r.destination === dest);
    const route = table.routes[index];
    if (!route) {
      throw new Ec2ApiError('InvalidRoute.NotFound', `No route with destination-cidr-block ${dest} in route table ${table.id}`);
    }
    if (route.target.kind === 'local') {
      throw new Ec2ApiError('InvalidParameterValue', `cannot remove local route ${dest} in route table ${table.id}`);
    }
    const before = this.describeRoute(route);
    table.routes.splice(index, 1);
    this.onRouteRemoved?.(table.id, before);
  }

  /**
   * Delegates `/28` (IPv4) or `/80` (IPv6) prefixes to an interface, given or picked by EC2. Amazon EC2
   * User Guide, "Assign prefixes to network interfaces":
   * - a prefix lies inside the CIDR block of the interface's subnet (else `InvalidParameterValue`) and
   *   is free: no other interface's prefix, no address in use (the subnet's own five included);
   * - with a count, EC2 chooses: from the subnet's `prefix` reservations when it has any (Amazon VPC
   *   User Guide, "Subnet CIDR reservations": `prefix` means AWS assigns the range to interfaces),
   *   else from the rest of the subnet, never inside an `explicit` reservation. No room is
   *   `InsufficientCidrBlocks` (its text as reported in aws/amazon-vpc-cni-k8s#1836);
   * - each prefix takes one of the interface's address slots (instance-types.ts): past the limit,
   *   `PrivateIpAddressLimitExceeded`, and nothing is assigned.
   */
  assignPrefixes(eniId: string, family: Family, input: { prefixes: string[]; count: number | undefined }): string[] {
    const eni = this.networkInterface(eniId);
    const subnet = this.subnet(eni.subnetId);
    const size = family === 4 ? 28 : 80;
    const blockText = family === 4 ? subnet.cidrBlock : subnet.ipv6CidrBlock;
    const param = family === 4 ? 'Ipv4Prefix' : 'Ipv6Prefix';
    if (blockText === undefined) {
      throw new Ec2ApiError('InvalidParameterValue', `Subnet ${subnet.id} has no IPv6 CIDR block; IPv6 prefixes cannot be assigned.`);
    }
    if (input.prefixes.length > 0 && input.count !== undefined) {
      throw new Ec2ApiError('InvalidParameterCombination', `${param} and ${param}Count cannot be used together.`);
    }
    if (input.prefixes.length === 0 && input.count === undefined) {
      throw new Ec2ApiError('MissingParameter', `The request must contain the parameter ${param} or ${param}Count.`);
    }
    const wanted = input.prefixes.length > 0 ? input.prefixes.length : (input.count ?? 0);
    if (input.count !== undefined && input.count < 1) throw new Ec2ApiError('InvalidParameterValue', `Value (${input.count}) for parameter ${param}Count is invalid.`);
    this.assertSlots(eni, family, wanted);
    const block = tryParseCidr(blockText);
    if (!block) throw new Error(`bad subnet block ${blockText}`);
    const taken = this.subnetPrefixes(subnet.id, family);
    const chosen: Cidr[] = [];
    const isFree = (candidate: Cidr) =>
      !taken.some((t) => overlaps(t, candidate)) && !chosen.some((c) => overlaps(c, candidate)) && !(family === 4 && this.addressInside(subnet.id, block, candidate));
    if (input.prefixes.length > 0) {
      for (const text of input.prefixes) {
        const cidr = tryParseCidr(text);
        if (!cidr || cidr.family !== family || cidr.prefix !== size || formatCidr(cidr) !== text) {
          throw new Ec2ApiError('InvalidParameterValue', `Value (${text}) for parameter ${param} is invalid. Expected a /${size} prefix.`);
        }
        if (!containsCidr(block, cidr)) {
          throw new Ec2ApiError('InvalidParameterValue', `Prefix ${text} is not in the CIDR block of subnet ${subnet.id}.`);
        }
        // A prefix already assigned anywhere, this interface included, is refused. EC2's documents
        // do not say what it answers for the same interface (error or success): this is an
        // assumption, and podroute takes either (lib/dataplane/prefixes/prefix-node-sync.ts re-reads the interface).
        if (!isFree(cidr)) {
          throw new Ec2ApiError('InvalidParameterValue', `Prefix ${text} is already assigned or in use in subnet ${subnet.id}.`);
        }
        chosen.push(cidr);
      }
    } else {
      const reservations = this.reservationsOf(subnet.id, family);
      const fromReservations = reservations.filter((r) => r.type === 'prefix').map((r) => parsed(r.cidr));
      const pools = fromReservations.length > 0 ? fromReservations : [block];
      // Outside `prefix` reservations EC2 keeps off every reservation (only `explicit` ones remain then).
      const kept = fromReservations.length > 0 ? [] : reservations.map((r) => parsed(r.cidr));
      for (let n = 0; n < wanted; n++) {
        const pick = this.pickBlock(pools, size, (c) => isFree(c) && !kept.some((k) => overlaps(k, c)));
        if (!pick) {
          throw new Ec2ApiError('InsufficientCidrBlocks', 'The specified subnet does not have enough free cidr blocks to satisfy the request.');
        }
        chosen.push(pick);
      }
    }
    const texts = chosen.map(formatCidr);
    (family === 4 ? eni.ipv4Prefixes : eni.ipv6Prefixes).push(...texts);
    return texts;
  }

  /** A free /`size` block of one of the pools (a pool picked at random, as EC2 does), or null. */
  private pickBlock(pools: Cidr[], size: number, free: (candidate: Cidr) => boolean): Cidr | null {
    const order = pools.map((pool) => ({ pool, key: this.random() })).sort((a, b) => a.key - b.key);
    for (const { pool } of order) {
      const index = probe(this.random, blocksIn(pool, size), (i) => free({ family: pool.family, prefix: size, network: blockRange(pool, size, i)[0] }));
      if (index !== null) return { family: pool.family, prefix: size, network: blockRange(pool, size, index)[0] };
    }
    return null;
  }

  /** Refuses `adding` more prefixes past the interface's address limit of its instance's type. */
  private assertSlots(eni: NetworkInterfaceRecord, family: Family, adding: number): void {
    const instanceId = eni.attachment?.instanceId;
    const instance = instanceId === undefined ? undefined : this.instances.get(instanceId);
    const limits = limitsOf(instance?.instanceType ?? DEFAULT_INSTANCE_TYPE);
    // IPv4: the primary address takes a slot; IPv6: the emulator's interfaces hold no IPv6 address.
    const used = family === 4 ? 1 + eni.ipv4Prefixes.length : eni.ipv6Prefixes.length;
    const limit = family === 4 ? limits.ipv4PerInterface : limits.ipv6PerInterface;
    if (used + adding > limit) throw new Ec2ApiError('PrivateIpAddressLimitExceeded', 'Number of private addresses will exceed limit.');
  }

  // ----- subnet CIDR reservations (reservations.ts) -----

  /**
   * The error EC2 gives for an instance-level call that belongs to an interface when the instance
   * has more than one (ModifyInstanceAttribute SourceDestCheck; CreateRoute/ReplaceRoute with
   * InstanceId). Code and text as EC2 answers them (HTTP 400, code `InvalidInstanceID`), reported
   * in aws/aws-cdk#13791 and hashicorp/terraform-provider-aws#7107 and #2270; the CreateRoute API
   * reference: "The operation fails if you specify an instance ID unless exactly one network
   * interface is attached."
   */
  assertSingleInterface(instance: InstanceRecord): void {
    if (instance.networkInterfaceIds.length > 1) {
      throw new Ec2ApiError(
        'InvalidInstanceID',
        `There are multiple interfaces attached to instance '${instance.id}'. Please specify an interface ID for the operation instead.`,
      );
    }
  }

  // ----- lookups that throw the API's NotFound errors -----

  private resolveTarget(input: AddRouteInput): RouteTarget {
    const given = [input.instanceId, input.networkInterfaceId, input.gatewayId].filter((v) => v !== undefined);
    if (given.length === 0) throw new Ec2ApiError('MissingParameter', 'The request must contain exactly one route target.');
    if (given.length > 1) throw new Ec2ApiError('InvalidParameterCombination', 'More than one route target was specified.');
    if (input.gatewayId !== undefined) {
      if (!this.gateways.has(input.gatewayId)) {
        throw new Ec2ApiError('InvalidGatewayID.NotFound', `The gateway ID '${input.gatewayId}' does not exist`);
      }
      return { kind: 'gateway', gatewayId: input.gatewayId };
    }
    if (input.instanceId !== undefined) {
      const instance = this.instance(input.instanceId);
      const primary = instance.networkInterfaceIds[0];
      if (instance.state !== 'running' || primary === undefined) {
        throw new Ec2ApiError('IncorrectInstanceState', `The instance '${instance.id}' is not in a state from which it can be a route target.`);
      }
      this.assertSingleInterface(instance);
      return { kind: 'interface', networkInterfaceId: primary, createdWith: 'instance' };
    }
    return { kind: 'interface', networkInterfaceId: this.networkInterface(input.networkInterfaceId ?? '').id, createdWith: 'interface' };
  }

  /**
   * AvailableIpAddressCount of DescribeSubnets: the subnet's IPv4 addresses less its five, those in
   * use and those inside delegated prefixes (Amazon VPC User Guide, "Subnet CIDR blocks").
   */
  availableIpv4Count(subnetId: string): number {
    const block = parsed(this.subnet(subnetId).cidrBlock);
    const prefixed = this.subnetPrefixes(subnetId, 4).reduce((sum, p) => sum + 2 ** (32 - p.prefix), 0);
    return Math.max(0, 2 ** (32 - block.prefix) - 5 - (this.usedIps.get(subnetId)?.size ?? 0) - prefixed);
  }
}
