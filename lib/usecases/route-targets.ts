/**
 * The instance -> primary interface map by which the planner (PlanInput.primaryInterfaces; step 1a
 * of docs/decisions/0008-route-plan-rules.md) matches a route EC2 describes by NetworkInterfaceId
 * alone. EC2 is observed to give both ids for an attached interface (terraform-provider-aws#14197,
 * #1426; the EC2 API reference, Route, does not say), so the map is read only when needed.
 */
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Node } from '../nodes/node.ts';
import { instanceIdOf, podCidrsOf } from '../nodes/node.ts';
import type { LeaseTable } from '../routes/ownership.ts';
import { planRoutes } from '../routes/route-plan.ts';
import type { PlanInput, RoutePlan } from '../routes/route-plan.ts';
import type { RouteTable } from '../routes/route-tables.ts';
import type { EniPrefixes } from './ports.ts';

/** True when a static, active route whose destination `wanted` accepts names a network interface and no instance. */
export function hasBareInterfaceRoute(tables: readonly RouteTable[], wanted: (destinationCidr: string) => boolean): boolean {
  return tables.some((table) =>
    table.routes.some((r) => r.propagated === undefined && !r.blackhole && r.target === 'interface' && wanted(r.destinationCidr)),
  );
}

/** Instance id -> primary interface id of the nodes' instances, in as few DescribeInstances calls as EniPrefixes makes. */
export async function readPrimaryInterfaces(nodes: readonly Node[], interfaces: Pick<EniPrefixes, 'describeInterfaces'>): Promise<Map<string, string>> {
  const ids = nodes.map(instanceIdOf).filter((id): id is string => id !== null);
  const found = await interfaces.describeInterfaces(ids);
  return new Map([...found].map(([instanceId, eni]) => [instanceId, eni.networkInterfaceId]));
}

/**
 * One node's map, for the worker: read (through `primaryInterfaceOf`) only when a listed route of
 * the node's own pod CIDRs names an interface alone; empty otherwise.
 */
export async function nodePrimaryInterface(
  node: Node,
  tables: readonly RouteTable[],
  primaryInterfaceOf: (instanceId: string) => Promise<string>,
): Promise<Map<string, string>> {
  const instanceId = instanceIdOf(node);
  const mine = new Set(podCidrsOf(node).flatMap((text) => {
    const cidr = tryParseCidr(text);
    return cidr === null ? [] : [formatCidr(cidr)];
  }));
  if (instanceId === null || !hasBareInterfaceRoute(tables, (cidr) => mine.has(cidr))) return new Map();
  return new Map([[instanceId, await primaryInterfaceOf(instanceId)]]);
}

/**
 * The worker's plan for one node, its primary interface read first when a route of it needs one
 * to be matched. `world` is what the ownership decider needs (the node first, the nodes that may
 * contest it, the lease table: lib/usecases/route-worker-ownership.ts), so ownership is decided as
 * in reconcile.
 */
export async function planNode(
  world: { nodes: readonly Node[]; leaseTable: LeaseTable },
  tables: readonly RouteTable[],
  clusterCidrs: readonly string[],
  primaryInterfaceOf: (instanceId: string) => Promise<string>,
  nodeSelector?: PlanInput['nodeSelector'],
): Promise<RoutePlan> {
  const [node] = world.nodes;
  const primaryInterfaces = node ? await nodePrimaryInterface(node, tables, primaryInterfaceOf) : new Map<string, string>();
  return planRoutes({ nodes: world.nodes, routeTables: tables, clusterCidrs, primaryInterfaces, leaseTable: world.leaseTable, ...(nodeSelector ? { nodeSelector } : {}) });
}
