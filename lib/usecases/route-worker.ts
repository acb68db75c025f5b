/**
 * The route worker's use case: one queue message in, the VPC brought in line with it.
 *
 * A message is a hint, not the truth (level-triggered): before acting the worker re-reads the node
 * and the route, and a message that no longer matches them is acknowledged as stale. Every EC2 call
 * is idempotent (`RouteAlreadyExists` with the same target and `InvalidRoute.NotFound` on delete are
 * success), so a duplicate or out-of-order delivery converges to the same state.
 *
 * Outcome per message: `ack` (done, stale, or a failure that retrying cannot fix, which is reported
 * on the node) or `retry` (a retryable failure: the queue redelivers it, with backoff).
 *
 * A retryable failure (throttling, a 5xx, a timeout) on the message's last receive but one is
 * acknowledged as `handed-back` instead of being left to the dead-letter queue: the message is only a hint, and
 * the next reconcile (at most a minute away) re-reads the node and the tables and sends whatever is
 * still missing as a fresh message. A dead letter would help nobody (nothing replays it, and what it
 * says may be stale by then), and re-sending the message from here would loop forever during an
 * outage that reconcile, with its backlog guard, rides out at a bounded rate. The dead-letter queue
 * is left for what no retry can help: an invocation that crashes or times out on every receive.
 * Either way the node is told (an event, NetworkUnavailable=True) only after re-reading that its
 * routes really are missing, so a redundant message that failed never flips a healthy node.
 */
