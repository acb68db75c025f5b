/**
 * Routes mode: a node's pod CIDRs are routes to its instance in every route table of the cluster.
 * Reconcile reads the tables before the nodes (so a node listed after them covers every route the
 * worker made), plans with the route planner (lib/routes/route-plan.ts), and the worker marks a node
 * ready once every table has its routes (lib/usecases/route-writes.ts).
 */
import type { Config } from '../../config.ts';
import { fullSetError } from '../../ipam/index.ts';
import type { CidrSet, Lease } from '../../ipam/index.ts';
import type { Node } from '../../nodes/node.ts';
import { decideNodeSync, nodeSyncConfig, syncNodeDualStack } from '../../nodesync/index.ts';
import type { DualStackKubeNodes, NodeSyncAction } from '../../nodesync/index.ts';
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
  // The same decision `syncNode` applies, over the same alias, answered instead of applied; the
  // blocks it takes come out of the run's `free` count, so it rejects where `allocateNext` would (FULL).
  const planNodeSync = async (node: Node, tables: RouteTable[], free: FreeBlocks): Promise<PlannedNodeSync> => {
    const aliases = await routeAlias(tables, config.clusterCidrs).alias(node);
    const sync = nodeSyncConfig(config.nodeSyncMode, cidrSets.map((set) => set.clusterCidr));
    const actions = decideNodeSync({ kind: 'update', node, aliases }, sync);
    takeBlocks(free, node.metadata.name, actions, cidrSets);
    return { node: node.metadata.name, outcome: 'sync', actions };
  };
  return {
    name: 'routes',
    readRun: (listNodes) => readRoutesRun(ports, listNodes, (tables, leases) => {
      const free = freeBlocks(leases);
      return {
        tables,
        sets: cidrSets,
        delegated: [],
        plan: (input) => planRun(ports, tables, input),
        syncNode: (node, kube) => syncNode(node, kube, tables),
        planNodeSync: (node) => planNodeSync(node, tables, free),
      };
    }),
    tablesRequired: true,
    leaseSets: async () => cidrSets,
    // A route of a departed node is the planner's to delete, under the mass-deletion guard.
    freeDepartedBlock: async () => ({ release: true }),
    needsNodeSync: (node) => lacksPodCidrFamily(node, config.clusterCidrs),
    // A brand-new node has no route yet, so its alias is empty and it is allocated.
    syncNewNode: async (node, kube) => void (await syncNode(node, kube, [])),
    // Routes are the worker's either way (a sync-node message follows the allocation).
    admitNewNode: async (node, kube) => void (await syncNode(node, kube, [])),
    queuesSyncNode: () => true,
    workerSyncNode: (message, deps, delivery) => syncNodeRoutes(message, deps, delivery),
    workerRouteWrite: (message, deps) => (message.kind === 'delete' ? applyDelete(message, deps) : applyRoute(message, deps)),
    // readNodeWorld (lib/usecases/route-worker-ownership.ts) reads the routes to the node's instance.
    workerJudgesInstance: true,
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
async function readRoutesRun(ports: RoutesPlanePorts, listNodes: () => Promise<Node[]>, runOf: (tables: RouteTable[], leases: Lease[][]) => PlaneRun): Promise<RunRead> {
  const tables = await settled(ports.routeTables.listRouteTables());
  const [nodes, leases] = await Promise.all([settled(listNodes()), settled(Promise.all(ports.cidrSets.map((set) => set.leases())))]);
  return { tables, nodes, leases, run: tables.ok ? runOf(tables.value, leases.ok ? leases.value : []) : null };
}

/** Per set, as a run listed it: the blocks leased and their owners; what a dry run's node syncs take is added. */
type FreeBlocks = Array<{ leased: Set<string>; owners: Set<string> }>;

function freeBlocks(leases: readonly Lease[][]): FreeBlocks {
  return leases.map((list) => ({ leased: new Set(list.map((l) => l.cidr)), owners: new Set(list.flatMap((l) => (l.owner === null ? [] : [l.owner]))) }));
}

/**
 * A dry run's stand-in for the store's answers: the blocks one node's actions would take (an
 * `occupy` of an unleased block, an `allocate` by a node holding none), taken from `free`; throws
 * `allocateNext`'s FULL error, taking nothing, when a set has no block left for an `allocate`.
 */
function takeBlocks(free: FreeBlocks, owner: string, actions: readonly NodeSyncAction[], sets: readonly CidrSet[]): void {
  const taken = new Map<number, string[]>();
  const take = (i: number, cidr: string) => taken.set(i, [...(taken.get(i) ?? []), cidr]);
  for (const action of actions) {
    if (action.kind !== 'occupy' && action.kind !== 'allocate') continue;
    const set = sets[action.set];
    const state = free[action.set];
    if (!set || !state) continue;
    if (action.kind === 'occupy') {
      if (!state.leased.has(action.cidr)) take(action.set, action.cidr);
    } else if (!state.owners.has(owner)) {
      if (state.leased.size + (taken.get(action.set)?.length ?? 0) >= set.total) throw fullSetError(set);
      // Not a CIDR: stands for the block the store would pick.
      take(action.set, `next block for ${owner}`);
    }
  }
  for (const [i, cidrs] of taken) {
    for (const cidr of cidrs) free[i]?.leased.add(cidr);
    free[i]?.owners.add(owner);
  }
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
