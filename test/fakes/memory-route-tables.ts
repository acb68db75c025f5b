/**
 * MemoryRouteTables: the RouteTables and RouteTargets ports (lib/usecases/ports.ts) in memory, over one
 * simulated EC2, with the promises
 * Ec2RouteTables keeps over EC2: idempotent create (`exists`) and delete (`absent`), a conflict on
 * another target, RouteMissingError for a replace of nothing, static routes before propagated ones,
 * routes to an attached interface described with both the instance and the interface, blackholes
 * once the instance is gone. Tables are answered through the adapter's own translation
 * (`parseRouteTables`), so the use cases see what they would see from EC2.
 */
import { formatCidr, tryParseCidr, type Cidr } from '../../lib/cidr/cidr.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { clusterTagKey, parseRouteTables, type Route, type RouteTable } from '../../lib/routes/route-tables.ts';
import { ROUTE_TABLE_FULL_TAG, formatFullMark } from '../../lib/routes/table-full.ts';
import { ResourceNotFoundError, RouteConflictError, RouteMissingError, RouteTableFullError } from '../../lib/usecases/port-errors.ts';
import type { RouteSpec, RouteTables, RouteTargets } from '../../lib/usecases/ports.ts';

type Target = { kind: 'interface'; eniId: string } | { kind: 'gateway'; gatewayId: string } | { kind: 'local' };

interface StoredRoute {
  destination: string;
  family: 4 | 6;
  target: Target;
  /** EC2's Route.Origin. */
  origin: 'CreateRouteTable' | 'CreateRoute' | 'EnableVgwRoutePropagation';
}

interface StoredTable {
  id: string;
  tags: Record<string, string>;
  routes: StoredRoute[];
}

interface StoredInterface {
  id: string;
  instanceId: string | null;
  deviceIndex: number;
  sourceDestCheck: boolean;
}

/** The VPC's own blocks (the EC2 emulator's default VPC): a table starts with a `local` route to each, as CreateRouteTable makes it. */
const VPC_CIDR = '10.0.0.0/16';
const VPC_IPV6_CIDR = '2600:1f18:1234:5600::/56';
const VPC_ID = 'vpc-00000000000000001';

const hex = (n: number): string => n.toString(16).padStart(17, '0');

function destination(text: string): Cidr {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new InvalidInputError(`invalid route destination ${JSON.stringify(text)}: want an IPv4 or IPv6 CIDR`);
  return cidr;
}

const notFound = (operation: string, code: string, what: string) =>
  new ResourceNotFoundError(`${operation} ${what}: ${code}`, { operation, code, mayBeLaunchLag: code === 'InvalidInstanceID.NotFound' || code === 'InvalidNetworkInterfaceID.NotFound', cause: undefined });

export class MemoryRouteTables implements RouteTables, RouteTargets {
  private readonly tables = new Map<string, StoredTable>();
  private readonly interfaces = new Map<string, StoredInterface>();
  private readonly instances = new Map<string, string[]>();
  private next = 0;
  /** Every port call, in order, as `<method> <argument>`. */
  readonly calls: string[] = [];
  /** Routes added with CreateRoute per table before `RouteLimitExceeded` (EC2's default quota is 50). */
  routeLimit = 50;

  constructor(private readonly options: { clusterName: string }) {}

  // ---- the world: what EC2 holds before the use case runs ----------------------------------------

  /** A table with its `local` route; tagged for the cluster unless `tags` says otherwise. */
  addTable(input: { id?: string; tags?: Record<string, string> } = {}): string {
    const id = input.id ?? `rtb-${hex(++this.next)}`;
    if (this.tables.has(id)) throw new Error(`route table ${id} exists`);
    const tags = input.tags ?? { [clusterTagKey(this.options.clusterName)]: 'owned' };
    this.tables.set(id, {
      id,
      tags: { ...tags },
      routes: [
        { destination: VPC_CIDR, family: 4, target: { kind: 'local' }, origin: 'CreateRouteTable' },
        { destination: VPC_IPV6_CIDR, family: 6, target: { kind: 'local' }, origin: 'CreateRouteTable' },
      ],
    });
    return id;
  }