import { containsCidr, tryParseCidr, formatCidr } from '../cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { parseRouteMessage } from '../messages/route-message.ts';
import type { Admitted, DeleteRouteMessage, RouteMessage, SyncNodeMessage } from '../messages/route-message.ts';
import { instanceIdOf, networkUnavailableOf, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { isResponsibleForRoute, parseRouteTables, planRoutes, propagationOf } from '../routes/index.ts';
import type { RoutePlan, RouteTable } from '../routes/index.ts';
import { NodeNotFoundError } from '../kube/kube-errors.ts';
import { RouteConflictError, RouteTableFullError, mayBeLaunchLag } from '../aws/ec2-errors.ts';
import type { CidrSet } from '../ipam/index.ts';
import { ROUTE_TABLE_FULL_TAG, routeCountOf } from '../routes/table-full.ts';
import { checkNodeLeft } from './node-left.ts';
import type { DescribedRoute, NodeSource, RouteTables } from './ports.ts';

export const FAILED_TO_CREATE_ROUTE = 'FailedToCreateRoute';
/** The event reason when a route table holds as many routes as its quota allows. */
export const ROUTE_TABLE_FULL = 'RouteTableFull';

export interface RouteWorkerDeps {
  clusterCidrs: readonly string[];
  routeTables: RouteTables;
  nodes: NodeSource;
  log: Logger;
  now: () => number;
  /** The cluster's CIDR sets: a `node-left` check releases a deleted node's leases in them. */
  cidrSets: readonly CidrSet[];
  /** NODE_SELECTOR: a node outside it is not podroute's (absent = every node). */
  nodeSelector?: LabelSelector;
  /** Instance -> primary interface, kept for the container's life (source/dest check already off). */
  targets?: Map<string, { primaryEniId: string; at: number }>;
}

/** How long a container trusts a remembered route target before describing the instance again. */
export const TARGET_CACHE_MS = 5 * 60_000;

/**
 * For this long after a node's creation, EC2 answering that its instance or interface does not
 * exist (`InvalidInstanceID.NotFound`, `InvalidNetworkInterfaceID.NotFound`) is retried instead of
 * reported. EC2 Developer Guide, "Eventual consistency in the Amazon EC2 API": a command with the id
 * of an instance just launched may fail with `InvalidInstanceID.NotFound`, which "does not mean the
 * instance does not exist"; it advises retrying with backoff for up to a few minutes. After this
 * window the answer is taken at its word: the failure is permanent and reported on the node.
 */
export const LAUNCH_LAG_WINDOW_MS = 5 * 60_000;

export interface Delivery {
  /** How often the queue has delivered this message, this time included. */
  receiveCount: number;
  /** Deliveries after which the queue moves the message to the dead-letter queue. */
  maxReceiveCount: number;
}

export type WorkResult = { outcome: 'ack' | 'retry'; status: string };

/**
 * What becomes of a failed message: `retry` (the queue delivers it again), `handed-back` (retryable,
 * but its receives are nearly used up: acknowledged, the next reconcile re-plans it) or `failed`
 * (retrying cannot help: acknowledged and reported).
 */
export type FailureOutcome = 'retry' | 'handed-back' | 'failed';

/**
 * The outcome of a failure, from whether it is retryable and which receive this is. A retryable
 * failure is handed back one receive before the last: an invocation that crashes or times out
 * answers nothing and still counts a receive, so the last receive is kept as that margin. Only a
 * message whose invocations crash or time out again and again reaches the dead-letter queue.
 */
export function failureOutcome(retryable: boolean, delivery: Delivery): FailureOutcome {
  if (!retryable) return 'failed';
  return delivery.receiveCount >= delivery.maxReceiveCount - 1 ? 'handed-back' : 'retry';
}

/** Parses, applies and classifies one message body. Never throws. Logs one line per failure. */
export async function handleRouteMessage(body: string, delivery: Delivery, deps: RouteWorkerDeps): Promise<WorkResult> {
  let message: RouteMessage;
  try {
    message = parseRouteMessage(body);
  } catch (error) {
    deps.log.log('error', 'message.rejected', { error, receiveCount: delivery.receiveCount, outcome: 'failed' });
    deps.log.metric('MessagesRejected', 1);
    return { outcome: 'ack', status: 'rejected' };
  }
  const started = deps.now();
  try {
    const status = await applyRouteMessage(message, deps, delivery);
    deps.log.log('info', 'message.done', { ...describe(message), status, ms: deps.now() - started });
    return { outcome: 'ack', status };
  } catch (error) {
    const retryable = error instanceof PodrouteError && error.retryable;
    const outcome = failureOutcome(retryable, delivery);
    deps.log.log(outcome === 'retry' ? 'warn' : 'error', 'message.failed', {
      ...describe(message),
      error,
      retryable,
      outcome,
      receiveCount: delivery.receiveCount,
      ms: deps.now() - started,
    });
    if (outcome !== 'retry') await reportFailure(message, error, deps);
    deps.log.metric(outcome === 'retry' ? 'MessagesRetried' : outcome === 'handed-back' ? 'MessagesHandedBack' : 'MessagesFailed', 1);
    return outcome === 'retry' ? { outcome: 'retry', status: 'retry' } : { outcome: 'ack', status: outcome };
  }
}

/** Applies one message; resolves with what happened, rejects with a PodrouteError. */
export async function applyRouteMessage(message: RouteMessage, deps: RouteWorkerDeps, delivery?: Delivery): Promise<string> {
  switch (message.kind) {
    case 'create':
    case 'replace':
      return applyRoute(message, deps);
    case 'delete':
      return applyDelete(message, deps);
    case 'sync-node':
      return syncNodeRoutes(message, deps, delivery);
    case 'node-left':
      return checkNodeLeft(message.node, deps, delivery);
  }
}

interface RouteOp {
  routeTableId: string;
  destinationCidr: string;
  node: string;
  instanceId: string;
}

async function applyRoute(op: RouteOp, deps: RouteWorkerDeps): Promise<string> {
  const node = await currentNode(op.node, deps);
  if (!node) return 'stale:node-gone';
  const unmanaged = unmanagedReason(node, deps.nodeSelector);
  if (unmanaged !== null) return `stale:unmanaged ${unmanaged}`;
  const stale = staleness(op, node, deps.clusterCidrs);
  if (stale) return stale;
  // One listing serves the decision and the node's condition: EC2's describe budget is shared.
  const tables = await listTables(deps);
  if (!tables.some((table) => table.routeTableId === op.routeTableId)) return 'stale:not-a-cluster-table';
  const plan = planRoutes({ nodes: [node], routeTables: tables, clusterCidrs: deps.clusterCidrs });
  const result = await minding(tables, op, deps, () => ensureRoute(op, findRoute(tables, op.routeTableId, op.destinationCidr), node, deps));
  await settleAfter(node, plan, [op], deps);
  return result;
}

/**
 * Runs one route write, minding the table's full mark (lib/routes/table-full.ts): a write refused
 * with RouteLimitExceeded marks the table full (tag with its route count and the time) and counts a
 * `RouteTableFull` metric for the table; a write that succeeds on a marked table removes the mark.
 * The failure itself still goes up, to be reported once on the node.
 */
async function minding<T>(tables: readonly RouteTable[], op: RouteOp, deps: RouteWorkerDeps, write: () => Promise<T>): Promise<T> {
  const table = tables.find((t) => t.routeTableId === op.routeTableId);
  try {
    const result = await write();
    if (table && Object.hasOwn(table.tags, ROUTE_TABLE_FULL_TAG) && deps.routeTables.clearRouteTableFull) {
      await deps.routeTables
        .clearRouteTableFull(op.routeTableId)
        .then(() => deps.log.log('info', 'action', { action: 'clear-route-table-full', routeTableId: op.routeTableId }))
        .catch((error: unknown) => deps.log.log('warn', 'route-table-full.clear-failed', { routeTableId: op.routeTableId, error }));
    }
    return result;
  } catch (error) {
    if (error instanceof RouteTableFullError) {
      const routeCount = table ? routeCountOf(table) : 0;
      // Two streams of one metric: the stack's alarm watches the one with only the function's own
      // dimensions (cluster, function); the per-table one says which table to raise or split.
      deps.log.metric(ROUTE_TABLE_FULL, 1);
      deps.log.metric(ROUTE_TABLE_FULL, 1, 'Count', { RouteTableId: op.routeTableId });
      if (deps.routeTables.markRouteTableFull) {
        await deps.routeTables
          .markRouteTableFull(op.routeTableId, { routeCount, at: deps.now() })
          .then(() => deps.log.log('warn', 'action', { action: 'mark-route-table-full', routeTableId: op.routeTableId, routeCount }))
          .catch((markError: unknown) => deps.log.log('warn', 'route-table-full.mark-failed', { routeTableId: op.routeTableId, error: markError }));
      }
    }
    throw error;
  }
}

/** What the worker decides a route on, whether it was listed or described. */
interface CurrentRoute {
  networkInterfaceId: string | null;
  instanceId: string | null;
  blackhole: boolean;
  /** The target when it is no instance (a gateway, a bare interface): such a route is never changed. */
  foreign: string | null;
}

/**
 * The listed static route of `routeTableId` to `destinationCidr`, the one route calls act on; null
 * when the table has none. A propagated route to the same destination may sit beside it (the
 * static one wins: Amazon VPC User Guide, "How route priority works") and is only context, as in
 * the planner: with no static route, a VGW-propagated one is no obstacle (CreateRoute adds the
 * static route beside it), a VPC Route Server one is foreign (lib/routes/route-plan.ts, step 5).
 */
function findRoute(tables: RouteTable[], routeTableId: string, destinationCidr: string): CurrentRoute | null {
  const routes = tables.find((t) => t.routeTableId === routeTableId)?.routes.filter((r) => r.destinationCidr === destinationCidr) ?? [];
  const route = routes.find((r) => r.propagated === undefined) ?? routes.find((r) => r.propagated === 'route-server');
  if (!route) return null;
  const foreign =
    route.propagated !== undefined
      ? 'a propagated route'
      : !route.blackhole && route.target !== 'instance'
        ? route.target === 'interface'
          ? (route.networkInterfaceId ?? 'an unknown target')
          : route.target
        : null;
  return { networkInterfaceId: route.networkInterfaceId, instanceId: route.instanceId, blackhole: route.blackhole, foreign };
}

/** A route as EC2 describes it, in the same terms. */
function described(route: DescribedRoute): CurrentRoute {
  const blackhole = route.State === 'blackhole';
  const gateway = route.GatewayId ?? route.NatGatewayId ?? route.TransitGatewayId ?? route.VpcPeeringConnectionId;
  // A propagated route (VGW or VPC Route Server) is never deleted or replaced, blackhole or not.
  const propagated = propagationOf(route) !== undefined;
  const foreign = propagated ? 'a propagated route' : blackhole ? null : (gateway ?? (route.InstanceId ? null : (route.NetworkInterfaceId ?? 'an unknown target')));
  return { networkInterfaceId: route.NetworkInterfaceId ?? null, instanceId: route.InstanceId ?? null, blackhole, foreign };
}

/** The node's primary interface, with source/destination check off; remembered per container. */
async function routeTarget(op: RouteOp, deps: RouteWorkerDeps): Promise<string> {
  const cached = deps.targets?.get(op.instanceId);
  if (cached && deps.now() - cached.at < TARGET_CACHE_MS) return cached.primaryEniId;
  const started = deps.now();
  const target = await deps.routeTables.prepareRouteTarget(op.instanceId);
  if (target.sourceDestCheckChanged) {
    deps.log.log('info', 'action', {
      action: 'disable-source-dest-check',
      node: op.node,
      instanceId: op.instanceId,
      networkInterfaceId: target.primaryEniId,
      ms: deps.now() - started,
    });
  }
  deps.targets?.set(op.instanceId, { primaryEniId: target.primaryEniId, at: deps.now() });
  return target.primaryEniId;
}

/**
 * Puts `op.destinationCidr -> node` into the table, whatever is there now (except a foreign target).
 * EC2 saying the node's instance or interface does not exist is retryable while the node is new
 * (eventual consistency, `LAUNCH_LAG_WINDOW_MS`) and permanent after; either way nothing about the
 * target stays remembered.
 */
async function ensureRoute(op: RouteOp, current: CurrentRoute | null, node: Node, deps: RouteWorkerDeps): Promise<'created' | 'replaced' | 'exists'> {
  try {
    return await putRoute(op, current, deps);
  } catch (error) {
    if (!mayBeLaunchLag(error)) throw error;
    deps.targets?.delete(op.instanceId);
    const age = nodeAgeMs(node, deps.now());
    if (age === null || age >= LAUNCH_LAG_WINDOW_MS) throw error;
    throw new PodrouteError(
      `EC2 ${error.operation} answered ${error.code ?? 'not found'} for instance ${op.instanceId} of node ${op.node}, created ${Math.max(0, Math.round(age / 1000))} s ago: ` +
        'EC2 may not show a new instance yet (eventual consistency); retrying',
      { retryable: true, cause: error },
    );
  }
}

/** How long ago the node was created (`metadata.creationTimestamp`), or null when it does not say. */
function nodeAgeMs(node: Node, now: number): number | null {
  const created = node.metadata.creationTimestamp;
  if (typeof created !== 'string') return null;
  const at = Date.parse(created);
  return Number.isFinite(at) ? now - at : null;
}

async function putRoute(op: RouteOp, current: CurrentRoute | null, deps: RouteWorkerDeps): Promise<'created' | 'replaced' | 'exists'> {
  const started = deps.now();
  const eni = await routeTarget(op, deps);
  const spec = { routeTableId: op.routeTableId, destinationCidr: op.destinationCidr, networkInterfaceId: eni };
  let result: 'created' | 'replaced' | 'exists';
  if (current === null) {
    try {
      result = await deps.routeTables.createRoute(spec);
    } catch (error) {
      // Someone created it since the listing: decide again on what is there now.
      if (!(error instanceof RouteConflictError)) throw error;
      const now = await deps.routeTables.describeRoute(op.routeTableId, op.destinationCidr);
      if (now === null || described(now).foreign !== null) throw error;
      await deps.routeTables.replaceRoute(spec);
      result = 'replaced';
    }
  } else if (current.networkInterfaceId === eni && !current.blackhole) {
    result = 'exists';
  } else if (current.foreign !== null) {
    throw new PodrouteError(
      `route ${op.destinationCidr} in ${op.routeTableId} targets ${current.foreign}, not an instance; podroute does not replace routes to gateways or bare interfaces`,
    );
  } else {
    await deps.routeTables.replaceRoute(spec);
    result = 'replaced';
  }
  deps.log.log('info', 'action', {
    action: result === 'exists' ? 'route-exists' : result === 'created' ? 'create-route' : 'replace-route',
    cidr: op.destinationCidr,
    node: op.node,
    routeTableId: op.routeTableId,
    ms: deps.now() - started,
  });
  return result;
}

async function applyDelete(message: DeleteRouteMessage, deps: RouteWorkerDeps): Promise<string> {
  if (!isResponsibleForRoute(message.destinationCidr, deps.clusterCidrs)) {
    throw new InvalidInputError(`refusing to delete ${message.destinationCidr}: it is outside the cluster CIDRs ${deps.clusterCidrs.join(',')}`);
  }
  const found = await deps.routeTables.describeRoute(message.routeTableId, message.destinationCidr);
  if (found === null) return 'absent';
  const current = described(found);
  if (current.foreign !== null) return `stale:foreign-target ${current.foreign}`;
  const blackhole = current.blackhole;
  if (message.reason === 'blackhole' && !blackhole) return 'stale:no-longer-blackhole';
  const expect = message.expect;
  if (expect !== undefined) {
    if (expect.blackhole !== blackhole && message.reason === 'no-owner') return 'stale:state-changed';
    if (!blackhole && current.instanceId !== expect.instanceId) return 'stale:target-changed';
  }
  const started = deps.now();
  const result = await deps.routeTables.deleteRoute({ routeTableId: message.routeTableId, destinationCidr: message.destinationCidr });
  deps.log.log('info', 'action', {
    action: 'delete-route',
    cidr: message.destinationCidr,
    routeTableId: message.routeTableId,
    reason: message.reason,
    result,
    ms: deps.now() - started,
  });
  return result;
}

/**
 * Creates or fixes every route of one node, then settles its condition (the webhook path).
 *
 * A message from a node's admission carries what the admission knew (`admitted`: instance and pod
 * CIDRs), and on its first receive a node not stored yet is routed from that at once: the Node is
 * stored only after admission answers (Kubernetes docs, "Dynamic Admission Control": admission
 * runs before the object is persisted). Only the condition write needs the stored node: when a
 * re-read after the routes still answers 404, or shows another instance or pod CIDRs, the message
 * is retried shortly (retryable: visibility backoff) and its next receive takes the stored node's
 * ordinary path, where the routes exist already. Retries are handed back before the dead-letter
 * queue (`failureOutcome`). A node whose create is refused after admission never appears: its
 * routes have no owner and its lease no node, which the next reconciles clean up as for any node
 * that left.
 */
async function syncNodeRoutes(message: SyncNodeMessage, deps: RouteWorkerDeps, delivery?: Delivery): Promise<string> {
  const name = message.node;
  const stored = await currentNode(name, deps);
  const firstReceive = (delivery?.receiveCount ?? 1) === 1;
  let node = stored;
  if (!node) {
    // The webhook queues this while the API server is still storing the node.
    if (firstReceive && message.admitted) node = admittedNode(name, message.admitted, deps.now());
    else if (delivery?.receiveCount === 1) throw new PodrouteError(`node ${name} is not stored yet`, { retryable: true });
    else return 'stale:node-gone';
  }
  // A node that is not podroute's gets no route and no condition write (lib/nodes/managed-node.ts);
  // an admitted node passed the webhook's own check (same selector).
  const unmanaged = stored ? unmanagedReason(stored, deps.nodeSelector) : null;
  if (unmanaged !== null) return `stale:unmanaged ${unmanaged}`;
  const tables = await listTables(deps);
  const plan = planRoutes({ nodes: [node], routeTables: tables, clusterCidrs: deps.clusterCidrs });
  const ops = [...plan.create, ...plan.replace].filter((op) => op.node === name);
  const results: string[] = [];
  for (const op of ops) results.push(await minding(tables, op, deps, () => ensureRoute(op, findRoute(tables, op.routeTableId, op.destinationCidr), node, deps)));
  if (!stored && message.admitted) await settleAdmitted(name, message.admitted, deps, (now) => settleAfter(now, plan, ops, deps));
  else await settleAfter(node, plan, ops, deps);
  return ops.length === 0 ? 'in-sync' : results.join(',');
}

/** The node as its admission described it, for routing before it is stored (created now). */
function admittedNode(name: string, admitted: Admitted, now: number): Node {
  const cidrs = admitted.podCidrs;
  return {
    metadata: { name, creationTimestamp: new Date(now).toISOString() },
    spec: { providerID: admitted.instanceId, podCIDR: cidrs[0], podCIDRs: [...cidrs] },
  };
}

/**
 * The condition write of a node routed from its admission: on the stored node, once it is stored
 * and still what was admitted; otherwise retried shortly (see `syncNodeRoutes`).
 */
async function settleAdmitted(name: string, admitted: Admitted, deps: RouteWorkerDeps, settle: (node: Node) => Promise<void>): Promise<void> {
  const now = await currentNode(name, deps);
  if (!now) throw new PodrouteError(`node ${name}: routes made from its admission; the node is not stored yet, so its condition waits`, { retryable: true });
  const sameCidrs = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((cidr) => b.includes(cidr));
  const cidrs = podCidrsOf(now).map((text) => tryParseCidr(text)).filter((c) => c !== null).map(formatCidr);
  if (instanceIdOf(now) !== admitted.instanceId || !sameCidrs(cidrs, admitted.podCidrs)) {
    throw new PodrouteError(`node ${name} was stored with another instance or pod CIDRs than admitted; syncing it again`, { retryable: true });
  }
  await settle(now);
}

/**
 * Writes the node's NetworkUnavailable condition once `done` (just applied) were the last of its
 * planned routes: false when every route now exists, true when the plan says it cannot be ready.
 */
async function settleAfter(node: Node, plan: RoutePlan, done: readonly RouteOp[], deps: RouteWorkerDeps): Promise<void> {
  const name = node.metadata.name;
  const status = plan.nodes.find((n) => n.node === name);
  if (!status) return;
  let wanted: boolean;
  if (status.networkUnavailable === 'pending') {
    const isDone = (op: RouteOp) => done.some((d) => d.routeTableId === op.routeTableId && d.destinationCidr === op.destinationCidr);
    const remaining = [...plan.create, ...plan.replace].filter((op) => op.node === name && !isDone(op));
    if (remaining.length > 0) return;
    wanted = false;
  } else {
    wanted = status.networkUnavailable;
  }
  if (networkUnavailableOf(node) === (wanted ? 'True' : 'False')) return;
  const started = deps.now();
  const result = await deps.nodes.setNetworkUnavailable(name, wanted);
  deps.log.log('info', 'action', { action: 'set-network-unavailable', value: wanted, node: name, result, ms: deps.now() - started });
}

async function listTables(deps: RouteWorkerDeps) {
  return parseRouteTables({ RouteTables: await deps.routeTables.listRouteTables() });
}

async function currentNode(name: string, deps: RouteWorkerDeps): Promise<Node | null> {
  try {
    return await deps.nodes.getNode(name);
  } catch (error) {
    if (error instanceof NodeNotFoundError) return null;
    throw error;
  }
}

/** Why a create/replace no longer fits the node, or null when it still does. */
function staleness(op: RouteOp, node: Node, clusterCidrs: readonly string[]): string | null {
  if (instanceIdOf(node) !== op.instanceId) return 'stale:instance-changed';
  const wanted = tryParseCidr(op.destinationCidr);
  if (!wanted) return 'stale:bad-destination';
  const owned = podCidrsOf(node).map((text) => tryParseCidr(text)).some((cidr) => cidr !== null && formatCidr(cidr) === formatCidr(wanted));
  if (!owned) return 'stale:pod-cidr-changed';
  const inside = clusterCidrs.some((text) => {
    const cluster = tryParseCidr(text);
    return cluster !== null && containsCidr(cluster, wanted);
  });
  return inside ? null : 'stale:outside-cluster-cidrs';
}

/**
 * Tells the node that a route of it could not be made, but only once a fresh read shows that the
 * node still exists and some route of it is really missing: the message may have been redundant (the
 * route made meanwhile by another message or a reconcile), and a healthy node must not be flipped.
 * When the re-read itself fails, nothing is reported; the next reconcile settles the condition.
 */
export async function reportFailure(message: RouteMessage, error: unknown, deps: RouteWorkerDeps): Promise<void> {
  // Neither is about a node's routes: a delete's node is gone, a node-left check's node is leaving.
  if (message.kind === 'delete' || message.kind === 'node-left') return;
  let missing: RouteOp[];
  try {
    const node = await currentNode(message.node, deps);
    if (!node) {
      deps.log.log('info', 'report.skipped', { node: message.node, reason: 'node-gone' });
      return;
    }
    const plan = planRoutes({ nodes: [node], routeTables: await listTables(deps), clusterCidrs: deps.clusterCidrs });
    missing = [...plan.create, ...plan.replace].filter((op) => op.node === message.node);
  } catch (rereadError) {
    deps.log.log('warn', 'report.skipped', { node: message.node, reason: 'reread-failed', error: rereadError });
    return;
  }
  if (missing.length === 0) {
    deps.log.log('info', 'report.skipped', { node: message.node, reason: 'routes-present' });
    return;
  }
  const reason = error instanceof Error ? error.message : String(error);
  const what = message.kind === 'sync-node' ? 'its routes' : `route ${message.destinationCidr} in ${message.routeTableId}`;
  // One event per failure: a full table says so in its reason, so it can be alerted on apart.
  const eventReason = error instanceof RouteTableFullError ? ROUTE_TABLE_FULL : FAILED_TO_CREATE_ROUTE;
  try {
    await deps.nodes.warn(message.node, eventReason, `Could not create ${what} for node ${message.node}: ${reason}`);
    await deps.nodes.setNetworkUnavailable(message.node, true);
  } catch (reportError) {
    deps.log.log('error', 'report.failed', { node: message.node, error: reportError });
  }
}

function describe(message: RouteMessage): Record<string, unknown> {
  return message.kind === 'sync-node' || message.kind === 'node-left'
    ? { kind: message.kind, node: message.node }
    : { kind: message.kind, routeTableId: message.routeTableId, cidr: message.destinationCidr, ...('node' in message ? { node: message.node } : {}) };
}
