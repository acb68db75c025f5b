/**
 * The reconcile use case (EventBridge schedule): gather -> plan (pure) -> apply -> report.
 *
 * 1. Gather the cluster's route tables, then its nodes and the CIDR leases, once each; an input
 *    that is unreadable or suddenly empty stops the run before any write (`readWorld`). Owners of
 *    old leases that the listing lacks are read by key: only a 404 confirms a node gone. Repair
 *    the leases and adopt the pod CIDRs the ownership decider (lib/routes/ownership.ts) allows.
 * 2. Plan routes with the pure planner, from the leases (a pod CIDR is routed to the node holding
 *    its lease; other claims are conflicts, told on the claimant); deletions not confirmed by a
 *    keyed read are judged by the mass-deletion guard over a window of runs
 *    (./reconcile-route-work.ts); withheld ones are told in a log line and a metric.
 * 3. Apply: nodes not complete and without NetworkUnavailable are marked True first
 *    (./node-claims.ts); route work goes to the queue (the worker does the EC2 calls);
 *    NetworkUnavailable is written for nodes whose routes are complete or that have no pod CIDR;
 *    nodes without pod CIDRs get them through node sync (the configured mode); a lease whose node
 *    reads 404 is released after a grace period.
 *
 * Routes mode: the cloud "alias" of node sync is the node's route in the cluster's tables, and the
 * worker (not node sync) turns NetworkUnavailable false once every table has the route. Prefixes
 * mode (./prefix-mode.ts): the alias is the prefix delegated to the node's primary ENI, the sets
 * are the pod ranges of the nodes' subnets, no route table is touched, and a node is marked
 * reachable as soon as its prefixes are assigned.
 *
 * At steady state (nothing to change) a run makes no writes at all: reads are one listing of tables
 * (routes mode) or of the nodes' interfaces and subnets (prefixes mode), nodes and leases each.
 */