  /** A running instance with its primary interface (device index 0) and `secondaryEnis` more. */
  addInstance(input: { id?: string; sourceDestCheck?: boolean; secondaryEnis?: number } = {}): { instanceId: string; eniId: string; eniIds: string[] } {
    const instanceId = input.id ?? `i-${hex(++this.next)}`;
    if (this.instances.has(instanceId)) throw new Error(`instance ${instanceId} exists`);
    const eniIds: string[] = [];
    for (let deviceIndex = 0; deviceIndex <= (input.secondaryEnis ?? 0); deviceIndex++) {
      const id = `eni-${hex(++this.next)}`;
      this.interfaces.set(id, { id, instanceId, deviceIndex, sourceDestCheck: deviceIndex === 0 ? (input.sourceDestCheck ?? true) : true });
      eniIds.push(id);
    }
    this.instances.set(instanceId, eniIds);
    return { instanceId, eniId: eniIds[0] ?? '', eniIds };
  }

  /** Terminates an instance: its interfaces are deleted, so routes through them become blackholes. */
  terminateInstance(instanceId: string): void {
    for (const eniId of this.instances.get(instanceId) ?? []) this.interfaces.delete(eniId);
    this.instances.set(instanceId, []);
  }

  /** A static route made outside podroute's calls (to an instance's primary interface, an interface or a gateway). */
  addRoute(tableId: string, cidr: string, to: { instanceId: string } | { eniId: string } | { gatewayId: string }): void {
    const table = this.table(tableId, 'addRoute');
    const dest = destination(cidr);
    let target: Target;
    if ('instanceId' in to) target = { kind: 'interface', eniId: this.instances.get(to.instanceId)?.[0] ?? `eni-gone-${to.instanceId}` };
    else if ('eniId' in to) target = { kind: 'interface', eniId: to.eniId };
    else target = { kind: 'gateway', gatewayId: to.gatewayId };
    table.routes.push({ destination: formatCidr(dest), family: dest.family, target, origin: 'CreateRoute' });
  }

  /** A route a virtual private gateway propagates (no route call changes it). */
  addPropagatedRoute(tableId: string, cidr: string, gatewayId = 'vgw-00000000000000001'): void {
    const dest = destination(cidr);
    this.table(tableId, 'addPropagatedRoute').routes.push({ destination: formatCidr(dest), family: dest.family, target: { kind: 'gateway', gatewayId }, origin: 'EnableVgwRoutePropagation' });
  }

  /** A table's routes other than the local ones, as `cidr -> target` lines, sorted (as the world's `routeSummary`). */
  routeSummary(tableId: string): string[] {
    return this.describeTable(this.table(tableId, 'routeSummary'))
      .Routes.filter((r) => r.GatewayId !== 'local')
      .map((r) => `${r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock ?? '?'} -> ${r.InstanceId ?? r.GatewayId ?? r.NetworkInterfaceId ?? '?'}${r.State === 'blackhole' ? ' (blackhole)' : ''}`)
      .sort();
  }

  tags(tableId: string): Record<string, string> {
    return { ...this.table(tableId, 'tags').tags };
  }

  sourceDestCheck(eniId: string): boolean | undefined {
    return this.interfaces.get(eniId)?.sourceDestCheck;
  }

  /** Port calls whose name starts with `prefix`. */
  count(prefix: string): number {
    return this.calls.filter((call) => call.startsWith(prefix)).length;
  }

  // ---- the port ----------------------------------------------------------------------------------

  async listRouteTables(): Promise<RouteTable[]> {
    this.calls.push('listRouteTables');
    const tag = clusterTagKey(this.options.clusterName);
    return parseRouteTables({ RouteTables: [...this.tables.values()].filter((t) => Object.hasOwn(t.tags, tag)).map((t) => this.describeTable(t)) });
  }

