/**
 * The route worker's use case: one queue message in, the VPC brought in line with it. A message is a
 * hint (level-triggered): the worker re-reads the node and the route, and acknowledges a message that
 * no longer matches as stale. Every EC2 call is idempotent. One SQS batch shares one listing of the
 * route tables (./route-table-view.ts); the writes live in ./route-writes.ts, and `outcomeOf`
 * (./delivery-outcome.ts) decides `ack` or `retry` (docs/decisions/0004-delivery-outcome.md).
 */
import { conditionText } from '../dataplane/data-plane.ts';
import { PodrouteError } from '../errors.ts';
import { type FailureOutcome, outcomeOf } from './delivery-outcome.ts';
import { parseWorkMessage } from '../messages/work-message.ts';
import type { WorkMessage } from '../messages/work-message.ts';
import { networkUnavailableOf } from '../nodes/node.ts';
import { planRoutes } from '../routes/index.ts';
import { RouteTableFullError } from './port-errors.ts';
import { checkNodeLeft } from './node-left.ts';
import { RouteTableView } from './route-table-view.ts';
import { MessageRefusedError } from './route-worker-claims.ts';
import { type Delivery, FAILED_TO_CREATE_ROUTE, ROUTE_TABLE_FULL, type RouteWorkerDeps, currentNode } from './route-worker-deps.ts';
import { readNodeWorld } from './route-worker-ownership.ts';
import type { RouteOp } from './route-writes.ts';

export { FAILED_TO_CREATE_ROUTE, LAUNCH_LAG_WINDOW_MS, ROUTE_TABLE_FULL, TARGET_CACHE_MS } from './route-worker-deps.ts';
export type { Delivery, RouteWorkerDeps } from './route-worker-deps.ts';
export { RouteTableView } from './route-table-view.ts';
export { type FailureOutcome, outcomeOf } from './delivery-outcome.ts';

export type WorkResult = { outcome: 'ack' | 'retry'; status: string };

/** Parses, applies and classifies one message body. Never throws. Logs one line per failure. */
export async function handleWorkMessage(body: string, delivery: Delivery, deps: RouteWorkerDeps): Promise<WorkResult> {
  let message: WorkMessage;
  try {
    message = parseWorkMessage(body);
  } catch (error) {
    deps.log.log('error', 'message.rejected', { error, receiveCount: delivery.receiveCount, outcome: 'failed' });
    deps.log.metric('MessagesRejected', 1);
    return { outcome: 'ack', status: 'rejected' };
  }
  const started = deps.now();
  try {
    const status = await applyWorkMessage(message, deps, delivery);
    deps.log.log('info', 'message.done', { ...describe(message), status, ms: deps.now() - started });
    return { outcome: 'ack', status };
  } catch (error) {
    const outcome = outcomeOf(error, delivery);
    if (outcome === 'refused' && error instanceof MessageRefusedError) {
      // A hint that contradicts the authority: acknowledged and reported, nothing acted on, no node told.
      deps.log.log('warn', 'message.refused', { ...describe(message), reason: error.reason, error, receiveCount: delivery.receiveCount });
      deps.log.metric('MessagesRefused', 1);
      return { outcome: 'ack', status: `refused:${error.reason}` };
    }
    if (outcome === 'gone' || outcome === 'deferred') {
      // Nothing failed: the node was never stored, or it is still being deleted and left to reconcile.
      const status = outcome === 'gone' ? 'stale:node-gone' : 'deferred:still-deleting';
      deps.log.log('info', 'message.done', { ...describe(message), status, ms: deps.now() - started });
      return { outcome: 'ack', status };
    }
    if (deps.signal?.aborted) {
      // Cut at the deadline: the handler has answered this record already; nothing more is done.
      deps.log.log('warn', 'message.aborted', { ...describe(message), error, receiveCount: delivery.receiveCount, ms: deps.now() - started });
      return { outcome: 'retry', status: 'aborted' };
    }
    const retryable = error instanceof PodrouteError && error.retryable;
    deps.log.log(outcome === 'retry' ? 'warn' : 'error', 'message.failed', {
      ...describe(message),
      error,
      retryable,
      outcome,
      receiveCount: delivery.receiveCount,
      ms: deps.now() - started,
    });
    if (outcome !== 'retry') await reportFailure(message, error, outcome, deps);
    deps.log.metric(outcome === 'retry' ? 'MessagesRetried' : outcome === 'handed-back' ? 'MessagesHandedBack' : 'MessagesFailed', 1);
    return outcome === 'retry' ? { outcome: 'retry', status: 'retry' } : { outcome: 'ack', status: outcome };
  }
}

