/**
 * The route worker's writes: a node's routes created or fixed (create, replace and sync-node
 * messages) and a route deleted, each decided on what is there now: creates and replaces on the
 * batch's listing (./route-table-view.ts), deletes on a fresh read. `RouteAlreadyExists` with the
 * same target and `InvalidRoute.NotFound` on delete are success, so redelivery converges.
 */
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { conditionText } from '../dataplane/data-plane.ts';
import { PodrouteError } from '../errors.ts';
import { firstThenEach } from '../util/concurrency.ts';
import type { Admitted, DeleteRouteMessage, SyncNodeMessage } from '../messages/work-message.ts';
import { instanceIdOf, networkUnavailableOf, nodeAgeMs, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { isResponsibleForRoute } from '../routes/index.ts';
import type { Route, RouteTable } from '../routes/index.ts';
import { matchInterfaceTarget } from '../routes/route-plan-phases.ts';
import { type DestinationRoutes, NO_ROUTES, type WantedVerdict, deleteVerdict, destinationRoutes, targetText, wantedVerdict } from '../routes/route-rules.ts';
import { RouteConflictError, RouteMissingError, RouteTableFullError, mayBeLaunchLag } from './port-errors.ts';
import type { RouteSpec } from './ports.ts';
import { ROUTE_TABLE_FULL_TAG, routeCountOf } from '../routes/table-full.ts';
import { planNode } from './route-targets.ts';
import { awaitsStoredNode } from './delivery-outcome.ts';
import { type Delivery, LAUNCH_LAG_WINDOW_MS, ROUTE_TABLE_FULL, type RouteWorkerDeps, TARGET_CACHE_MS, type WriteDeps, NodeNotStoredError, afterAdmission, currentNode, storedAfterAdmission } from './route-worker-deps.ts';
import { checkDelete, refuse } from './route-worker-claims.ts';
import { type NodeWorld, ownerRoutedTo, readNodeWorld, verifyNode, verifyOwned } from './route-worker-ownership.ts';

export interface RouteOp {
  routeTableId: string;
  destinationCidr: string;
  node: string;
  instanceId: string;
  /** The instance a route to another instance must still name to be replaced (a replace message's `expect`). */
  expect?: { instanceId: string | null } | undefined;
}

/** What one route write answered; `stale:moved` when the destination routes to another instance than the op may replace. */
type PutResult = 'created' | 'replaced' | 'exists' | 'stale:moved';

/** A create or replace message: the one route, if the message still fits the node. */
export async function applyRoute(op: RouteOp, deps: WriteDeps): Promise<string> {
  if (!isResponsibleForRoute(op.destinationCidr, deps.clusterCidrs)) refuse('outside-cluster-cidrs', routeWhat(op));
  const node = await currentNode(op.node, deps);
  if (!node) return 'stale:node-gone';
  const unmanaged = unmanagedReason(node, deps.nodeSelector);
  if (unmanaged !== null) return `stale:unmanaged ${unmanaged}`;
  const stale = staleness(op, node);
  if (stale) return stale;
  // One listing serves the decision and the node's condition: EC2's describe budget is shared.
  const tables = await deps.view.current();
  if (!tables.some((table) => table.routeTableId === op.routeTableId)) refuse('not-a-cluster-table', routeWhat(op));
  const world = await readNodeWorld(node, tables, deps);
  verifyOwned([op], world, deps, routeWhat);
  const result = await minding(tables, op, deps, () => ensureRoute(op, listedRoutes(tables, op.routeTableId, op.destinationCidr), node, deps));
  await settle(node, world, deps);
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
 * ordinary path, where the routes exist already. A node whose create is refused after admission
 * never appears: its routes have no owner and its lease no node, which the next reconciles clean
 * up as for any node that left.
 */
export async function syncNodeRoutes(message: SyncNodeMessage, deps: WriteDeps, delivery?: Delivery): Promise<string> {
  const name = message.node;
  // The batch's listing is read alongside the node and awaited where first needed, so a node that
  // is gone or not podroute's is answered as such even when the listing fails (it is unread then).
  const listing = deps.view.current();
  listing.catch(() => undefined);
  const current = await currentNode(name, deps);
  const stored = afterAdmission(current, message.admitted);
  let node = stored;
  if (!node) {
    // The webhook queues this while the API server is still storing the node: while the node is
    // waited for (./delivery-outcome.ts awaitsStoredNode), what the admission knew is routed.
    if (!message.admitted || !awaitsStoredNode(delivery)) throw new NodeNotStoredError(name);
    const created = current?.metadata.creationTimestamp;
    node = admittedNode(name, message.admitted, typeof created === 'string' ? created : new Date(deps.now()).toISOString());
  }
  // A node that is not podroute's gets no route and no condition write (lib/nodes/managed-node.ts);
  // an admitted node passed the webhook's own check (same selector).
  const unmanaged = stored ? unmanagedReason(stored, deps.nodeSelector) : null;
  if (unmanaged !== null) return `stale:unmanaged ${unmanaged}`;
  const routed = node;
  const tables = await listing;
  const world = await readNodeWorld(routed, tables, deps);
  // Nothing is written for a node a pod CIDR of which the ownership decider does not give it, admitted or stored.
  verifyNode(name, world, deps);
  const plan = await planNode(world, tables, deps.clusterCidrs, (instanceId) => routeTarget({ node: name, instanceId }, deps), deps.nodeSelector);
  // Routes only: a route to another instance is reconcile's, which sees the unmanaged nodes (no `expect`).
  const ops: RouteOp[] = [...plan.create, ...plan.replace].filter((op) => op.node === name).map(({ routeTableId, destinationCidr, node: owner, instanceId }) => ({ routeTableId, destinationCidr, node: owner, instanceId }));
  // The first write finds the route target and turns its source/destination check off (kept in
  // `deps.targets`); the others, each another (table, destination), go side by side after it.
  const results = await firstThenEach(ops, NODE_WRITES_AT_ONCE, (op) => minding(tables, op, deps, () => ensureRoute(op, listedRoutes(tables, op.routeTableId, op.destinationCidr), routed, deps)));
  if (!stored && message.admitted) await settleAdmitted(name, message.admitted, deps, (now) => settle(now, world, deps));
  else await settle(routed, world, deps);
  return ops.length === 0 ? 'in-sync' : results.join(',');
}

/** A node's route writes in flight at once after its first (one per table and family), well inside EC2's mutating burst. */
export const NODE_WRITES_AT_ONCE = 4;

/** Whether two lists of canonical CIDRs hold the same CIDRs. */
export function sameCidrs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((cidr) => b.includes(cidr));
}

/**
 * The node as its admission described it, for routing before it is stored. `createdAt`: the stored
 * version's creationTimestamp for an UPDATE join (its kubelet registered it earlier without a
 * providerID), now for a CREATE; the launch-lag window (`ensureRoute`) and the ownership decider's
 * registration order read it.
 */
export function admittedNode(name: string, admitted: Admitted, createdAt: string): Node {
  const cidrs = admitted.podCidrs;
  return {
    metadata: { name, creationTimestamp: createdAt },
    spec: { providerID: admitted.instanceId, podCIDR: cidrs[0], podCIDRs: [...cidrs] },
  };
}

/**
 * The condition write of a node routed from its admission: on the stored node, once it is stored
 * and still what was admitted; otherwise retried shortly (see `syncNodeRoutes`).
 */
async function settleAdmitted(name: string, admitted: Admitted, deps: WriteDeps, settleNode: (node: Node) => Promise<void>): Promise<void> {
  const now = await storedAfterAdmission(name, admitted, deps);
  if (!now) throw new NodeNotStoredError(name, `node ${name}: routes made from its admission; the node is not stored yet, so its condition waits`);
  const cidrs = podCidrsOf(now).map((text) => tryParseCidr(text)).filter((c) => c !== null).map(formatCidr);
  if (instanceIdOf(now) !== admitted.instanceId || !sameCidrs(cidrs, admitted.podCidrs)) {
    throw new PodrouteError(`node ${name} was stored with another instance or pod CIDRs than admitted; syncing it again`, { retryable: true });
  }
  await settleNode(now);
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

/** The routes of `destinationCidr` in the listed `routeTableId` that count (lib/routes/route-rules.ts). */
function listedRoutes(tables: readonly RouteTable[], routeTableId: string, destinationCidr: string): DestinationRoutes {
  return destinationRoutes(tables.find((t) => t.routeTableId === routeTableId)?.routes.filter((r) => r.destinationCidr === destinationCidr) ?? []);
}

/**
 * A route naming an interface alone is a route to the instance whose primary interface it is, as
 * EC2 describes such a route when it gives both ids (lib/routes/route-plan-phases.ts
 * `matchInterfaceTarget`); any other stays as it is.
 */
async function asInstanceTarget(route: Route, deps: RouteWorkerDeps): Promise<Route> {
  const eni = route.networkInterfaceId;
  if (route.target !== 'interface' || route.propagated !== undefined || eni === null || !deps.routeTargets.interfaceInstance) return route;
  const instanceId = await deps.routeTargets.interfaceInstance(eni);
  return instanceId === null ? route : matchInterfaceTarget(route, new Map([[eni, instanceId]]));
}

/**
 * The routes of the destination that count, as EC2 describes them now; a route naming another
 * interface than the node's own (`eni`) alone is matched to its instance.
 */
async function freshRoutes(op: RouteOp, eni: string, deps: RouteWorkerDeps): Promise<DestinationRoutes> {
  const route = await deps.routeTables.describeRoute(op.routeTableId, op.destinationCidr);
  if (route === null) return NO_ROUTES;
  return destinationRoutes([route.networkInterfaceId === eni ? route : await asInstanceTarget(route, deps)]);
}

/** The node's primary interface, with source/destination check off; remembered per container. */
async function routeTarget(op: Pick<RouteOp, 'node' | 'instanceId'>, deps: RouteWorkerDeps): Promise<string> {
  const cached = deps.targets?.get(op.instanceId);
  if (cached && deps.now() - cached.at < TARGET_CACHE_MS) return cached.primaryEniId;
  const started = deps.now();
  const target = await deps.routeTargets.prepareRouteTarget(op.instanceId);
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
async function ensureRoute(op: RouteOp, listed: DestinationRoutes, node: Node, deps: WriteDeps): Promise<PutResult> {
  try {
    return await putRoute(op, listed, deps);
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

/**
 * Puts the node's route into the table as the planner's rule for a wanted destination
 * (lib/routes/route-rules.ts `wantedVerdict`) decides on what is there now. The listing is trusted
 * for "no route" (CreateRoute refuses an existing destination) and for "the node's route": any
 * other verdict is decided again on a fresh read before a ReplaceRoute overwrites it (route-table-view.ts).
 * The worker does not know the unmanaged nodes, so a route to another instance is replaced only
 * while the fresh read shows the instance the op expects there (`op.expect`, from reconcile's
 * plan); otherwise it is left to reconcile (`stale:moved`).
 */
async function putRoute(op: RouteOp, listed: DestinationRoutes, deps: WriteDeps): Promise<PutResult> {
  const started = deps.now();
  const eni = await routeTarget(op, deps);
  const decide = (routes: DestinationRoutes) => mayReplace(wantedVerdict(routes, { instanceId: op.instanceId, primaryEni: eni }, NO_INSTANCES), routes, op);
  const seen = decide(listed);
  const verdict = seen.kind === 'create' || seen.kind === 'keep' ? seen : decide(await freshRoutes(op, eni, deps));
  const spec = { routeTableId: op.routeTableId, destinationCidr: op.destinationCidr, networkInterfaceId: eni };
  let result: PutResult;
  if (verdict.kind === 'left') {
    deps.log.log('info', 'route.moved-left', { cidr: op.destinationCidr, node: op.node, routeTableId: op.routeTableId, instanceId: verdict.instanceId });
    return 'stale:moved';
  }
  if (verdict.kind === 'blocked') {
    throw new PodrouteError(
      `route ${op.destinationCidr} in ${op.routeTableId} targets ${targetText(verdict.route)}, not an instance; podroute does not replace routes to gateways or bare interfaces`,
    );
  } else if (verdict.kind === 'keep') {
    result = 'exists';
  } else if (verdict.kind === 'replace') {
    result = await replaceOrCreate(spec, deps);
  } else {
    result = await createOrDecideAgain(spec, () => freshRoutes(op, eni, deps).then(decide), deps);
  }
  if (result === 'stale:moved') return result;
  deps.view.recordRoute(op.routeTableId, op.destinationCidr, { instanceId: op.instanceId, networkInterfaceId: eni });
  deps.log.log('info', 'action', {
    action: result === 'exists' ? 'route-exists' : result === 'created' ? 'create-route' : 'replace-route',
    cidr: op.destinationCidr,
    node: op.node,
    routeTableId: op.routeTableId,
    ms: deps.now() - started,
  });
  return result;
}

/** CreateRoute; when someone created the destination since the listing, the verdict is decided again on what is there now. */
async function createOrDecideAgain(spec: RouteSpec, again: () => Promise<PutVerdict>, deps: WriteDeps): Promise<PutResult> {
  try {
    return await deps.routeTables.createRoute(spec);
  } catch (error) {
    if (!(error instanceof RouteConflictError)) throw error;
    const verdict = await again();
    if (verdict.kind === 'create' || verdict.kind === 'blocked') throw error;
    if (verdict.kind === 'left') return 'stale:moved';
    return verdict.kind === 'keep' ? 'exists' : replaceOrCreate(spec, deps);
  }
}

/** The wanted verdict, or `left` (with the instance found) for a `moved` route the op does not expect there. */
type PutVerdict = WantedVerdict | { readonly kind: 'left'; readonly instanceId: string | null };

function mayReplace(verdict: WantedVerdict, routes: DestinationRoutes, op: RouteOp): PutVerdict {
  if (verdict.kind !== 'replace' || verdict.reason !== 'moved') return verdict;
  const found = routes.static?.instanceId ?? null;
  return op.expect !== undefined && op.expect.instanceId === found ? verdict : { kind: 'left', instanceId: found };
}

/** Instances only unmanaged nodes name: the worker's world holds none (lib/usecases/route-worker-ownership.ts), so a route to another instance is replaced. */
const NO_INSTANCES: ReadonlySet<string> = new Set();

/**
 * ReplaceRoute, or CreateRoute when the route vanished between the read and the replace (the
 * adapter's `RouteMissingError`, confirmed by a re-read): the destination must route to the node
 * either way, and a vanished route is no failure to report on it.
 */
async function replaceOrCreate(spec: RouteSpec, deps: WriteDeps): Promise<'created' | 'replaced' | 'exists'> {
  try {
    await deps.routeTables.replaceRoute(spec);
    return 'replaced';
  } catch (error) {
    if (!(error instanceof RouteMissingError)) throw error;
    return deps.routeTables.createRoute(spec);
  }
}

/** A delete message: the route read afresh, and deleted only while it still looks as planned. */
export async function applyDelete(message: DeleteRouteMessage, deps: WriteDeps): Promise<string> {
  const what = `delete of ${message.destinationCidr} in ${message.routeTableId}`;
  if (!isResponsibleForRoute(message.destinationCidr, deps.clusterCidrs)) refuse('outside-cluster-cidrs', what);
  const tables = await deps.view.current();
  const tagged = new Set(tables.map((table) => table.routeTableId));
  const refusal = checkDelete(message, tagged, deps.clusterCidrs);
  if (refusal !== null) refuse(refusal, what);
  const found = await deps.routeTables.describeRoute(message.routeTableId, message.destinationCidr);
  if (found === null) return 'absent';
  // The planner's delete rule on the route there now, a route named by its interface alone matched to its instance.
  const verdict = deleteVerdict(await asInstanceTarget(found, deps), message);
  if (verdict.kind === 'stale') return verdict.status;
  // "No owner" is the message's word: the lease table is asked whether the route's node owns it.
  if (verdict.kind === 'check-owner') {
    const owner = await ownerRoutedTo(message.destinationCidr, verdict.instanceId, tables, deps);
    if (owner !== null) refuse('owned', `${what} (it routes to node ${owner}, which owns it)`);
  }
  const started = deps.now();
  const result = await deps.routeTables.deleteRoute({ routeTableId: message.routeTableId, destinationCidr: message.destinationCidr });
  deps.view.recordDeleted(message.routeTableId, message.destinationCidr);
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
 * Writes the node's NetworkUnavailable condition once its routes are settled, planned on the
 * batch's listing with the batch's writes applied: false when every route now exists, true when
 * the plan says it cannot be ready; nothing while a route of it is still to be made (by another
 * message, or the next reconcile).
 */
async function settle(node: Node, world: NodeWorld, deps: WriteDeps): Promise<void> {
  const name = node.metadata.name;
  const nodes = [node, ...world.nodes.filter((other) => other.metadata.name !== name)];
  const plan = await planNode({ nodes, leaseTable: world.leaseTable }, await deps.view.current(), deps.clusterCidrs, (instanceId) => routeTarget({ node: name, instanceId }, deps), deps.nodeSelector);
  const status = plan.nodes.find((n) => n.node === name);
  if (!status || status.networkUnavailable === 'pending') return;
  const wanted = status.networkUnavailable;
  if (networkUnavailableOf(node) === (wanted ? 'True' : 'False')) return;
  const started = deps.now();
  const result = await deps.nodes.setNetworkUnavailable(name, wanted, conditionText(deps.plane, wanted));
  deps.log.log('info', 'action', { action: 'set-network-unavailable', value: wanted, node: name, result, ms: deps.now() - started });
}

/** Why a create/replace no longer fits the node's own claim (its instance, its pod CIDRs), or null when it still does. */
function staleness(op: RouteOp, node: Node): string | null {
  if (instanceIdOf(node) !== op.instanceId) return 'stale:instance-changed';
  const wanted = tryParseCidr(op.destinationCidr);
  if (!wanted) return 'stale:bad-destination';
  const owned = podCidrsOf(node).map((text) => tryParseCidr(text)).some((cidr) => cidr !== null && formatCidr(cidr) === formatCidr(wanted));
  return owned ? null : 'stale:pod-cidr-changed';
}

const routeWhat = (op: RouteOp): string => `route ${op.destinationCidr} in ${op.routeTableId} to node ${op.node}`;
