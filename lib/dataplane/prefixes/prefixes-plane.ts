/**
 * Prefixes mode: a node's pod CIDRs are prefixes delegated to its primary interface from podroute's
 * subnet CIDR reservations (./pod-ranges.ts). Reconcile reads the nodes, then their interfaces and
 * subnets (./prefix-world.ts); no route table is touched, and node sync marks a node reachable once
 * its prefixes are delegated (./prefix-node-sync.ts). An admission only takes the blocks; the worker's
 * `sync-node` delegates them and settles the condition (./prefix-join.ts).
 */
import { instanceIdOf, networkUnavailableOf, nodeAgeMs } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import type { Lease } from '../../ipam/index.ts';
import type { RoutePlan } from '../../routes/index.ts';
import { unmanagedReason } from '../../nodes/managed-node.ts';
import type { UsedReservationSets } from '../../usecases/ports.ts';
import { lacksPodCidrFamily, settled } from '../data-plane.ts';
import type { DataPlane, RunFacts, RunRead } from '../data-plane.ts';
import type { PrefixWorld } from './pod-ranges.ts';
import { assignerOf, awaitsDelegation } from './assigner.ts';
import type { Assigner } from './assigner.ts';
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
    readRun: (listNodes, facts) => readPrefixesRun(ports, listNodes, facts),
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
async function readPrefixesRun(ports: PrefixesPlanePorts, listNodes: () => Promise<Node[]>, facts: RunFacts): Promise<RunRead> {
  const nodes = await settled(listNodes());
  if (!nodes.ok) return { tables: null, nodes, leases: { ok: true, value: [] }, run: null };
  const read = await readPrefixes(nodes.value, ports);
  const leases = await settled(Promise.all(read.sets.map((set) => set.leases())));
  const world: PrefixWorld = read.world;
  const assigner = assignerFor(world, leases.ok ? leases.value.flat() : [], ports, facts);
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
      syncNode: async (node, kube) => ((await assigner(node)) === 'worker' ? leftToWorker(node, ports) : syncPrefixNode(node, world, ports, kube)),
      planNodeSync: async (node) => ((await assigner(node)) === 'worker' ? { node: node.metadata.name, outcome: 'left-to-worker', actions: [] } : planPrefixNodeSync(node, world, ports.config)),
    },
  };
}

/**
 * The run's `assignerOf` (./assigner.ts) per node. The queue's backlog is read once a run, and only
 * when a node awaits the delegation of its blocks; an unreadable backlog is logged and leaves the
 * assignment to reconcile (a second call is refused as in use and costs a token; a lost one costs the node).
 */
function assignerFor(world: PrefixWorld, leases: readonly Lease[], ports: PrefixesPlanePorts, facts: RunFacts): (node: Node) => Promise<Assigner> {
  let backlog: Promise<number | null> | undefined;
  const readBacklog = () =>
    (backlog ??= facts.backlog
      ? facts.backlog().catch((error: unknown) => {
          ports.log.log('warn', 'reconcile.backlog-unread', { error });
          return null;
        })
      : Promise.resolve(null));
  const leasesOf = new Map<string, Lease[]>();
  for (const lease of leases) {
    if (lease.owner === null) continue;
    const held = leasesOf.get(lease.owner);
    if (held) held.push(lease);
    else leasesOf.set(lease.owner, [lease]);
  }
  return async (node) => {
    const instanceId = instanceIdOf(node);
    const delegated = (instanceId !== null ? world.interfaces.get(instanceId)?.prefixes : undefined) ?? [];
    const leased = leasesOf.get(node.metadata.name) ?? [];
    const awaiting = awaitsDelegation(node, ports.config.clusterCidrs, leased, delegated);
    const ageMs = nodeAgeMs(node, facts.now);
    const base = { nodeSyncMode: ports.config.nodeSyncMode, awaitingDelegation: awaiting, ageMs, windowMs: facts.messageWindowMs };
    // The backlog only matters when the rest would leave the node to the worker.
    if (assignerOf({ ...base, backlog: 1 }) === 'reconcile') return 'reconcile';
    return assignerOf({ ...base, backlog: await readBacklog() });
  };
}

/** A node whose admission's message may still delegate its blocks: reconcile writes nothing for it this run. */
function leftToWorker(node: Node, ports: PrefixesPlanePorts): string {
  ports.log.log('info', 'node-sync.left-to-worker', { node: node.metadata.name });
  return 'left-to-worker';
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
