/**
 * The reconcile use case (EventBridge schedule): gather -> plan (pure) -> apply -> report. Gather
 * reads the cloud side, nodes and leases once each (lib/dataplane/data-plane.ts `readRun`; an
 * unreadable or suddenly empty input stops the run, `readWorld`); plan with the data plane, route
 * work decided by ./reconcile-route-work.ts; apply: mark incomplete nodes first (./node-claims.ts),
 * queue route work, write conditions, sync nodes, release leases read 404. Steady state writes nothing.
 */
import type { Config } from '../config.ts';
import { conditionText } from '../dataplane/data-plane.ts';
import type { DataPlane, PlaneRun, PlannedNodeSync, Settled } from '../dataplane/data-plane.ts';
import type { CidrSet, Lease } from '../ipam/index.ts';
import type { Logger } from '../log.ts';
import { syncNodeMessage } from '../messages/work-message.ts';
import type { WorkMessage } from '../messages/work-message.ts';
import { networkUnavailableOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { clusterTagKey } from '../routes/index.ts';
import { errorText, PodrouteError } from '../errors.ts';
import { DEFAULT_MAX_RECEIVE_COUNT, messageLifetimeMs } from '../messages/work-queue.ts';
import { absenceSuspects, readPresence, refuseWorld, worldChecks } from './absence.ts';
import type { InputRead, Presence } from './absence.ts';
import { clearFullMarks, workMessages, settleRouteWork } from './reconcile-route-work.ts';
import type { RoutePlan, RouteTable } from '../routes/index.ts';
import type { WithheldOp } from '../routes/route-work.ts';
import { mapSettled } from '../util/concurrency.ts';
import { maskMismatchMessage, maskMismatches } from './pod-cidr-mask.ts';
import type { MaskMismatch } from './pod-cidr-mask.ts';
import { adoptPodCidrs, reclaimOrphans, reclaimable, repairLeases } from './lease-upkeep.ts';
import { markUnrouted, unroutedNodes, warnConflicts } from './node-claims.ts';
import { nodeSyncKube } from './node-sync-ports.ts';
import type { ClaimCensusStore, DeletionWindowStore, NodeSource, RouteTables, WorkQueue } from './ports.ts';
import { recordRun } from './claim-census.ts';
import { countBlocked, summarize } from './reconcile-summary.ts';

type ReconcileConfig = Pick<Config, 'clusterCidrs' | 'nodeSyncMode' | 'maxDeleteShare' | 'minDeletesForGuard' | 'leaseGraceSeconds'> &
  Partial<Pick<Config, 'blockedNodeSeconds' | 'nodeSelector' | 'clusterName' | 'migrationMaskSizes' | 'routeQuota' | 'maxReceiveCount'>>;

/** Default of `blockedNodeSeconds` (config BLOCKED_NODE_SECONDS). */
const DEFAULT_BLOCKED_NODE_SECONDS = 600;

export interface ReconcileDeps {
  config: ReconcileConfig;
  /** The data plane chosen in the wiring: the cloud side, the sets, the plan, node sync, readiness. */
  plane: DataPlane;
  routeTables: RouteTables;
  nodes: NodeSource;
  queue: WorkQueue;
  /** The cluster CIDRs' sets (routes plane), in the order of `config.clusterCidrs`; each run uses its plane's sets. */
  cidrSets: CidrSet[];
  log: Logger;
  now: () => number;
  /** Kubernetes writes (and keyed node reads) in flight at once. */
  concurrency?: number;
  /** The mass-deletion guard's window of runs (lib/aws/dynamodb-deletion-guard.ts); without it each run is judged alone. */
  deletionWindow?: DeletionWindowStore;
  /** Where each run records whether it left an unleased pod CIDR (./claim-census.ts); without it admissions always list. */
  claimCensus?: ClaimCensusStore;
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
  /** Work messages not sent because the queue's backlog already held as many (an earlier tick's). */
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
  /** Planned route operations that do not go out this run, with why (the route decider's answer). */
  withheld: readonly WithheldOp[];
  /** A dry run only: the writes the run stopped before, as decided. */
  planned?: PlannedWrites;
}

/** What a dry run would have written, decided by the same code as the run it stands for. */
export interface PlannedWrites {
  /** The messages the run would send: route work after every filter, then the sync-node messages. */
  messages: WorkMessage[];
  /** Node sync of each node that needs it: the decider's actions, not applied. */
  nodeSync: PlannedNodeSync[];
  /** Pod CIDRs nodes hold without a lease that the run would occupy for them. */
  occupy: ReadonlyArray<{ node: string; cidr: string }>;
  /** NetworkUnavailable writes: true for a node not carried yet or refused, false for a node carried. */
  conditions: ReadonlyArray<{ node: string; networkUnavailable: boolean }>;
  /** Leases of nodes a keyed read found gone, past the grace, that the run would release. */
  reclaim: ReadonlyArray<{ cidr: string; owner: string }>;
}

export async function reconcile(deps: ReconcileDeps, options: { dryRun?: boolean } = {}): Promise<ReconcileReport> {
  const started = deps.now();
  const { config } = deps;
  const dryRun = options.dryRun === true;
  const backlog = watchedBacklog(deps.queue);
  const { tables, nodes, cloud } = await readWorld(deps, backlog.read);
  const run: ReconcileDeps = { ...deps, cidrSets: cloud.sets };
  // Absence is confirmed by key (./absence.ts): the owners of old leases that the listing lacks.
  const graceMs = config.leaseGraceSeconds * 1000;
  const presence = await readPresence(absenceSuspects(nodes, cloud.leaseLists.flat(), deps.now(), graceMs), deps.nodes, deps.concurrency ?? 4);
  // Pod CIDRs of another size than the configured blocks (told every run, also in a dry run).
  const mismatches = maskMismatches(nodes, run.cidrSets);
  // Leases first (not in a dry run): a block left without its owner record is linked to it, and
  // the pod CIDRs the ownership decider lets reconcile adopt are occupied, so the plan below routes
  // them from their lease, and no new node is allocated a block a node already holds.
  const errors = cloud.error !== undefined ? [{ step: 'prefix-read', message: cloud.error }] : [];
  const upkeep: Pick<ReconcileReport, 'occupied' | 'errors' | 'leasesRepaired' | 'reclaimed' | 'reclaimWithheld'> = { occupied: 0, leasesRepaired: [], reclaimed: [], reclaimWithheld: 0, errors };
  if (!dryRun) await repairLeases(cloud.leaseLists, run, upkeep);
  const { leaseLists, leaseTable, adoptable } = await adoptPodCidrs(nodes, cloud.leaseLists, mismatches, run, upkeep, dryRun);
  // Clear when every candidate is leased now and every set was read: new nodes' admissions need no listing.
  if (!dryRun) await recordRun(deps.claimCensus, { at: started, clear: cloud.error === undefined && upkeep.occupied === adoptable.length, writtenAt: deps.now() }, deps.log);
  const { plan: planned, live } = await cloud.plan({ nodes, leaseTable });
  const routeFacts = { tables, now: deps.now(), backing: { nodes, leases: leaseLists.flat(), presence, graceMs }, limits: config };
  const settled = await settleRouteWork({ plan: planned, live }, routeFacts, deps, dryRun);
  const { plan } = settled.work;
  const report = startReport(plan, nodes, tables, settled.work.deletionsWithheld, started, config, upkeep);
  tellWarnings(plan, mismatches, settled.work.deletionsWithheld, deps.log);
  // Up to here a dry run is the run; from here it decides each write and stops before it.
  const markedUnrouted = dryRun ? new Set<string>() : await markUnrouted(plan, nodes, deps, report);
  if (!dryRun) await warnConflicts(plan, deps);
  if (!dryRun) await clearFullMarks(settled.work, deps);
  const synced = dryRun ? await planNodeSyncs(nodes, plan, cloud, deps, report) : { messages: await syncNodes(nodes, plan, cloud, deps, report), planned: [] };
  // A plane that could not read the backlog decided without it (told here, also in a dry run).
  const unread = backlog.failure();
  if (unread !== undefined) report.errors.push({ step: 'backlog', message: unread });
  // Route work goes with the new nodes' sync messages (./reconcile-route-work.ts: the backlog may defer it).
  const outgoing = await workMessages({ plan: planned, live }, settled.facts, synced.messages, deps);
  report.messagesDeferred = outgoing.work.deferred;
  report.withheld = outgoing.work.withheld;
  if (dryRun) {
    report.planned = { messages: outgoing.messages, nodeSync: synced.planned, occupy: adoptable, ...plannedUpkeep(plan, nodes, new Set(report.allocated), { leaseLists, presence, delegated: cloud.delegated }, run) };
  } else {
    report.messagesSent = outgoing.messages.length > 0 ? (await deps.queue.send(outgoing.messages)).sent : 0;
    await patchConditions(plan, new Set(report.allocated), markedUnrouted, deps, report);
    await reclaimOrphans(nodes, leaseLists, presence, run, report, cloud.delegated);
  }
  summarize(report, deps, started, tables);
  return report;
}

function startReport(
  plan: RoutePlan,
  nodes: readonly Node[],
  tables: readonly RouteTable[],
  deletionsWithheld: number,
  started: number,
  config: ReconcileConfig,
  upkeep: Pick<ReconcileReport, 'occupied' | 'errors' | 'leasesRepaired' | 'reclaimed' | 'reclaimWithheld'>,
): ReconcileReport {
  return {
    plan,
    nodes: nodes.length,
    routeTables: tables.length,
    nodesReady: nodes.filter((node) => networkUnavailableOf(node) === 'False').length,
    nodesBlocked: countBlocked(nodes, started, (config.blockedNodeSeconds ?? DEFAULT_BLOCKED_NODE_SECONDS) * 1000),
    messagesSent: 0,
    messagesDeferred: 0,
    deletionsWithheld,
    conditionsPatched: 0,
    allocated: [],
    withheld: [],
    ...upkeep,
  };
}

/** The plan's unsafe reason and warnings, one log line each; pod CIDRs of another size join the plan's warnings. */
function tellWarnings(plan: RoutePlan, mismatches: readonly MaskMismatch[], withheld: number, log: Logger): void {
  if (plan.unsafe !== undefined) {
    log.log('warn', 'reconcile.unsafe', { reason: plan.unsafe, withheld });
  }
  for (const warning of plan.warnings ?? []) log.log('warn', 'plan.warning', { ...warning });
  for (const m of mismatches) {
    const detail = maskMismatchMessage(m);
    plan.warnings = [...(plan.warnings ?? []), { reason: 'pod-cidr-mask-mismatch', node: m.node, destinationCidr: m.cidr, detail }];
    log.log('warn', 'pod-cidr.mask-mismatch', { node: m.node, cidr: m.cidr, nodeMaskSize: m.set.nodeMaskSize, detail });
  }
}

/** The managed nodes the plane says need node sync; not those whose claim is a conflict (a second node naming another's instance, say). */
function nodesNeedingSync(nodes: readonly Node[], plan: RoutePlan, deps: ReconcileDeps): Node[] {
  const { config, plane } = deps;
  // Nodes that are not podroute's (unmanagedReason) are never allocated, like the planner never routes them.
  const conflicted = new Set(plan.nodes.filter((status) => status.conflict !== undefined).map((status) => status.node));
  return nodes.filter((node) => unmanagedReason(node, config.nodeSelector) === null && !conflicted.has(node.metadata.name) && plane.needsNodeSync(node));
}

/** Node sync for the nodes that need it, over the run's reads; answers the `sync-node` messages the plane wants after it. */
async function syncNodes(nodes: readonly Node[], plan: RoutePlan, cloud: PlaneRun, deps: ReconcileDeps, report: ReconcileReport): Promise<WorkMessage[]> {
  const { plane, log } = deps;
  const needSync = nodesNeedingSync(nodes, plan, deps);
  const kube = nodeSyncKube(deps);
  const sync = await mapSettled(needSync, deps.concurrency ?? 4, (node) => cloud.syncNode(node, kube));
  const messages: WorkMessage[] = [];
  sync.forEach((result, i) => {
    const name = needSync[i]?.metadata.name ?? '?';
    if (result.status === 'fulfilled') {
      if (result.value === 'synced') report.allocated.push(name);
      if (plane.queuesSyncNode(undefined)) messages.push(syncNodeMessage(name));
    } else {
      report.errors.push({ node: name, step: 'node-sync', message: errorText(result.reason) });
      log.log('error', 'node-sync.failed', { node: name, error: result.reason });
    }
  });
  return messages;
}

/** A dry run's node sync: each node's decided actions, and the `sync-node` messages of the nodes whose sync would not fail. */
async function planNodeSyncs(nodes: readonly Node[], plan: RoutePlan, cloud: PlaneRun, deps: ReconcileDeps, report: ReconcileReport): Promise<{ messages: WorkMessage[]; planned: PlannedNodeSync[] }> {
  const needSync = nodesNeedingSync(nodes, plan, deps);
  const planned: PlannedNodeSync[] = [];
  (await Promise.allSettled(needSync.map((node) => cloud.planNodeSync(node)))).forEach((result, i) => {
    if (result.status === 'fulfilled') planned.push(result.value);
    else report.errors.push({ node: needSync[i]?.metadata.name ?? '?', step: 'node-sync', message: errorText(result.reason) });
  });
  const passes = (p: PlannedNodeSync) => !p.actions.some((action) => action.kind === 'fail');
  // What `syncNodes` counts as allocated: every node whose sync would answer 'synced', whichever branch.
  report.allocated.push(...planned.filter((p) => p.outcome === 'sync' && passes(p)).map((p) => p.node));
  const messages = deps.plane.queuesSyncNode(undefined) ? planned.filter(passes).map((p) => syncNodeMessage(p.node)) : [];
  return { messages, planned };
}

/** A dry run's condition writes and reclaims, decided as the run decides them. */
function plannedUpkeep(plan: RoutePlan, nodes: readonly Node[], allocated: ReadonlySet<string>, leases: { leaseLists: Lease[][]; presence: ReadonlyMap<string, Presence>; delegated: readonly string[] }, run: ReconcileDeps): Pick<PlannedWrites, 'conditions' | 'reclaim'> {
  const marked = unroutedNodes(plan, nodes);
  const patched = conditionPatches(plan, allocated, new Set(marked)).map((status) => ({ node: status.node, networkUnavailable: status.networkUnavailable === true }));
  const conditions = [...marked.map((node) => ({ node, networkUnavailable: true })), ...patched];
  return { conditions, reclaim: reclaimable(nodes, leases.leaseLists, leases.presence, run, leases.delegated) };
}

/** Pure: the plan's statuses whose condition the run writes, bar those node sync or the unrouted mark wrote already. */
function conditionPatches(plan: RoutePlan, allocatedNow: ReadonlySet<string>, markedUnrouted: ReadonlySet<string>): RoutePlan['nodes'] {
  return plan.nodes.filter(
    (status) =>
      status.patch &&
      status.networkUnavailable !== 'pending' &&
      !(status.networkUnavailable === true && (allocatedNow.has(status.node) || markedUnrouted.has(status.node))),
  );
}

/** Conditions the plan can settle now: complete nodes (false) and nodes without routes (true), in the plane's words. */
async function patchConditions(plan: RoutePlan, allocatedNow: ReadonlySet<string>, markedUnrouted: ReadonlySet<string>, deps: ReconcileDeps, report: ReconcileReport): Promise<void> {
  const patches = conditionPatches(plan, allocatedNow, markedUnrouted);
  const patched = await mapSettled(patches, deps.concurrency ?? 4, async (status) => {
    const unavailable = status.networkUnavailable === true;
    return deps.nodes.setNetworkUnavailable(status.node, unavailable, conditionText(deps.plane, unavailable));
  });
  patched.forEach((result, i) => {
    const status = patches[i];
    if (!status) return;
    if (result.status === 'fulfilled') {
      if (result.value === 'patched') report.conditionsPatched += 1;
      deps.log.log('info', 'action', { action: 'set-network-unavailable', node: status.node, value: status.networkUnavailable, result: result.value });
    } else {
      report.errors.push({ node: status.node, step: 'condition', message: errorText(result.reason) });
    }
  });
}

/** The queue's backlog reader, remembering the message of its first failure. */
function watchedBacklog(queue: WorkQueue): { read?: () => Promise<number>; failure(): string | undefined } {
  let failed: string | undefined;
  const backlog = queue.backlog?.bind(queue);
  if (!backlog) return { failure: () => failed };
  const read = () =>
    backlog().catch((error: unknown) => {
      failed ??= `the work queue's backlog could not be read: ${errorText(error)}`;
      throw error;
    });
  return { read, failure: () => failed };
}

/**
 * Gathers the run's inputs through the data plane, which reads its cloud side, the nodes and the
 * leases in the order it needs (lib/dataplane/routes/routes-plane.ts says why the tables come first).
 *
 * Empty means stop: when an input cannot be read or is suddenly empty (./absence.ts refuseWorld),
 * the run fails retryably before it writes anything, with one log line and the `ReconcileRefused`
 * metric (its alarm is serverless.yml's ReconcileRefusedAlarm).
 */
async function readWorld(deps: ReconcileDeps, backlog: (() => Promise<number>) | undefined): Promise<{ tables: RouteTable[]; nodes: Node[]; cloud: PlaneRun & { leaseLists: Lease[][] } }> {
  const { config } = deps;
  const facts = { now: deps.now(), messageWindowMs: Math.min(config.leaseGraceSeconds * 1000, messageLifetimeMs(config.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT)), ...(backlog ? { backlog } : {}) };
  const read = await deps.plane.readRun(() => deps.nodes.listNodes(), facts);
  const { tables, nodes, leases } = read;
  const count = <T>(r: Settled<T[]>): InputRead => (r.ok ? { ok: true, count: r.value.flat().length } : r);
  const refusal = refuseWorld({
    tablesRequired: deps.plane.tablesRequired,
    clusterTag: config.clusterName ? clusterTagKey(config.clusterName) : clusterTagKey('<CLUSTER_NAME>'),
    tables: tables && count(tables),
    nodes: count(nodes),
    leases: count(leases),
    ...(nodes.ok && leases.ok ? await worldChecks(nodes.value, leases.value.flat(), config, deps.nodes, deps.concurrency ?? 4) : {}),
  });
  if (refusal !== null || !nodes.ok || !leases.ok || (tables !== null && !tables.ok) || read.run === null) {
    const reason = refusal ?? 'an input could not be read';
    const cause = [tables, nodes, leases].find((r) => r !== null && !r.ok);
    deps.log.log('error', 'reconcile.refused', { reason });
    deps.log.metric('ReconcileRefused', 1);
    throw new PodrouteError(`reconcile refused to run: ${reason}`, { retryable: true, ...(cause && !cause.ok ? { cause: cause.error } : {}) });
  }
  return { tables: read.run.tables, nodes: nodes.value, cloud: { ...read.run, leaseLists: leases.value } };
}
