/**
 * The records of the in-memory EC2 world (state.ts) and the small parsers and formatters its
 * resources share.
 */
import { containsCidr, formatCidr, tryParseCidr } from '../../../lib/cidr/cidr.ts';
import type { Cidr, Family } from '../../../lib/cidr/cidr.ts';
import { Ec2ApiError } from './errors.ts';

export const ACCOUNT_ID = '123456789012';
export const DEFAULT_ZONE = 'us-east-1a';
/** More interfaces than any instance type takes (the largest allow a few dozen across their cards). */
export const MAX_SECONDARY_ENIS = 50;

export { Ec2ApiError } from './errors.ts';
export type { ReservationRecord, ReservationType } from './reservations.ts';

export interface Tag {
  key: string;
  value: string;
}

export interface VpcRecord {
  id: string;
  cidrBlock: string;
  ipv6CidrBlock: string | undefined;
}

export interface SubnetRecord {
  id: string;
  vpcId: string;
  cidrBlock: string;
  ipv6CidrBlock: string | undefined;
  availabilityZone: string;
  tags?: Tag[];
}

export type RouteTarget =
  | { kind: 'local' }
  | { kind: 'gateway'; gatewayId: string }
  /** `createdWith`: the parameter the route was made with (CreateRoute/ReplaceRoute: InstanceId or NetworkInterfaceId). */
  | { kind: 'interface'; networkInterfaceId: string; createdWith: 'instance' | 'interface' };

/**
 * Which target fields DescribeRouteTables shows for a route to an attached interface:
 * - `both`: NetworkInterfaceId and InstanceId (with InstanceOwnerId), whichever the route was made
 *   with. Real EC2 answers so (observed, not stated: hashicorp/terraform-provider-aws#14197 and
 *   #1426, hashicorp/terraform#4097 and #4311 report the field not given coming back); the EC2 API
 *   reference, Route, lists both fields without saying when each is present.
 * - `as-created`: only the field the route was made with, as an EC2 that keeps to the letter of
 *   the reference might (the instance's primary interface id for a route made with InstanceId is
 *   then not shown, and neither is the instance of a route made with NetworkInterfaceId).
 */
export type RouteTargetFields = 'both' | 'as-created';

export interface RouteRecord {
  /** Canonical destination CIDR. */
  destination: string;
  family: Family;
  target: RouteTarget;
  /** RouteOrigin (EC2 API model); `EnableVgwRoutePropagation` only through `addPropagatedRoute`. */
  origin: RouteOrigin;
}

export type RouteOrigin = 'CreateRouteTable' | 'CreateRoute' | 'EnableVgwRoutePropagation';

/**
 * Whether a route counts for CreateRoute, ReplaceRoute and DeleteRoute: every route but a propagated
 * one. A propagated route is changed by no route call (it goes when propagation stops: Amazon VPC
 * User Guide, "Route propagation"), and a static route to its destination may be created beside it
 * (Amazon VPC User Guide, "How route priority works": identical destinations, the static route takes
 * priority; terraform-provider-aws#36510/#36512 and ansible#43415 create such routes).
 */
export const isStatic = (route: RouteRecord): boolean => route.origin !== 'EnableVgwRoutePropagation';

export interface RouteTableRecord {
  id: string;
  vpcId: string;
  tags: Tag[];
  routes: RouteRecord[];
}

export interface NetworkInterfaceRecord {
  id: string;
  subnetId: string;
  vpcId: string;
  availabilityZone: string;
  privateIpAddress: string;
  privateDnsName: string;
  macAddress: string;
  sourceDestCheck: boolean;
  ipv4Prefixes: string[];
  ipv6Prefixes: string[];
  attachment: { attachmentId: string; instanceId: string; deviceIndex: number; attachTime: string } | undefined;
  /**
   * The interface's own tags. EC2 does not copy an instance's tags to its interfaces: a launch
   * template tags them only through a TagSpecification of ResourceType `network-interface`
   * (EC2 API reference, LaunchTemplateTagSpecificationRequest; RunInstances TagSpecification).
   */
  tags?: Tag[];
  /** When the interface was created (the emulator's clock), for the eventual-consistency window. */
  createdAtMs: number;
}

export interface InstanceRecord {
  id: string;
  subnetId: string;
  vpcId: string;
  availabilityZone: string;
  privateIpAddress: string;
  privateDnsName: string;
  launchTime: string;
  /** Its type; decides the per-interface address limits (instance-types.ts). */
  instanceType: string;
  /** The launch on the emulator's clock, for the eventual-consistency window. */
  launchedAtMs: number;
  state: 'running' | 'terminated';
  tags: Tag[];
  /** Interface ids attached to the instance, primary (device index 0) first. */
  networkInterfaceIds: string[];
}

/** A route as `routes(tableId)` reports it, in the shape DescribeRouteTables describes it. */
export interface DescribedRoute {
  destinationCidrBlock?: string;
  destinationIpv6CidrBlock?: string;
  gatewayId?: string;
  networkInterfaceId?: string;
  instanceId?: string;
  instanceOwnerId?: string;
  state: 'active' | 'blackhole';
  origin: RouteOrigin;
}

export interface AddRouteInput {
  routeTableId: string;
  destinationCidr: string;
  instanceId?: string;
  networkInterfaceId?: string;
  gatewayId?: string;
}

export const INSTANCE_STATES = { running: 16, terminated: 48 } as const;
export const instanceStateCode = (state: InstanceRecord['state']): number => INSTANCE_STATES[state];

/** Parses a route destination; a malformed one is the API's InvalidParameterValue. */
export function parseDestination(text: string, param: string): Cidr {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new Ec2ApiError('InvalidParameterValue', `Value (${text}) for parameter ${param} is invalid. This is not a valid CIDR block.`);
  return cidr;
}

export function canonical(text: string, family: Family, what: string): string {
  const cidr = tryParseCidr(text);
  if (!cidr || cidr.family !== family) throw new Error(`bad ${what} ${text}`);
  return formatCidr(cidr);
}

export function within(outerText: string, innerText: string): boolean {
  const outer = tryParseCidr(outerText);
  const inner = tryParseCidr(innerText);
  return outer !== null && inner !== null && containsCidr(outer, inner);
}


export function parsed(text: string): Cidr {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new Error(`bad CIDR ${text}`);
  return cidr;
}

export function ipValue(address: string): bigint {
  const cidr = tryParseCidr(`${address}/32`);
  if (!cidr) throw new Error(`bad IPv4 address ${address}`);
  return cidr.network;
}

export function dnsNameFor(address: string): string {
  return `ip-${address.replaceAll('.', '-')}.ec2.internal`;
}

export function macFor(n: number): string {
  const hex = n.toString(16).padStart(8, '0');
  return `02:00:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
}

export function toTags(tags: Record<string, string> | Tag[] | undefined): Tag[] {
  if (tags === undefined) return [];
  if (Array.isArray(tags)) return tags.map((t) => ({ key: t.key, value: t.value }));
  return Object.entries(tags).map(([key, value]) => ({ key, value }));
}
