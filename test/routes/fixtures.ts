/** Small builders for route-planner tests: nodes as the Kubernetes API has them, route tables as EC2 prints them. */
import { parseNode, type Node } from '../../lib/nodes/node.ts';
import { parseRouteTables, type RouteTable } from '../../lib/routes/route-tables.ts';

/** A valid EC2 instance id for a small number: i-00000000000000001 ... */
export const inst = (n: number): string => `i-${n.toString(16).padStart(17, '0')}`;

export interface NodeSpec {
  /** Instance number (see `inst`), an explicit instance id, or null for a node without providerID. */
  instance?: number | string | null;
  podCidrs?: string[];
  /** Only `spec.podCIDR` (old single-stack field). */
  podCidr?: string;
  networkUnavailable?: 'True' | 'False' | 'Unknown';
  providerId?: string;
  labels?: Record<string, string>;
  /** metadata.creationTimestamp (RFC 3339, as the API server writes it). */
  created?: string;
}

export function node(name: string, spec: NodeSpec = {}): Node {
  const instanceId = typeof spec.instance === 'number' ? inst(spec.instance) : spec.instance;
  const providerID = spec.providerId ?? (instanceId ? `aws:///us-east-1a/${instanceId}` : undefined);
  return parseNode({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-${name}`,
      ...(spec.created === undefined ? {} : { creationTimestamp: spec.created }),
      ...(spec.labels === undefined ? {} : { labels: spec.labels }),
    },
    spec: {
      ...(providerID === undefined ? {} : { providerID }),
      ...(spec.podCidr === undefined ? {} : { podCIDR: spec.podCidr }),
      ...(spec.podCidrs === undefined ? {} : { podCIDRs: spec.podCidrs, podCIDR: spec.podCidrs[0] }),
    },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        ...(spec.networkUnavailable === undefined ? [] : [{ type: 'NetworkUnavailable', status: spec.networkUnavailable, reason: 'RouteCreated' }]),
      ],
    },
  });
}

export type RouteSpec =
  | { to: string; instance: number | string; blackhole?: boolean }
  | { to: string; eni: string; blackhole?: boolean }
  | { to: string; gateway: string; blackhole?: boolean }
  | { to: string; nat: string; blackhole?: boolean }
  | { to: string; blackhole: true }
  | { to: string; vgw: string; blackhole?: boolean }
  | { prefixList: string; gateway: string };

/** One route as `aws ec2 describe-route-tables` prints it. */
export function rawRoute(spec: RouteSpec): Record<string, unknown> {
  const route: Record<string, unknown> = {};
  if ('prefixList' in spec) {
    route.DestinationPrefixListId = spec.prefixList;
  } else if (spec.to.includes(':')) {
    route.DestinationIpv6CidrBlock = spec.to;
  } else {
    route.DestinationCidrBlock = spec.to;
  }
  if ('instance' in spec) {
    route.InstanceId = typeof spec.instance === 'number' ? inst(spec.instance) : spec.instance;
    route.InstanceOwnerId = '123456789012';
    route.NetworkInterfaceId = `eni-${String(route.InstanceId).slice(2)}`;
  }
  if ('eni' in spec) route.NetworkInterfaceId = spec.eni;
  if ('gateway' in spec) route.GatewayId = spec.gateway;
  if ('nat' in spec) route.NatGatewayId = spec.nat;
  // A VGW-propagated route: GatewayId is the virtual private gateway, Origin EnableVgwRoutePropagation.
  if ('vgw' in spec) route.GatewayId = spec.vgw;
  route.Origin = 'vgw' in spec ? 'EnableVgwRoutePropagation' : 'CreateRoute';
  route.State = 'blackhole' in spec && spec.blackhole ? 'blackhole' : 'active';
  return route;
}

export interface TableSpec {
  id: string;
  routes: RouteSpec[];
  tags?: Record<string, string>;
}

export function rawTable(spec: TableSpec): Record<string, unknown> {
  return {
    RouteTableId: spec.id,
    VpcId: 'vpc-0123456789abcdef0',
    OwnerId: '123456789012',
    Associations: [],
    PropagatingVgws: [],
    Tags: Object.entries(spec.tags ?? {}).map(([Key, Value]) => ({ Key, Value })),
    Routes: spec.routes.map(rawRoute),
  };
}

/** Route tables through the real parser, as the CLI and the adapter get them. */
export const tables = (...specs: TableSpec[]): RouteTable[] => parseRouteTables({ RouteTables: specs.map(rawTable) });

/** A deterministic permutation (seeded LCG Fisher-Yates): tests stay reproducible. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    const a = out[i] as T;
    out[i] = out[j] as T;
    out[j] = a;
  }
  return out;
}
