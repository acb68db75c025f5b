/**
 * EC2 route tables as podroute reads them: a loose schema for the PascalCase shape of both
 * `aws ec2 describe-route-tables --output json` and the SDK's DescribeRouteTables (absent, `undefined`
 * and `null` fields alike), normalised to the plain values the planner works on. A route to a prefix
 * list or with an unparseable CIDR is never touched: it is only counted in `skippedRoutes`.
 */
import * as z from '../util/zod-mini.ts';
import { type Family, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { formatPath } from '../util/issue-path.ts';

const optionalText = () => z.nullish(z.string());

const ec2RouteSchema = z.onFirstUse(() => z.looseObject({
  DestinationCidrBlock: optionalText(),
  DestinationIpv6CidrBlock: optionalText(),
  DestinationPrefixListId: optionalText(),
  GatewayId: optionalText(),
  InstanceId: optionalText(),
  InstanceOwnerId: optionalText(),
  NetworkInterfaceId: optionalText(),
  NatGatewayId: optionalText(),
  TransitGatewayId: optionalText(),
  VpcPeeringConnectionId: optionalText(),
  EgressOnlyInternetGatewayId: optionalText(),
  CarrierGatewayId: optionalText(),
  LocalGatewayId: optionalText(),
  CoreNetworkArn: optionalText(),
  // RouteState in the EC2 API model (@aws-sdk/client-ec2 models: RouteState): active | blackhole |
  // filtered (a route VPC Route Server installed and then filtered).
  State: z.enum(['active', 'blackhole', 'filtered'], { error: 'State must be "active", "blackhole" or "filtered"' }),
  // RouteOrigin in the EC2 API model: CreateRouteTable | CreateRoute | EnableVgwRoutePropagation | Advertisement.
  Origin: optionalText(),
}));

const ec2TagSchema = z.onFirstUse(() => z.looseObject({ Key: optionalText(), Value: optionalText() }));

const ec2RouteTableSchema = z.onFirstUse(() => z.looseObject({
  RouteTableId: z.string({ error: 'RouteTableId must be a string' }).check(z.minLength(1, 'RouteTableId must not be empty')),
  VpcId: optionalText(),
  Tags: z.nullish(z.array(ec2TagSchema())),
  Routes: z.nullish(z.array(ec2RouteSchema())),
}));

const describeRouteTablesSchema = z.onFirstUse(() => z.looseObject(
  { RouteTables: z.array(ec2RouteTableSchema(), { error: 'RouteTables must be an array of route tables' }) },
  { error: 'want an object {"RouteTables": [...]}' },
));

type Ec2Route = z.infer<ReturnType<typeof ec2RouteSchema>>;
type Ec2RouteTable = z.infer<ReturnType<typeof ec2RouteTableSchema>>;

/**
 * What a route sends traffic to: an EC2 instance (`InstanceId` set; EC2 also shows the instance's
 * ENI then), only a network interface, a gateway of any kind (internet, NAT, transit, peering,
 * egress-only, carrier, local, VPC endpoint, core network), the VPC's own `local` route, or a
 * target we do not know.
 */
type RouteTarget = 'instance' | 'interface' | 'gateway' | 'local' | 'other';

export interface Route {
  readonly routeTableId: string;
  /** Canonical text: host bits cleared, IPv6 per RFC 5952. */
  readonly destinationCidr: string;
  readonly family: Family;
  readonly instanceId: string | null;
  readonly networkInterfaceId: string | null;
  readonly target: RouteTarget;
  /** The gateway's id (`local` for the VPC's own route), present only for those two targets. */
  readonly gatewayId?: string;
  /** `State: "blackhole"`: the target is gone and the route sends traffic nowhere. */
  readonly blackhole: boolean;
  /**
   * Set when the route was not made with CreateRoute and no route call can change it: `vgw` for
   * `Origin: EnableVgwRoutePropagation` (a virtual private gateway propagates it; it goes only when
   * propagation is disabled or the VPN withdraws it: Amazon VPC User Guide, "Route propagation"),
   * `route-server` for `Origin: Advertisement` (installed by VPC Route Server). Absent otherwise.
   */
  readonly propagated?: 'vgw' | 'route-server';
}

export interface RouteTable {
  readonly routeTableId: string;
  readonly vpcId: string | null;
  /** Tag key -> value (own properties only; look up with `Object.hasOwn`). */
  readonly tags: Readonly<Record<string, string>>;
  /** Routes with a CIDR destination that parses, in input order. */
  readonly routes: readonly Route[];
  /** Routes left out of `routes`: prefix-list destinations and unparseable CIDRs. Never touched. */
  readonly skippedRoutes: number;
}

/** The tag that marks a route table (or any resource) as belonging to a cluster. */
/**
 * An EC2 route table id: `rtb-` and 8 (older resources) or 17 lowercase hex characters (Amazon EC2
 * User Guide, "Resource IDs": short ids until 2016-2018, long ids since).
 */
export const ROUTE_TABLE_ID = /^rtb-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

export const clusterTagKey = (clusterName: string): string => `kubernetes.io/cluster/${clusterName}`;

/** True when the table carries the cluster tag, with any value (`owned`, `shared`, ...). */
export const isClusterTable = (table: RouteTable, clusterName: string): boolean =>
  Object.hasOwn(table.tags, clusterTagKey(clusterName));

/**
 * Validates a DescribeRouteTables result (`{"RouteTables": [...]}`) and normalises its tables.
 * Throws InvalidInputError naming the first bad path, e.g. `RouteTables[0].Routes[2].State`.
 */
export function parseRouteTables(value: unknown): RouteTable[] {
  const result = describeRouteTablesSchema().safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? formatPath(issue.path, '(top level)') : '(top level)';
    const message = issue?.message ?? 'invalid value';
    throw new InvalidInputError(`not an EC2 DescribeRouteTables result: ${where}: ${message}`, { cause: result.error });
  }
  return result.data.RouteTables.map(normaliseRouteTable);
}