  async createRoute(spec: RouteSpec): Promise<'created' | 'exists'> {
    this.calls.push(`createRoute ${spec.routeTableId} ${spec.destinationCidr}`);
    const dest = destination(spec.destinationCidr);
    const table = this.table(spec.routeTableId, 'CreateRoute');
    this.interfaceOrThrow(spec.networkInterfaceId, 'CreateRoute');
    const wanted = formatCidr(dest);
    if (table.routes.some((r) => isStatic(r) && r.destination === wanted)) {
      const existing = await this.read(table, wanted);
      if (existing && existing.networkInterfaceId === spec.networkInterfaceId && !existing.blackhole) return 'exists';
      throw new RouteConflictError(spec.routeTableId, spec.destinationCidr, spec.networkInterfaceId, {
        ...(existing?.networkInterfaceId ? { networkInterfaceId: existing.networkInterfaceId } : {}),
        ...(existing?.instanceId ? { instanceId: existing.instanceId } : {}),
        ...(existing?.gatewayId !== undefined ? { gatewayId: existing.gatewayId } : {}),
        state: existing?.blackhole ? 'blackhole' : 'active',
      });
    }
    if (table.routes.filter((r) => r.origin === 'CreateRoute').length >= this.routeLimit) {
      throw new RouteTableFullError(`CreateRoute ${table.id} ${wanted}: route table is full (RouteLimitExceeded)`, { operation: 'CreateRoute', routeTableId: table.id, code: 'RouteLimitExceeded', cause: undefined });
    }
    table.routes.push({ destination: wanted, family: dest.family, target: { kind: 'interface', eniId: spec.networkInterfaceId }, origin: 'CreateRoute' });
    return 'created';
  }

  async replaceRoute(spec: RouteSpec): Promise<void> {
    this.calls.push(`replaceRoute ${spec.routeTableId} ${spec.destinationCidr}`);
    const wanted = formatCidr(destination(spec.destinationCidr));
    const table = this.table(spec.routeTableId, 'ReplaceRoute');
    this.interfaceOrThrow(spec.networkInterfaceId, 'ReplaceRoute');
    const route = table.routes.find((r) => isStatic(r) && r.destination === wanted);
    if (!route) throw new RouteMissingError(spec.routeTableId, spec.destinationCidr);
    if (route.target.kind === 'local') throw new InvalidInputError(`ReplaceRoute ${table.id} ${wanted}: the local route cannot be replaced`);
    route.target = { kind: 'interface', eniId: spec.networkInterfaceId };
  }

  async deleteRoute(spec: { routeTableId: string; destinationCidr: string }): Promise<'deleted' | 'absent'> {
    this.calls.push(`deleteRoute ${spec.routeTableId} ${spec.destinationCidr}`);
    const wanted = formatCidr(destination(spec.destinationCidr));
    const table = this.table(spec.routeTableId, 'DeleteRoute');
    const index = table.routes.findIndex((r) => isStatic(r) && r.destination === wanted);
    const route = table.routes[index];
    if (!route) return 'absent';
    if (route.target.kind === 'local') throw new InvalidInputError(`DeleteRoute ${table.id} ${wanted}: the local route cannot be deleted`);
    table.routes.splice(index, 1);
    return 'deleted';
  }

  async describeRoute(routeTableId: string, destinationCidr: string): Promise<Route | null> {
    this.calls.push(`describeRoute ${routeTableId} ${destinationCidr}`);
    return this.read(this.table(routeTableId, 'DescribeRouteTables'), formatCidr(destination(destinationCidr)));
  }

