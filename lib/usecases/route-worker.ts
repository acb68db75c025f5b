/**
 * The route worker's use case: one queue message in, the VPC brought in line with it.
 *
 * A message is a hint, not the truth (level-triggered): before acting the worker re-reads the node
 * and the route, and a message that no longer matches them is acknowledged as stale. Every EC2 call
 * is idempotent (`RouteAlreadyExists` with the same target and `InvalidRoute.NotFound` on delete are
 * success), so a duplicate or out-of-order delivery converges to the same state.
 *
 * Outcome per message: `ack` (done, stale, or a failure that retrying cannot fix, which is reported
 * on the node) or `retry` (a retryable failure: the queue redelivers it; on its last receive the
 * failure is reported on the node before the message goes to the dead-letter queue).
 */
import { containsCidr, tryParseCidr, formatCidr } from '../cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { parseRouteMessage } from '../messages/route-message.ts';
import type { DeleteRouteMessage, RouteMessage } from '../messages/route-message.ts';
import { instanceIdOf, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { isResponsibleForRoute, parseRouteTables, planRoutes } from '../routes/index.ts';
import type { NodeStatus } from '../routes/index.ts';
import { NodeNotFoundError } from '../kube/kube-errors.ts';
import type { DescribedRoute, NodeSource, RouteTables } from './ports.ts';

export const FAILED_TO_CREATE_ROUTE = 'FailedToCreateRoute';

export interface RouteWorkerDeps {
  clusterCidrs: readonly string[];
  routeTables: RouteTables;
  nodes: NodeSource;
  log: Logger;
  now: () => number;
}

export interface Delivery {
  /** How often the queue has delivered this message, this time included. */
  receiveCount: number;
  /** Deliveries after which the queue moves the message to the dead-letter queue. */
  maxReceiveCount: number;
}

export type WorkResult = { outcome: 'ack' | 'retry'; status: string };

/** Parses, applies and classifies one message body. Never throws. */
export async function handleRouteMessage(body: string, delivery: Delivery, deps: RouteWorkerDeps): Promise<WorkResult> {
  let message: RouteMessage;
  try {
    message = parseRouteMessage(body);
  } catch (error) {
    deps.log.log('error', 'message.rejected', { error, receiveCount: delivery.receiveCount });
    deps.log.metric('MessagesRejected', 1);
    return { outcome: 'ack', status: 'rejected' };
  }
  const started = deps.now();
  try {
    const status = await applyRouteMessage(message, deps);
    deps.log.log('info', 'message.done', { ...describe(message), status, ms: deps.now() - started });
    return { outcome: 'ack', status };
  } catch (error) {
    const retryable = error instanceof PodrouteError && error.retryable;
    const last = delivery.receiveCount >= delivery.maxReceiveCount;
    deps.log.log(retryable && !last ? 'warn' : 'error', 'message.failed', {
      ...describe(message),
      error,
      retryable,
      receiveCount: delivery.receiveCount,
      ms: deps.now() - started,
    });
    if (!retryable || last) await reportFailure(message, error, deps);
    deps.log.metric(retryable ? 'MessagesRetried' : 'MessagesFailed', 1);
    return retryable ? { outcome: 'retry', status: last ? 'dead-letter' : 'retry' } : { outcome: 'ack', status: 'failed' };
  }
}

/** Applies one message; resolves with what happened, rejects with a PodrouteError. */
export async function applyRouteMessage(message: RouteMessage, deps: RouteWorkerDeps): Promise<string> {
  switch (message.kind) {
    case 'create':
    case 'replace':
      return applyRoute(message, deps);
    case 'delete':
      return applyDelete(message, deps);
    case 'sync-node':
      return syncNodeRoutes(message.node, deps);
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
  const stale = staleness(op, node, deps.clusterCidrs);
  if (stale) return stale;
  const result = await ensureRoute(op, deps);
  await settleNode(node, deps);
  return result;
}

/** Puts `op.destinationCidr -> node` into the table, whatever is there now (except a foreign target). */
async function ensureRoute(op: RouteOp, deps: RouteWorkerDeps): Promise<'created' | 'replaced' | 'exists'> {
  const started = deps.now();
  const target = await deps.routeTables.prepareRouteTarget(op.instanceId);
  if (target.sourceDestCheckChanged) {
    deps.log.log('info', 'action', { action: 'disable-source-dest-check', node: op.node, instanceId: op.instanceId, ms: deps.now() - started });
  }
  const spec = { routeTableId: op.routeTableId, destinationCidr: op.destinationCidr, networkInterfaceId: target.primaryEniId };
  const current = await deps.routeTables.describeRoute(op.routeTableId, op.destinationCidr);
  let result: 'created' | 'replaced' | 'exists';
  if (current === null) {
    result = await deps.routeTables.createRoute(spec);
  } else if (current.NetworkInterfaceId === target.primaryEniId && current.State !== 'blackhole') {
    result = 'exists';
  } else if (isForeign(current)) {
    throw new PodrouteError(
      `route ${op.destinationCidr} in ${op.routeTableId} targets ${foreignTarget(current)}, not an instance; podroute does not replace routes to gateways or bare interfaces`,
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
  const current = await deps.routeTables.describeRoute(message.routeTableId, message.destinationCidr);
  if (current === null) return 'absent';
  if (isForeign(current)) return `stale:foreign-target ${foreignTarget(current)}`;
  const blackhole = current.State === 'blackhole';
  if (message.reason === 'blackhole' && !blackhole) return 'stale:no-longer-blackhole';
  const expect = message.expect;
  if (expect !== undefined) {
    if (expect.blackhole !== blackhole && message.reason === 'no-owner') return 'stale:state-changed';
    if (!blackhole && (current.InstanceId ?? null) !== expect.instanceId) return 'stale:target-changed';
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

/** Creates or fixes every route of one node, then settles its condition (the webhook path). */
async function syncNodeRoutes(name: string, deps: RouteWorkerDeps): Promise<string> {
  const node = await currentNode(name, deps);
  if (!node) return 'stale:node-gone';
  const plan = planRoutes({ nodes: [node], routeTables: await listTables(deps), clusterCidrs: deps.clusterCidrs });
  const ops = [...plan.create, ...plan.replace].filter((op) => op.node === name);
  const results: string[] = [];
  for (const op of ops) results.push(await ensureRoute(op, deps));
  const status = plan.nodes.find((n) => n.node === name);
  if (ops.length === 0 && status) {
    await writeStatus(name, status, deps);
  } else {
    await settleNode(node, deps);
  }
  return ops.length === 0 ? 'in-sync' : results.join(',');
}

/** Re-reads the node's routes and writes its NetworkUnavailable condition when it must change. */
async function settleNode(node: Node, deps: RouteWorkerDeps): Promise<void> {
  const plan = planRoutes({ nodes: [node], routeTables: await listTables(deps), clusterCidrs: deps.clusterCidrs });
  const status = plan.nodes.find((n) => n.node === node.metadata.name);
  if (status) await writeStatus(node.metadata.name, status, deps);
}

async function writeStatus(name: string, status: NodeStatus, deps: RouteWorkerDeps): Promise<void> {
  if (!status.patch || status.networkUnavailable === 'pending') return;
  const started = deps.now();
  const result = await deps.nodes.setNetworkUnavailable(name, status.networkUnavailable);
  deps.log.log('info', 'action', { action: 'set-network-unavailable', value: status.networkUnavailable, node: name, result, ms: deps.now() - started });
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

function isForeign(route: DescribedRoute): boolean {
  if (route.State === 'blackhole') return false;
  if (route.GatewayId || route.NatGatewayId || route.TransitGatewayId || route.VpcPeeringConnectionId) return true;
  return !route.InstanceId;
}

function foreignTarget(route: DescribedRoute): string {
  return route.GatewayId ?? route.NatGatewayId ?? route.TransitGatewayId ?? route.VpcPeeringConnectionId ?? route.NetworkInterfaceId ?? 'an unknown target';
}

async function reportFailure(message: RouteMessage, error: unknown, deps: RouteWorkerDeps): Promise<void> {
  if (message.kind === 'delete') return;
  const reason = error instanceof Error ? error.message : String(error);
  const what = message.kind === 'sync-node' ? 'its routes' : `route ${message.destinationCidr} in ${message.routeTableId}`;
  try {
    await deps.nodes.warn(message.node, FAILED_TO_CREATE_ROUTE, `Could not create ${what} for node ${message.node}: ${reason}`);
    await deps.nodes.setNetworkUnavailable(message.node, true);
  } catch (reportError) {
    deps.log.log('error', 'report.failed', { node: message.node, error: reportError });
  }
}

function describe(message: RouteMessage): Record<string, unknown> {
  return message.kind === 'sync-node'
    ? { kind: message.kind, node: message.node }
    : { kind: message.kind, routeTableId: message.routeTableId, cidr: message.destinationCidr, ...('node' in message ? { node: message.node } : {}) };
}
