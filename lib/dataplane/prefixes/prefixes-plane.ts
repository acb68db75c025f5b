/**
 * Prefixes mode: a node's pod CIDRs are prefixes delegated to its primary interface from podroute's
 * subnet CIDR reservations (./pod-ranges.ts). Reconcile reads the nodes, then their interfaces and
 * subnets (./prefix-world.ts); no route table is touched, and node sync marks a node reachable once
 * its prefixes are delegated (./prefix-node-sync.ts). An admission only takes the blocks; the worker's
 * `sync-node` delegates them and settles the condition (./prefix-join.ts).
 */
import { networkUnavailableOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import type { RoutePlan } from '../../routes/index.ts';
import { unmanagedReason } from '../../nodes/managed-node.ts';
import type { UsedReservationSets } from '../../usecases/ports.ts';
import { lacksPodCidrFamily, settled } from '../data-plane.ts';
import type { DataPlane, RunRead } from '../data-plane.ts';
import type { PrefixWorld } from './pod-ranges.ts';
import { freeDepartedPrefix } from './free-departed-prefix.ts';
import { settlePrefixJoin } from './prefix-join.ts';
import { syncPrefixNode } from './prefix-node-sync.ts';
import { planPrefixNodeSync } from './prefix-sync-plan.ts';
import type { PrefixSyncPorts } from './prefix-node-sync.ts';
import { readPrefixWorld, readPrefixes } from './prefix-world.ts';
import type { PrefixReadPorts } from './prefix-world.ts';
import { prefixReadiness } from './readiness.ts';

export type PrefixesPlanePorts = PrefixReadPorts &
  PrefixSyncPorts & {
    /** The sets of every registered pod range (lib/ipam/set-registry.ts): what admissions judge claims against. */
    usedReservationSets: UsedReservationSets;
  };

export function prefixesPlane(ports: PrefixesPlanePorts): DataPlane {
  const { config } = ports;
  return {
    name: 'prefixes',
    readRun: (listNodes) => readPrefixesRun(ports, listNodes),
    tablesRequired: false,
    leaseSets: () => ports.usedReservationSets(),
    freeDepartedBlock: (cidr, owner, stillGone) => freeDepartedPrefix(ports.prefixes, cidr, owner, stillGone),
    needsNodeSync: (node) => lacksPodCidrFamily(node, config.clusterCidrs) || networkUnavailableOf(node) !== 'False',
    syncNewNode: async (node, kube) => void (await syncPrefixNode(node, await readPrefixWorld([node], ports), ports, kube)),
    // The admission takes the blocks; the worker's `sync-node` assigns them, at the pace of EC2's buckets.
    admitNewNode: async (node, kube) => void (await syncPrefixNode(node, await readPrefixWorld([node], ports), ports, kube, 'worker')),
    // A stored node's node sync has written its condition already; an admitted one's prefixes and condition are the worker's.
    queuesSyncNode: (admitted) => admitted !== undefined,
    workerSyncNode: (message, deps, delivery) => settlePrefixJoin(message, deps, ports, delivery),
    // No route table is podroute's here: a route message (one queued before MODE changed) has nothing to act on.
    workerRouteWrite: async () => 'stale:no-route-plane',
    // Before delegating an admitted node's blocks, its worker reads the holders of the interface's
    // other pod-range prefixes by key and runs the ownership decider (./prefix-instance.ts).
    workerJudgesInstance: true,
    reportsMissingRoutes: false,
    nodeSyncMarksReady: true,
    readiness: prefixReadiness,
  };
}

/** The nodes first (their instances name the interfaces to read), then interfaces, subnets and the pod ranges' leases. */
async function readPrefixesRun(ports: PrefixesPlanePorts, listNodes: () => Promise<Node[]>): Promise<RunRead> {
  const nodes = await settled(listNodes());
  if (!nodes.ok) return { tables: null, nodes, leases: { ok: true, value: [] }, run: null };
  const read = await readPrefixes(nodes.value, ports);
  const leases = await settled(Promise.all(read.sets.map((set) => set.leases())));
  const world: PrefixWorld = read.world;
  return {
    tables: null,
    nodes,
    leases,
    run: {
      tables: [],
      sets: read.sets,
      ...(read.error !== undefined ? { error: read.error } : {}),
      delegated: [...world.interfaces.values()].flatMap((eni) => eni.prefixes),
      plan: async (input) => ({ plan: prefixesPlan(input.nodes, ports.config), live: 0 }),
      syncNode: (node, kube) => syncPrefixNode(node, world, ports, kube),
      planNodeSync: async (node) => planPrefixNodeSync(node, world, ports.config),
    },
  };
}

/** No route work: nodes only carry their wanted condition (unmanaged ones their reason). */
function prefixesPlan(nodes: Node[], config: PrefixesPlanePorts['config']): RoutePlan {
  return {
    create: [],
    replace: [],
    delete: [],
    nodes: nodes.map((node) => {
      const unmanaged = unmanagedReason(node, config.nodeSelector);
      return unmanaged === null
        ? { node: node.metadata.name, networkUnavailable: 'pending', patch: false }
        : { node: node.metadata.name, networkUnavailable: networkUnavailableOf(node) === 'True', patch: false, unmanaged };
    }),
  };
}