import { tryParseCidr } from '../cidr/cidr.ts';
import type { Family } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import type { CidrSet, Lease } from '../ipam/index.ts';
import type { Logger } from '../log.ts';
import { syncNodeMessage } from '../messages/route-message.ts';
import type { RouteMessage } from '../messages/route-message.ts';
import type { WorkQueue } from '../messages/work-queue.ts';
import { networkUnavailableOf, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { syncNodeDualStack } from '../nodesync/index.ts';
import { clusterTagKey, isResponsibleForRoute } from '../routes/index.ts';
import { planRoutesCounted } from '../routes/route-plan.ts';
import { errorText, PodrouteError } from '../errors.ts';
import { absenceSuspects, readPresence, refuseWorld, worldChecks } from './absence.ts';
import type { InputRead } from './absence.ts';
import { clearFullMarks, sendRouteWork, settleRouteWork } from './reconcile-route-work.ts';
import type { RoutePlan, RouteTable } from '../routes/index.ts';
import { mapSettled } from '../util/concurrency.ts';
import { maskMismatchMessage, maskMismatches } from './pod-cidr-mask.ts';
import { adoptPodCidrs, reclaimOrphans, repairLeases } from './lease-upkeep.ts';
import { markUnrouted, warnConflicts } from './node-claims.ts';
import { nodeSyncKube, routeAlias } from './node-sync-ports.ts';
import type { DeletionWindowStore, EniPrefixes, NodeSource, ReservationSets, RouteTables, Subnets } from './ports.ts';
import { prefixCidrSets, readPrefixWorld, syncPrefixNode } from './prefix-mode.ts';
import { hasBareInterfaceRoute, readPrimaryInterfaces } from './route-targets.ts';
import type { PrefixWorld } from './prefix-mode.ts';
import { countBlocked, summarize } from './reconcile-summary.ts';

type ReconcileConfig = Pick<
  Config,
  'clusterCidrs' | 'mode' | 'nodeSyncMode' | 'maxDeleteShare' | 'minDeletesForGuard' | 'leaseGraceSeconds'
> &
  Partial<Pick<Config, 'blockedNodeSeconds' | 'nodeSelector' | 'clusterName' | 'migrationMaskSizes' | 'routeQuota'>>;

/** Default of `blockedNodeSeconds` (config BLOCKED_NODE_SECONDS). */
const DEFAULT_BLOCKED_NODE_SECONDS = 600;

export interface ReconcileDeps {
  config: ReconcileConfig;
  routeTables: RouteTables;
  nodes: NodeSource;
  queue: WorkQueue;
  /** One CIDR set per cluster CIDR, in the order of `config.clusterCidrs`. */
  cidrSets: CidrSet[];
  /**
   * Prefixes mode: the ENI prefix, subnet and pod-range set ports (see ./prefix-mode.ts). Routes
   * mode reads the nodes' primary interfaces through `prefixes` when a route names an interface
   * alone (./route-targets.ts).
   */
  prefixes?: EniPrefixes;
  subnets?: Subnets;
  reservationSets?: ReservationSets;
  log: Logger;
  now: () => number;
  /** Kubernetes writes (and keyed node reads) in flight at once. */
  concurrency?: number;
  /** The mass-deletion guard's window of runs (lib/aws/dynamodb-deletion-guard.ts); without it each run is judged alone. */
  deletionWindow?: DeletionWindowStore;
}

export interface ReconcileReport {
  plan: RoutePlan;
  nodes: number;
  routeTables: number;
  /** Nodes whose NetworkUnavailable condition was False when listed. */
  nodesReady: number;
  /** Nodes NetworkUnavailable=True since longer than `blockedNodeSeconds`. */
  nodesBlocked: number;
  messagesSent: number;
  /** Route messages not sent because the queue's backlog already held as many (an earlier tick's). */
  messagesDeferred: number;
  deletionsWithheld: number;
  conditionsPatched: number;
  allocated: string[];
  occupied: number;
  reclaimed: Array<{ cidr: string; owner: string | null }>;
  reclaimWithheld: number;
  /** Owners whose blocks had lost their owner record (a crash leftover), linked again. */
  leasesRepaired: string[];
  errors: Array<{ node?: string; step: string; message: string }>;
}

export async function reconcile(deps: ReconcileDeps, options: { dryRun?: boolean } = {}): Promise<ReconcileReport> {
  const started = deps.now();
  const { config, log } = deps;
  const world = await readWorld(deps);
  const { tables, nodes, prefixRead } = world;
  const run: ReconcileDeps = prefixRead ? { ...deps, cidrSets: prefixRead.sets } : deps;
  // Absence is confirmed by key (./absence.ts): the owners of old leases that the listing lacks.
  const graceMs = config.leaseGraceSeconds * 1000;
  const presence = await readPresence(absenceSuspects(nodes, world.leaseLists.flat(), deps.now(), graceMs), deps.nodes, deps.concurrency ?? 4);
  // Pod CIDRs of another size than the configured blocks (told every run, also in a dry run).
  const mismatches = nodes.flatMap((node) => maskMismatches(node, run.cidrSets));
  // Leases first (not in a dry run): a block left without its owner record is linked to it, and
  // the pod CIDRs the ownership decider lets reconcile adopt are occupied, so the plan below routes
  // them from their lease, and no new node is allocated a block a node already holds.
  const errors = prefixRead?.error ? [{ step: 'prefix-read', message: prefixRead.error }] : [];
  const upkeep: Pick<ReconcileReport, 'occupied' | 'errors' | 'leasesRepaired' | 'reclaimed' | 'reclaimWithheld'> = { occupied: 0, leasesRepaired: [], reclaimed: [], reclaimWithheld: 0, errors };
  if (!options.dryRun) await repairLeases(world.leaseLists, run, upkeep);
  const { leaseLists, leaseTable } = await adoptPodCidrs(nodes, world.leaseLists, mismatches, run, upkeep, options.dryRun === true);
  // Routes described with their interface alone are matched to nodes by primary interface (route-targets.ts).
  const bare = deps.prefixes !== undefined && hasBareInterfaceRoute(tables, (cidr) => isResponsibleForRoute(cidr, config.clusterCidrs));
  const primaryInterfaces = bare && deps.prefixes ? await readPrimaryInterfaces(nodes, deps.prefixes) : undefined;
  const { plan: planned, live } =
    config.mode === 'routes'
      ? planRoutesCounted({
          nodes,
          routeTables: tables,
          clusterCidrs: config.clusterCidrs,
          ...(primaryInterfaces ? { primaryInterfaces } : {}),
          maxDeleteShare: config.maxDeleteShare,
          minDeletesForGuard: config.minDeletesForGuard,
          leaseTable,
          ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
        })
      : { plan: prefixModePlan(nodes, config), live: 0 };
  const routeFacts = { tables, now: deps.now(), backing: { nodes, leases: leaseLists.flat(), presence, graceMs }, limits: config };
  const settled = await settleRouteWork({ plan: planned, live }, routeFacts, deps, options.dryRun === true);
  const { work } = settled;
  const { plan } = work;

  const report: ReconcileReport = {
    plan,
    nodes: nodes.length,
    routeTables: tables.length,
    nodesReady: nodes.filter((node) => networkUnavailableOf(node) === 'False').length,
    nodesBlocked: countBlocked(nodes, started, (config.blockedNodeSeconds ?? DEFAULT_BLOCKED_NODE_SECONDS) * 1000),
    messagesSent: 0,
    messagesDeferred: 0,
    deletionsWithheld: work.deletionsWithheld,
    conditionsPatched: 0,
    allocated: [],
    ...upkeep,
  };
  if (plan.unsafe !== undefined) {
    log.log('warn', 'reconcile.unsafe', { reason: plan.unsafe, withheld: work.deletionsWithheld });
  }
  for (const warning of plan.warnings ?? []) log.log('warn', 'plan.warning', { ...warning });
  for (const m of mismatches) {
    const detail = maskMismatchMessage(m);
    plan.warnings = [...(plan.warnings ?? []), { reason: 'pod-cidr-mask-mismatch', node: m.node, destinationCidr: m.cidr, detail }];
    log.log('warn', 'pod-cidr.mask-mismatch', { node: m.node, cidr: m.cidr, nodeMaskSize: m.set.nodeMaskSize, detail });
  }
  if (options.dryRun) {
    summarize(report, deps, started, tables);
    return report;
  }
  const markedUnrouted = await markUnrouted(plan, nodes, deps, report);
  await warnConflicts(plan, deps);

  await clearFullMarks(work, deps);
  const messages: RouteMessage[] = [];

  // Node sync for nodes that lack pod CIDRs (and, in prefixes mode, nodes not yet reachable).
  const wantedFamilies = config.clusterCidrs.map((text) => tryParseCidr(text)?.family);
  // Nodes that are not podroute's (unmanagedReason) are never allocated, like the planner never routes them.
  // Nor are nodes whose claim is a conflict (a second node naming another's instance, say).
  const conflicted = new Set(plan.nodes.filter((status) => status.conflict !== undefined).map((status) => status.node));
  const needSync = nodes.filter(
    (node) => unmanagedReason(node, config.nodeSelector) === null && !conflicted.has(node.metadata.name) && needsNodeSync(node, wantedFamilies, config.mode),
  );
  const sync = await mapSettled(needSync, deps.concurrency ?? 4, async (node) => {
    if (prefixRead) return syncPrefixNode(node, prefixRead.world, run, nodeSyncKube(deps));
    await syncNodeDualStack({ kind: 'update', nodeName: node.metadata.name, node }, nodeSyncDeps(deps, tables));
    return 'synced';
  });
  sync.forEach((result, i) => {
    const name = needSync[i]?.metadata.name ?? '?';
    if (result.status === 'fulfilled') {
      if (result.value === 'synced') report.allocated.push(name);
      if (config.mode === 'routes') messages.push(syncNodeMessage(name));
    } else {
      report.errors.push({ node: name, step: 'node-sync', message: errorText(result.reason) });
      log.log('error', 'node-sync.failed', { node: name, error: result.reason });
    }
  });

  // Route work goes with the new nodes' sync messages (./reconcile-route-work.ts: the backlog may defer it).
  const sent = await sendRouteWork({ plan: planned, live }, settled.facts, messages, deps);
  report.messagesSent = sent.sent;
  report.messagesDeferred = sent.deferred;

  // Conditions the plan can settle now: complete nodes (false) and nodes without routes (true).
  const allocatedNow = new Set(report.allocated);
  const patches = plan.nodes.filter(
    (status) =>
      status.patch &&
      status.networkUnavailable !== 'pending' &&
      !(status.networkUnavailable === true && (allocatedNow.has(status.node) || markedUnrouted.has(status.node))),
  );
  const patched = await mapSettled(patches, deps.concurrency ?? 4, async (status) =>
    deps.nodes.setNetworkUnavailable(status.node, status.networkUnavailable === true),
  );
  patched.forEach((result, i) => {
    const status = patches[i];
    if (!status) return;
    if (result.status === 'fulfilled') {
      if (result.value === 'patched') report.conditionsPatched += 1;
      log.log('info', 'action', { action: 'set-network-unavailable', node: status.node, value: status.networkUnavailable, result: result.value });
    } else {
      report.errors.push({ node: status.node, step: 'condition', message: errorText(result.reason) });
    }
  });

  const delegated = prefixRead ? [...prefixRead.world.interfaces.values()].flatMap((eni) => eni.prefixes) : [];
  await reclaimOrphans(nodes, leaseLists, presence, run, report, delegated);
  summarize(report, deps, started, tables);
  return report;
}

/**
 * Gathers the run's inputs, the tables first, then nodes and leases: a node listed after the
 * tables covers every route the worker made for a stored node. Listed side by side, a node created
 * during the table listing could be missing from the node list while its route is in the tables,
 * and that route would be planned as a `no-owner` deletion. A node just admitted is routed before
 * it is stored (the admission's `sync-node`), so such a route can still be listed before its node:
 * its lease, taken at admission, keeps it (lib/routes/delete-backing.ts, `lease-young`).
 *
 * Empty means stop: when an input cannot be read or is suddenly empty (./absence.ts refuseWorld),
 * the run fails retryably before it writes anything, with one log line and the `ReconcileRefused`
 * metric (its alarm is serverless.yml's ReconcileRefusedAlarm).
 */
async function readWorld(deps: ReconcileDeps): Promise<{ tables: RouteTable[]; nodes: Node[]; leaseLists: Lease[][]; prefixRead: Awaited<ReturnType<typeof readPrefixes>> | null }> {
  const { config } = deps;
  const tables = config.mode === 'routes' ? await settled(deps.routeTables.listRouteTables()) : null;
  const [nodes, clusterLeases] = await Promise.all([
    settled(deps.nodes.listNodes()),
    config.mode === 'routes' ? settled(Promise.all(deps.cidrSets.map((set) => set.leases()))) : null,
  ]);
  // Prefixes mode: the sets are the pod ranges of the nodes' subnets, read from EC2 once per run.
  const prefixRead = config.mode === 'prefixes' && nodes.ok ? await readPrefixes(nodes.value, deps) : null;
  const leases = clusterLeases ?? (prefixRead ? await settled(Promise.all(prefixRead.sets.map((set) => set.leases()))) : { ok: true as const, value: [] });
  const count = <T>(read: Settled<T[]>): InputRead => (read.ok ? { ok: true, count: read.value.flat().length } : read);
  const refusal = refuseWorld({
    mode: config.mode,
    clusterTag: config.clusterName ? clusterTagKey(config.clusterName) : clusterTagKey('<CLUSTER_NAME>'),
    tables: tables && count(tables),
    nodes: count(nodes),
    leases: count(leases),
    ...(nodes.ok && leases.ok ? await worldChecks(nodes.value, leases.value.flat(), config, deps.nodes, deps.concurrency ?? 4) : {}),
  });
  if (refusal !== null || !nodes.ok || !leases.ok || (tables !== null && !tables.ok)) {
    const reason = refusal ?? 'an input could not be read';
    const cause = [tables, nodes, leases].find((read) => read !== null && !read.ok);
    deps.log.log('error', 'reconcile.refused', { reason });
    deps.log.metric('ReconcileRefused', 1);
    throw new PodrouteError(`reconcile refused to run: ${reason}`, { retryable: true, ...(cause && !cause.ok ? { cause: cause.error } : {}) });
  }
  return { tables: tables?.value ?? [], nodes: nodes.value, leaseLists: leases.value, prefixRead };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
const settled = <T>(promise: Promise<T>): Promise<Settled<T>> => promise.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));


