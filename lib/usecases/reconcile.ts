/**
 * The reconcile use case (EventBridge schedule): gather -> plan (pure) -> apply -> report.
 *
 * 1. Gather the cluster's route tables, then its nodes and the CIDR leases, once each.
 * 2. Plan routes with the pure planner; when the plan is unsafe (mass-deletion guard) its deletions
 *    are withheld and the run says so in a log line and a metric.
 * 3. Apply: route work goes to the queue (the worker does the EC2 calls); NetworkUnavailable is
 *    written for nodes whose routes are complete or that have no pod CIDR; nodes without pod CIDRs
 *    get them through node sync (the configured mode); leases are made to match the nodes: a pod
 *    CIDR without a lease is occupied, a lease whose node is gone is released after a grace period.
 *
 * Routes mode: the cloud "alias" of node sync is the node's route in the cluster's tables, and the
 * worker (not node sync) turns NetworkUnavailable false once every table has the route. Prefixes
 * mode: the alias is the prefix delegated to the node's primary ENI, no route table is touched, and
 * node sync marks the node reachable as soon as the prefix is assigned.
 *
 * At steady state (nothing to change) a run makes no writes at all: reads are one listing of tables,
 * nodes and leases each.
 */
import { tryParseCidr, formatCidr } from '../cidr/cidr.ts';
import type { Family } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import type { CidrSet, Lease } from '../ipam/index.ts';
import type { Logger } from '../log.ts';
import { syncNodeMessage, toMessages } from '../messages/route-message.ts';
import type { RouteMessage } from '../messages/route-message.ts';
import type { WorkQueue } from '../messages/work-queue.ts';
import { networkUnavailableOf, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { syncNodeDualStack } from '../nodesync/index.ts';
import type { DualStackCloudAlias } from '../nodesync/index.ts';
import { parseRouteTables, planRoutes } from '../routes/index.ts';
import { withholdFullTables } from '../routes/table-full.ts';
import type { RoutePlan, RouteTable } from '../routes/index.ts';
import { mapSettled } from '../util/concurrency.ts';
import { MASK_MISMATCH_EVENT, blockInUse, heldByLeases, holds, maskMismatchMessage, maskMismatches } from './pod-cidr-mask.ts';
import type { MaskMismatch } from './pod-cidr-mask.ts';
import type { EniPrefixes, NodeSource, RouteTables } from './ports.ts';
import { nodeSyncCloud, nodeSyncKube } from './node-sync-ports.ts';

export type ReconcileConfig = Pick<
  Config,
  'clusterCidrs' | 'mode' | 'nodeSyncMode' | 'maxDeleteShare' | 'minDeletesForGuard' | 'leaseGraceSeconds'
> &
  Partial<Pick<Config, 'blockedNodeSeconds' | 'nodeSelector'>>;

/** Default of `blockedNodeSeconds` (config BLOCKED_NODE_SECONDS). */
export const DEFAULT_BLOCKED_NODE_SECONDS = 600;

export interface ReconcileDeps {
  config: ReconcileConfig;
  routeTables: RouteTables;
  nodes: NodeSource;
  queue: WorkQueue;
  /** One CIDR set per cluster CIDR, in the order of `config.clusterCidrs`. */
  cidrSets: CidrSet[];
  /** Prefixes mode only: the ENI prefix port. */
  prefixes?: EniPrefixes;
  log: Logger;
  now: () => number;
  /** Kubernetes writes in flight at once. */
  concurrency?: number;
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
  // The tables first, then nodes and leases: a node listed after the tables covers every route
  // they hold (the worker routes a node only once it exists). Listed side by side, a node created
  // during the table listing could be missing from the node list while its route is in the tables,
  // and that route would be planned as a `no-owner` deletion.
  const rawTables = config.mode === 'routes' ? await deps.routeTables.listRouteTables() : [];
  const [nodes, leaseLists] = await Promise.all([
    deps.nodes.listNodes(),
    Promise.all(deps.cidrSets.map((set) => set.leases())),
  ]);
  const tables = parseRouteTables({ RouteTables: rawTables });
  const plan =
    config.mode === 'routes'
      ? planRoutes({
          nodes,
          routeTables: tables,
          clusterCidrs: config.clusterCidrs,
          maxDeleteShare: config.maxDeleteShare,
          minDeletesForGuard: config.minDeletesForGuard,
          ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
        })
      : prefixModePlan(nodes, config);

  const report: ReconcileReport = {
    plan,
    nodes: nodes.length,
    routeTables: tables.length,
    nodesReady: nodes.filter((node) => networkUnavailableOf(node) === 'False').length,
    nodesBlocked: countBlocked(nodes, started, (config.blockedNodeSeconds ?? DEFAULT_BLOCKED_NODE_SECONDS) * 1000),
    messagesSent: 0,
    messagesDeferred: 0,
    deletionsWithheld: plan.unsafe === undefined ? 0 : plan.delete.length,
    conditionsPatched: 0,
    allocated: [],
    occupied: 0,
    reclaimed: [],
    reclaimWithheld: 0,
    leasesRepaired: [],
    errors: [],
  };
  if (plan.unsafe !== undefined) {
    log.log('warn', 'reconcile.unsafe', { reason: plan.unsafe, withheld: plan.delete.length });
  }
  for (const warning of plan.warnings ?? []) log.log('warn', 'plan.warning', { ...warning });
  // Pod CIDRs of another size than the configured blocks (told every run, also in a dry run).
  const mismatches = nodes.flatMap((node) => maskMismatches(node, deps.cidrSets));
  for (const m of mismatches) {
    const detail = maskMismatchMessage(m);
    plan.warnings = [...(plan.warnings ?? []), { reason: 'pod-cidr-mask-mismatch', node: m.node, destinationCidr: m.cidr, detail }];
    log.log('warn', 'pod-cidr.mask-mismatch', { node: m.node, cidr: m.cidr, nodeMaskSize: m.set.nodeMaskSize, detail });
  }
  if (options.dryRun) {
    summarize(report, deps, started);
    return report;
  }

  // Route work: one message per operation, deletions carrying the route they were planned from.
  // Creates and replaces to a table marked full wait (lib/routes/table-full.ts).
  const full = withholdFullTables([...plan.create, ...plan.replace], tables, deps.now());
  for (const [routeTableId, withheld] of full.withheld) {
    log.log('warn', 'reconcile.route-table-full', { routeTableId, withheld });
    log.metric('RouteWritesWithheld', withheld, 'Count', { RouteTableId: routeTableId });
  }
  for (const routeTableId of full.clear) {
    await deps.routeTables.clearRouteTableFull?.(routeTableId).then(
      () => log.log('info', 'action', { action: 'clear-route-table-full', routeTableId }),
      (error: unknown) => log.log('warn', 'route-table-full.clear-failed', { routeTableId, error }),
    );
  }
  const sendable = new Set(full.send);
  const routesByKey = indexRoutes(tables);
  const messages: RouteMessage[] = toMessages({ ...plan, create: plan.create.filter((op) => sendable.has(op)), replace: plan.replace.filter((op) => sendable.has(op)) }, {
    withholdDeletes: plan.unsafe !== undefined,
    observed: (routeTableId, destinationCidr) => routesByKey.get(`${routeTableId}|${destinationCidr}`),
  });

  // Leases first: a pod CIDR a node already holds must be taken before any new node is allocated,
  // and a block left without its owner record must be linked to it, or its owner's next
  // allocation would take a second block.
  await repairLeases(leaseLists, deps, report);
  await occupyUnleased(nodes, leaseLists, mismatches, deps, report);

  // Node sync for nodes that lack pod CIDRs (and, in prefixes mode, nodes not yet reachable).
  const wantedFamilies = config.clusterCidrs.map((text) => tryParseCidr(text)?.family);
  // Nodes that are not podroute's (unmanagedReason) are never allocated, like the planner never routes them.
  const needSync = nodes.filter((node) => unmanagedReason(node, config.nodeSelector) === null && needsNodeSync(node, wantedFamilies, config.mode));
  const sync = await mapSettled(needSync, deps.concurrency ?? 4, async (node) => {
    const syncDeps = nodeSyncDeps(deps, tables, node);
    await syncNodeDualStack({ kind: 'update', nodeName: node.metadata.name, node }, syncDeps);
    if (config.mode === 'prefixes') await markReachableWhenAliased(node, syncDeps.cloud, deps);
    return node.metadata.name;
  });
  sync.forEach((result, i) => {
    const name = needSync[i]?.metadata.name ?? '?';
    if (result.status === 'fulfilled') {
      report.allocated.push(name);
      if (config.mode === 'routes') messages.push(syncNodeMessage(name));
    } else {
      report.errors.push({ node: name, step: 'node-sync', message: errorText(result.reason) });
      log.log('error', 'node-sync.failed', { node: name, error: result.reason });
    }
  });

  // Backpressure: while the queue still holds at least as much work as this plan asks for, that
  // work is (most likely) this plan's, sent by an earlier tick and not done yet; sending it again
  // would only grow the backlog with duplicates. New nodes' sync messages always go out.
  const routeWork = messages.filter((message) => message.kind !== 'sync-node');
  let outgoing = messages;
  if (routeWork.length > 0 && deps.queue.backlog) {
    const backlog = await deps.queue.backlog();
    if (backlog >= routeWork.length) {
      outgoing = messages.filter((message) => message.kind === 'sync-node');
      report.messagesDeferred = routeWork.length;
      log.log('info', 'reconcile.backlog', { backlog, deferred: routeWork.length });
    }
  }
  if (outgoing.length > 0) {
    const sent = await deps.queue.send(outgoing, { dedupWindow: String(Math.floor(deps.now() / 60_000)) });
    report.messagesSent = sent.sent;
  }

  // Conditions the plan can settle now: complete nodes (false) and nodes without routes (true).
  const allocatedNow = new Set(report.allocated);
  const patches = plan.nodes.filter(
    (status) => status.patch && status.networkUnavailable !== 'pending' && !(allocatedNow.has(status.node) && status.networkUnavailable === true),
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

  await reclaimOrphans(nodes, leaseLists, deps, report);
  summarize(report, deps, started);
  return report;
}

/**
 * Occupies the pod CIDRs nodes hold that the set has no lease for (adopted clusters, a restored
 * table). A CIDR of another size than the set's blocks is held as every block it overlaps, for its
 * node, and the node gets a `PodCidrMaskMismatch` event when that happens.
 */
async function occupyUnleased(
  nodes: Node[],
  leaseLists: Lease[][],
  mismatches: readonly MaskMismatch[],
  deps: ReconcileDeps,
  report: ReconcileReport,
): Promise<void> {
  for (const [i, set] of deps.cidrSets.entries()) {
    const leases = leaseLists[i] ?? [];
    const leased = new Set(leases.map((lease) => lease.cidr));
    for (const node of nodes) {
      for (const text of podCidrsOf(node)) {
        const cidr = tryParseCidr(text);
        if (!cidr || !holds(set, cidr)) continue;
        const mismatch = mismatches.find((m) => m.set === set && m.node === node.metadata.name && m.cidr === formatCidr(cidr));
        if (mismatch ? heldByLeases(set, cidr, leases) : leased.has(formatCidr(cidr))) continue;
        try {
          await set.occupy(formatCidr(cidr), node.metadata.name);
          report.occupied += 1;
          deps.log.log('info', 'action', { action: 'occupy-cidr', cidr: formatCidr(cidr), node: node.metadata.name });
        } catch (error) {
          report.errors.push({ node: node.metadata.name, step: 'occupy', message: errorText(error) });
          continue;
        }
        if (mismatch) await deps.nodes.warn(node.metadata.name, MASK_MISMATCH_EVENT, maskMismatchMessage(mismatch)).catch(() => undefined);
      }
    }
  }
}

/** Links blocks that lost their owner record (see lib/ipam/claim-protocol.ts) to their owners. */
async function repairLeases(leaseLists: Lease[][], deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  for (const [i, set] of deps.cidrSets.entries()) {
    try {
      const { records } = await set.repair(leaseLists[i]);
      report.leasesRepaired.push(...records);
      for (const owner of records) deps.log.log('warn', 'action', { action: 'repair-lease', node: owner, set: set.clusterCidr });
    } catch (error) {
      report.errors.push({ step: 'repair', message: errorText(error) });
    }
  }
}

/**
 * Releases leases whose owner is no node any more, once they are older than the grace period (a
 * node being created is not listed yet). Withheld, like route deletions, when the node list is
 * empty or the share of orphans is implausibly large.
 */
async function reclaimOrphans(nodes: Node[], leaseLists: Lease[][], deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  const live = new Set(nodes.map((node) => node.metadata.name));
  const now = deps.now();
  const graceMs = deps.config.leaseGraceSeconds * 1000;
  for (const [i, set] of deps.cidrSets.entries()) {
    const leases = leaseLists[i] ?? [];
    const expired = leases.filter((lease) => lease.owner !== null && !live.has(lease.owner) && lease.since !== undefined && now - lease.since > graceMs);
    // A block stays while a live node's (smaller) pod CIDR lies in it (pod-cidr-mask.ts blockInUse).
    const orphans = expired.filter((lease) => !blockInUse(lease.cidr, nodes));
    for (const lease of expired) {
      if (!orphans.includes(lease)) deps.log.log('warn', 'reclaim.kept', { cidr: lease.cidr, owner: lease.owner, why: 'a live node holds a pod CIDR inside it' });
    }
    if (orphans.length === 0) continue;
    const tooMany =
      orphans.length > deps.config.maxDeleteShare * leases.length && orphans.length >= Math.max(1, deps.config.minDeletesForGuard);
    if (nodes.length === 0 || tooMany) {
      report.reclaimWithheld += orphans.length;
      deps.log.log('warn', 'reclaim.withheld', { set: set.clusterCidr, orphans: orphans.length, leases: leases.length, nodes: nodes.length });
      continue;
    }
    for (const lease of orphans) {
      try {
        // Only the lease as listed: if its node re-joined since (and renewed it), it stays.
        if (!(await set.releaseLease(lease))) {
          deps.log.log('info', 'reclaim.skipped', { cidr: lease.cidr, node: lease.owner, reason: 'lease changed since listed' });
          continue;
        }
        report.reclaimed.push({ cidr: lease.cidr, owner: lease.owner });
        deps.log.log('info', 'action', { action: 'release-cidr', cidr: lease.cidr, node: lease.owner });
      } catch (error) {
        report.errors.push({ step: 'reclaim', message: errorText(error) });
      }
    }
  }
}

/**
 * Prefixes mode: upstream's validate branch (pod CIDRs and prefixes both present) writes nothing, so
 * a node whose prefixes match its pod CIDRs is marked reachable here.
 */
async function markReachableWhenAliased(node: Node, cloud: DualStackCloudAlias, deps: ReconcileDeps): Promise<void> {
  const podCidrs = podCidrsOf(node).map((text) => tryParseCidr(text)).filter((c) => c !== null).map(formatCidr);
  if (podCidrs.length < deps.config.clusterCidrs.length) return;
  const aliases = new Set((await cloud.alias(node)).map((text) => tryParseCidr(text)).filter((c) => c !== null).map(formatCidr));
  if (podCidrs.every((cidr) => aliases.has(cidr))) await deps.nodes.setNetworkUnavailable(node.metadata.name, false);
}

/** A node needs node sync when it lacks a pod CIDR of some cluster family (or, with prefixes, is not yet reachable). */
function needsNodeSync(node: Node, wantedFamilies: ReadonlyArray<Family | undefined>, mode: ReconcileConfig['mode']): boolean {
  const families = new Set(podCidrsOf(node).map((text) => tryParseCidr(text)?.family));
  if (wantedFamilies.some((family) => !families.has(family))) return true;
  return mode === 'prefixes' && networkUnavailableOf(node) !== 'False';
}

/** Node-sync ports for one node, by mode. */
function nodeSyncDeps(deps: ReconcileDeps, tables: RouteTable[], node: Node) {
  return { mode: deps.config.nodeSyncMode, cidrSets: deps.cidrSets, cloud: nodeSyncCloud(deps, tables, node), kube: nodeSyncKube(deps) };
}

/** Prefixes mode has no route work: nodes only carry their wanted condition (unmanaged ones their reason). */
function prefixModePlan(nodes: Node[], config: ReconcileConfig): RoutePlan {
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

/** The static routes by (table, destination): the ones plans act on (a propagated route beside one is context). */
function indexRoutes(tables: RouteTable[]): Map<string, { instanceId: string | null; blackhole: boolean }> {
  const map = new Map<string, { instanceId: string | null; blackhole: boolean }>();
  for (const table of tables) {
    for (const route of table.routes) if (route.propagated === undefined) map.set(`${table.routeTableId}|${route.destinationCidr}`, { instanceId: route.instanceId, blackhole: route.blackhole });
  }
  return map;
}

function summarize(report: ReconcileReport, deps: ReconcileDeps, started: number): void {
  const { plan } = report;
  deps.log.log('info', 'reconcile.summary', {
    nodes: report.nodes,
    routeTables: report.routeTables,
    nodesReady: report.nodesReady,
    nodesBlocked: report.nodesBlocked,
    create: plan.create.length,
    replace: plan.replace.length,
    delete: plan.delete.length,
    unsafe: plan.unsafe ?? null,
    messagesSent: report.messagesSent,
    messagesDeferred: report.messagesDeferred,
    conditionsPatched: report.conditionsPatched,
    allocated: report.allocated.length,
    occupied: report.occupied,
    reclaimed: report.reclaimed.length,
    errors: report.errors.length,
    ms: deps.now() - started,
  });
  // Gauges, every run (also 0), so alarms and the dashboard see a value each tick.
  deps.log.metric('ReconcileErrors', report.errors.length);
  deps.log.metric('NodesTotal', report.nodes);
  deps.log.metric('NodesReady', report.nodesReady);
  deps.log.metric('NodesBlocked', report.nodesBlocked);
  deps.log.metric('RoutesPending', plan.create.length + plan.replace.length);
  deps.log.metric('DeletionsWithheld', report.deletionsWithheld);
}

/**
 * Nodes whose NetworkUnavailable condition has been True for longer than `thresholdMs` at `now`,
 * by the condition's lastTransitionTime (a condition without a readable time is not counted).
 */
export function countBlocked(nodes: readonly Node[], now: number, thresholdMs: number): number {
  let blocked = 0;
  for (const node of nodes) {
    const condition = node.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
    if (condition?.status !== 'True' || !condition.lastTransitionTime) continue;
    const since = Date.parse(condition.lastTransitionTime);
    if (Number.isFinite(since) && now - since > thresholdMs) blocked += 1;
  }
  return blocked;
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