/**
 * Applies one message; resolves with what happened, rejects with a PodrouteError. Without a batch
 * view in `deps`, the message lists the tables itself (once, when it first needs them).
 * Exported for its table-driven test (test/usecases/route-worker-propagated.test.ts).
 */
export async function applyWorkMessage(message: WorkMessage, deps: RouteWorkerDeps, delivery?: Delivery): Promise<string> {
  const writeDeps = { ...deps, view: deps.view ?? new RouteTableView(deps.routeTables) };
  switch (message.kind) {
    case 'create':
    case 'replace':
    case 'delete':
      return deps.plane.workerRouteWrite(message, writeDeps);
    case 'sync-node':
      return deps.plane.workerSyncNode(message, writeDeps, delivery);
    case 'node-left':
      return checkNodeLeft(message.node, { ...deps, leaseSets: () => deps.plane.leaseSets(), freeDepartedBlock: (cidr, owner) => deps.plane.freeDepartedBlock(cidr, owner) });
  }
}

/**
 * Tells the node that a route of it could not be made, but only once a fresh read shows that the
 * node still exists and some route of it is really missing: the message may have been redundant (the
 * route made meanwhile by another message or a reconcile), and a healthy node must not be flipped.
 * When the re-read itself fails, nothing is reported; the next reconcile settles the condition.
 */
async function reportFailure(message: WorkMessage, error: unknown, outcome: FailureOutcome, deps: RouteWorkerDeps): Promise<void> {
  // Neither is about a node's routes: a delete's node is gone, a node-left check's node is leaving.
  if (message.kind === 'delete' || message.kind === 'node-left') return;
  // A plane without routes has none to find missing: its conditions are node sync's (reconcile).
  if (!deps.plane.reportsMissingRoutes) return;
  let missing: RouteOp[];
  try {
    const node = await currentNode(message.node, deps);
    if (!node) {
      deps.log.log('info', 'report.skipped', { node: message.node, reason: 'node-gone' });
      return;
    }
    // A fresh listing, not the batch's: this flips a node's condition, so it decides on what is there now.
    const tables = await deps.routeTables.listRouteTables();
    const world = await readNodeWorld(node, tables, deps);
    const plan = planRoutes({ nodes: world.nodes, routeTables: tables, clusterCidrs: deps.clusterCidrs, leaseTable: world.leaseTable, ...(deps.nodeSelector ? { nodeSelector: deps.nodeSelector } : {}) });
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
    if (outcome === 'handed-back' && (await conditionSet(message.node, deps))) return;
    await deps.nodes.setNetworkUnavailable(message.node, true, conditionText(deps.plane, true));
  } catch (reportError) {
    deps.log.log('error', 'report.failed', { node: message.node, error: reportError });
  }
}

/**
 * Whether the node's NetworkUnavailable is already set (True or False) by a read made just before
 * the write. A retryable failure handed back to reconcile then leaves the condition as it is: a
 * serving node stays in service (the next run re-plans it within a minute, and the re-read above may
 * be stale: another message can have made the routes and marked the node ready meanwhile), and a
 * node not serving is kept unschedulable already (its admission wrote True). Skipping the redundant
 * True write also closes the race with a concurrent False write. Only a node without the condition
 * gets True.
 */
async function conditionSet(name: string, deps: RouteWorkerDeps): Promise<boolean> {
  const node = await currentNode(name, deps);
  const status = node === null ? null : networkUnavailableOf(node);
  return node !== null && (status === 'False' || status === 'True');
}

function describe(message: WorkMessage): Record<string, unknown> {
  return message.kind === 'sync-node' || message.kind === 'node-left'
    ? { kind: message.kind, node: message.node }
    : { kind: message.kind, routeTableId: message.routeTableId, cidr: message.destinationCidr, ...('node' in message ? { node: message.node } : {}) };
}