/** Normalises one already-validated table. */
function normaliseRouteTable(raw: Ec2RouteTable): RouteTable {
  const tags: Record<string, string> = {};
  for (const tag of raw.Tags ?? []) {
    // defineProperty, not assignment: a key such as `__proto__` stays a plain own property.
    if (typeof tag.Key === 'string' && !Object.hasOwn(tags, tag.Key)) {
      Object.defineProperty(tags, tag.Key, { value: tag.Value ?? '', enumerable: true, writable: true, configurable: true });
    }
  }
  const routes: Route[] = [];
  let skippedRoutes = 0;
  for (const route of raw.Routes ?? []) {
    const normal = normaliseRoute(raw.RouteTableId, route);
    if (normal) routes.push(normal);
    else skippedRoutes++;
  }
  return { routeTableId: raw.RouteTableId, vpcId: raw.VpcId ?? null, tags, routes, skippedRoutes };
}

/**
 * How a route was propagated, or undefined for a static (CreateRoute) route. EC2 API model,
 * Route.Origin: `EnableVgwRoutePropagation` (a virtual private gateway) and `Advertisement` (VPC
 * Route Server); Route.State `filtered` is a Route Server route kept out of the table. Propagated
 * routes are never changed by podroute: DeleteRoute and ReplaceRoute act on CreateRoute routes.
 */
function propagationOf(raw: { Origin?: string | null | undefined; State?: string | null | undefined }): 'vgw' | 'route-server' | undefined {
  if (raw.Origin === 'EnableVgwRoutePropagation') return 'vgw';
  if (raw.Origin === 'Advertisement' || raw.State === 'filtered') return 'route-server';
  return undefined;
}

/** Normalises one route, or returns null when it has no CIDR destination we can read. */
function normaliseRoute(routeTableId: string, raw: Ec2Route): Route | null {
  const v4 = raw.DestinationCidrBlock ?? null;
  const v6 = raw.DestinationIpv6CidrBlock ?? null;
  if ((v4 === null) === (v6 === null)) return null; // a prefix list, nothing, or both (malformed)
  const cidr = tryParseCidr(v4 ?? v6);
  if (!cidr || cidr.family !== (v4 !== null ? 4 : 6)) return null;
  const propagated = propagationOf(raw);
  return {
    routeTableId,
    destinationCidr: formatCidr(cidr),
    family: cidr.family,
    instanceId: raw.InstanceId || null,
    networkInterfaceId: raw.NetworkInterfaceId || null,
    ...targetOf(raw),
    blackhole: raw.State === 'blackhole',
    ...(propagated === undefined ? {} : { propagated }),
  };
}

/**
 * The one classifier of route targets (the planner, the worker and the adapter all read its answer
 * on `Route`). EC2 API reference, Route: a route names one target, and a route to an instance's
 * interface names the instance too. The gateway fields are every kind of gateway the model has.
 */
function targetOf(raw: Ec2Route): { target: RouteTarget; gatewayId?: string } {
  if (raw.GatewayId === 'local') return { target: 'local', gatewayId: 'local' };
  if (raw.InstanceId) return { target: 'instance' };
  if (raw.NetworkInterfaceId) return { target: 'interface' };
  const gateway =
    raw.GatewayId ||
    raw.NatGatewayId ||
    raw.TransitGatewayId ||
    raw.VpcPeeringConnectionId ||
    raw.EgressOnlyInternetGatewayId ||
    raw.CarrierGatewayId ||
    raw.LocalGatewayId ||
    raw.CoreNetworkArn;
  return gateway ? { target: 'gateway', gatewayId: gateway } : { target: 'other' };
}

