/**
 * Routes mode: a node's pod CIDRs are routes to its instance in every route table of the cluster.
 * Reconcile reads the tables before the nodes (so a node listed after them covers every route the
 * worker made), plans with the route planner (lib/routes/route-plan.ts), and the worker marks a node
 * ready once every table has its routes (lib/usecases/route-writes.ts).
 */
import type { Config } from '../../config.ts';
import type { CidrSet } from '../../ipam/index.ts';
import type { Node } from '../../nodes/node.ts';
import { decideNodeSync, nodeSyncConfig, syncNodeDualStack } from '../../nodesync/index.ts';
import type { DualStackKubeNodes } from '../../nodesync/index.ts';
import { isResponsibleForRoute } from '../../routes/index.ts';
import type { LeaseTable, RouteTable } from '../../routes/index.ts';
import { planRoutesCounted } from '../../routes/route-plan.ts';
import type { EniPrefixes, RouteTables } from '../../usecases/ports.ts';
import { hasBareInterfaceRoute, readPrimaryInterfaces } from '../../usecases/route-targets.ts';
import { applyDelete, applyRoute, syncNodeRoutes } from '../../usecases/route-writes.ts';
import { lacksPodCidrFamily, settled } from '../data-plane.ts';
import type { DataPlane, PlaneRun, PlannedNodeSync, RunRead } from '../data-plane.ts';
import { routesReadiness } from './readiness.ts';
import { routeAlias } from './route-alias.ts';

type RoutesConfig = Pick<Config, 'clusterCidrs' | 'nodeSyncMode' | 'maxDeleteShare' | 'minDeletesForGuard'> & Partial<Pick<Config, 'nodeSelector'>>;

export interface RoutesPlanePorts {
  config: RoutesConfig;
  routeTables: Pick<RouteTables, 'listRouteTables'>;
  /** One CIDR set per cluster CIDR, in the order of `config.clusterCidrs`. */
  cidrSets: CidrSet[];
  /** The nodes' primary interfaces, read when a route names an interface alone; null: never read. */
  interfaces: Pick<EniPrefixes, 'describeInterfaces'> | null;
}

export function routesPlane(ports: RoutesPlanePorts): DataPlane {
  const { config, cidrSets } = ports;
  const syncNode = async (node: Node, kube: DualStackKubeNodes, tables: RouteTable[]): Promise<string> => {
    await syncNodeDualStack({ kind: 'update', nodeName: node.metadata.name, node }, { mode: config.nodeSyncMode, cidrSets, cloud: routeAlias(tables, config.clusterCidrs), kube });
    return 'synced';
  };
  // The same decision `syncNode` applies, over the same alias, answered instead of applied.
  const planNodeSync = async (node: Node, tables: RouteTable[]): Promise<PlannedNodeSync> => {
    const aliases = await routeAlias(tables, config.clusterCidrs).alias(node);
    const sync = nodeSyncConfig(config.nodeSyncMode, cidrSets.map((set) => set.clusterCidr));
    return { node: node.metadata.name, outcome: 'sync', actions: decideNodeSync({ kind: 'update', node, aliases }, sync) };
  };
  return {
    name: 'routes',
    readRun: (listNodes) => readRoutesRun(ports, listNodes, (tables) => ({
      tables,
      sets: cidrSets,
      delegated: [],
      plan: (input) => planRun(ports, tables, input),
      syncNode: (node, kube) => syncNode(node, kube, tables),
      planNodeSync: (node) => planNodeSync(node, tables),
    })),
    tablesRequired: true,
    leaseSets: async () => cidrSets,
    needsNodeSync: (node) => lacksPodCidrFamily(node, config.clusterCidrs),
    // A brand-new node has no route yet, so its alias is empty and it is allocated.
    syncNewNode: async (node, kube) => void (await syncNode(node, kube, [])),
    // Routes are the worker's either way (a sync-node message follows the allocation).
    admitNewNode: async (node, kube) => void (await syncNode(node, kube, [])),
    queuesSyncNode: () => true,
    workerSyncNode: (message, deps, delivery) => syncNodeRoutes(message, deps, delivery),
    workerRouteWrite: (message, deps) => (message.kind === 'delete' ? applyDelete(message, deps) : applyRoute(message, deps)),
    reportsMissingRoutes: true,
    nodeSyncMarksReady: false,
    readiness: routesReadiness,
  };
}

/**
 * The tables first, then nodes and leases: a node listed after the tables covers every route the
 * worker made for a stored node. Listed side by side, a node created during the table listing
 * could be missing from the node list while its route is in the tables, and that route would be
 * planned as a `no-owner` deletion. A node just admitted is routed before it is stored (the
 * admission's `sync-node`), so such a route can still be listed before its node: its lease, taken
 * at admission, keeps it (lib/routes/delete-backing.ts, `lease-young`).
 */
async function readRoutesRun(ports: RoutesPlanePorts, listNodes: () => Promise<Node[]>, runOf: (tables: RouteTable[]) => PlaneRun): Promise<RunRead> {
  const tables = await settled(ports.routeTables.listRouteTables());
  const [nodes, leases] = await Promise.all([settled(listNodes()), settled(Promise.all(ports.cidrSets.map((set) => set.leases())))]);
  return { tables, nodes, leases, run: tables.ok ? runOf(tables.value) : null };
}

/** The route planner over the run's tables; routes described with their interface alone are matched by primary interface. */
async function planRun(ports: RoutesPlanePorts, tables: RouteTable[], input: { nodes: Node[]; leaseTable: LeaseTable }) {
  const { config, interfaces } = ports;
  const bare = interfaces !== null && hasBareInterfaceRoute(tables, (cidr) => isResponsibleForRoute(cidr, config.clusterCidrs));
  const primaryInterfaces = bare && interfaces ? await readPrimaryInterfaces(input.nodes, interfaces) : undefined;
  return planRoutesCounted({
    nodes: input.nodes,
    routeTables: tables,
    clusterCidrs: config.clusterCidrs,
    ...(primaryInterfaces ? { primaryInterfaces } : {}),
    maxDeleteShare: config.maxDeleteShare,
    minDeletesForGuard: config.minDeletesForGuard,
    leaseTable: input.leaseTable,
    ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
  });
}