/** A node needs node sync when it lacks a pod CIDR of some cluster family (or, with prefixes, is not yet reachable). */
function needsNodeSync(node: Node, wantedFamilies: ReadonlyArray<Family | undefined>, mode: ReconcileConfig['mode']): boolean {
  const families = new Set(podCidrsOf(node).map((text) => tryParseCidr(text)?.family));
  if (wantedFamilies.some((family) => !families.has(family))) return true;
  return mode === 'prefixes' && networkUnavailableOf(node) !== 'False';
}

/** Routes mode's node-sync ports: the alias is the node's route in `tables`. */
function nodeSyncDeps(deps: ReconcileDeps, tables: RouteTable[]) {
  return { mode: deps.config.nodeSyncMode, cidrSets: deps.cidrSets, cloud: routeAlias(tables, deps.config.clusterCidrs), kube: nodeSyncKube(deps) };
}

/**
 * Prefixes mode's EC2 read of one run: the managed nodes' interfaces and subnets, and the sets of
 * their pod ranges. A failed read is reported; the run then syncs and reclaims nothing.
 */
async function readPrefixes(nodes: Node[], deps: ReconcileDeps): Promise<{ world: PrefixWorld; sets: CidrSet[]; error?: string }> {
  const managed = nodes.filter((node) => unmanagedReason(node, deps.config.nodeSelector) === null);
  try {
    const world = await readPrefixWorld(managed, deps);
    const { sets, failed } = await prefixCidrSets(world, deps);
    // A failed set is told; the world stays, so the other subnets' nodes still sync.
    return { world, sets, ...(failed.length > 0 ? { error: failed.map((f) => f.message).join('; ') } : {}) };
  } catch (error) {
    deps.log.log('error', 'prefix.read-failed', { error });
    return { world: { interfaces: new Map(), subnets: new Map() }, sets: [], error: errorText(error) };
  }
}

/** Prefixes mode has no route work: nodes only carry their wanted condition (unmanaged ones their reason). */
function prefixModePlan(nodes: Node[], config: Partial<Pick<Config, 'nodeSelector'>>): RoutePlan {
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