  async prepareRouteTarget(instanceId: string): Promise<{ instanceId: string; primaryEniId: string; sourceDestCheckChanged: boolean }> {
    this.calls.push(`prepareRouteTarget ${instanceId}`);
    const eniIds = this.instances.get(instanceId);
    if (eniIds === undefined) throw notFound('DescribeInstances', 'InvalidInstanceID.NotFound', instanceId);
    const eni = eniIds.map((id) => this.interfaces.get(id)).find((e) => e?.deviceIndex === 0);
    if (!eni) {
      throw new ResourceNotFoundError(`DescribeInstances ${instanceId}: instance has no primary network interface`, { operation: 'DescribeInstances', code: undefined, mayBeLaunchLag: false, cause: undefined });
    }
    const changed = eni.sourceDestCheck;
    eni.sourceDestCheck = false;
    return { instanceId, primaryEniId: eni.id, sourceDestCheckChanged: changed };
  }

  async interfaceInstance(networkInterfaceId: string): Promise<string | null> {
    this.calls.push(`interfaceInstance ${networkInterfaceId}`);
    const eni = this.interfaces.get(networkInterfaceId);
    return eni?.deviceIndex === 0 && eni.instanceId !== null ? eni.instanceId : null;
  }

  async markRouteTableFull(routeTableId: string, mark: { routeCount: number; at: number }): Promise<void> {
    this.calls.push(`markRouteTableFull ${routeTableId}`);
    this.table(routeTableId, 'CreateTags').tags[ROUTE_TABLE_FULL_TAG] = formatFullMark(mark);
  }

  async clearRouteTableFull(routeTableId: string): Promise<void> {
    this.calls.push(`clearRouteTableFull ${routeTableId}`);
    delete this.table(routeTableId, 'DeleteTags').tags[ROUTE_TABLE_FULL_TAG];
  }

  // ---- inside ------------------------------------------------------------------------------------

  private table(id: string, operation: string): StoredTable {
    const table = this.tables.get(id);
    if (!table) throw notFound(operation, 'InvalidRouteTableID.NotFound', id);
    return table;
  }

  private interfaceOrThrow(eniId: string, operation: string): void {
    if (!this.interfaces.has(eniId)) throw notFound(operation, 'InvalidNetworkInterfaceID.NotFound', eniId);
  }

  /** The static route to the destination when there is one, else a propagated one, else null (as Ec2RouteTables.describeRoute). */
  private async read(table: StoredTable, wanted: string): Promise<Route | null> {
    const routes = (parseRouteTables({ RouteTables: [this.describeTable(table)] })[0]?.routes ?? []).filter((r) => r.destinationCidr === wanted);
    return routes.find((r) => r.propagated === undefined) ?? routes[0] ?? null;
  }

  /** The table as DescribeRouteTables answers it (PascalCase), so the one translation reads it. */
  private describeTable(table: StoredTable) {
    return {
      RouteTableId: table.id,
      VpcId: VPC_ID,
      Tags: Object.entries(table.tags).map(([Key, Value]) => ({ Key, Value })),
      Routes: table.routes.map((route) => ({
        DestinationCidrBlock: route.family === 4 ? route.destination : undefined,
        DestinationIpv6CidrBlock: route.family === 6 ? route.destination : undefined,
        Origin: route.origin,
        ...this.describeTarget(route.target),
      })),
    };
  }

  /** EC2 API reference, Route: a route to an attached interface names the instance too; a target gone is a blackhole. */
  private describeTarget(target: Target): { State: string; GatewayId?: string; NetworkInterfaceId?: string; InstanceId?: string } {
    if (target.kind === 'local') return { GatewayId: 'local', State: 'active' };
    if (target.kind === 'gateway') return { GatewayId: target.gatewayId, State: 'active' };
    const eni = this.interfaces.get(target.eniId);
    if (!eni || eni.instanceId === null) return { NetworkInterfaceId: target.eniId, State: 'blackhole' };
    return { NetworkInterfaceId: eni.id, InstanceId: eni.instanceId, State: 'active' };
  }
}

const isStatic = (route: StoredRoute): boolean => route.origin !== 'EnableVgwRoutePropagation';
