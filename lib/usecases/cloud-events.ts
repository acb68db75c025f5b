/**
 * The cloud-events use case: an EventBridge event in, the work the existing deciders ask for out,
 * on the route worker's queue. An event is a hint (ARCHITECTURE.md, "Authority"): nothing is
 * decided on its word, and a malformed, forged or stale event changes nothing.
 *
 * - An instance state change: EC2 is asked for the instance's state (DescribeInstances). Only an
 *   instance EC2 itself answers `terminated` is acted on: its interfaces are gone (deleted on
 *   termination, EC2 API Reference, InstanceNetworkInterfaceSpecification DeleteOnTermination), so
 *   the routes of the nodes that name it are blackholes. The route planner is run on fresh state
 *   (the tables, the nodes, the lease table) with those nodes left out, as nodes without a target,
 *   and its `blackhole` deletions of their pod CIDRs are queued; the worker deletes a route only
 *   while it is still a blackhole. A stopping or stopped instance keeps its interfaces and its
 *   routes stay active (EC2 API Reference, Route State), so nothing is done for it. The lease is
 *   released once the Node is gone, as for every node (./node-left.ts, reconcile).
 * - A route write by another principal: only a write on a table tagged for the cluster and inside
 *   the cluster CIDRs matters, and podroute's own writes (its roles, `ownPrincipals`) are ignored.
 *   The destination's lease holder is found in the lease table (the authority), its Node read by
 *   key, and a `sync-node` is queued for it: the worker re-runs the route decider for that node on
 *   fresh reads (lib/usecases/route-writes.ts `syncNodeRoutes`), creating a deleted route. A route
 *   re-pointed at another instance is the planner's to replace (it alone sees the unmanaged nodes):
 *   it is run on that destination, with the nodes and the lease table, and its replace (naming the
 *   instance found there) is queued before the `sync-node`. A destination no node leases is left
 *   to reconcile, which deletes a stray route only after its absence checks (./absence.ts).
 *
 * Routes mode only (the wiring gives prefixes mode no instance-state port, functions/cloud-events.ts):
 * prefixes mode's repair of a terminated instance is its node-left path.
 */
import type { CidrSet } from '../ipam/index.ts';
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Logger } from '../log.ts';
import { type WorkMessage, syncNodeMessage, toMessages } from '../messages/work-message.ts';
import { instanceIdOf, podCidrsOf } from '../nodes/node.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import { type RouteTable, isResponsibleForRoute, planRoutes } from '../routes/index.ts';
import type { LeaseTable } from '../routes/index.ts';
import { type CloudEvent, FailedCallEvent, parseCloudEvent } from '../events/cloud-event.ts';
import type { NodeSource, RouteTables, WorkQueue, InstanceStates } from './ports.ts';
import { currentNode } from './route-worker-deps.ts';

export interface CloudEventDeps {
  config: {
    clusterCidrs: readonly string[];
    /** IAM principals podroute's own writes come from (its functions' roles); their events are ignored. */
    ownPrincipals: readonly string[];
    nodeSelector?: LabelSelector;
    migrationMaskSizes?: LeaseTable['migrationMaskSizes'];
  };
  routeTables: RouteTables;
  nodes: NodeSource;
  queue: WorkQueue;
  cidrSets: CidrSet[];
  instances: InstanceStates;
  log: Logger;
  now: () => number;
}

export interface CloudEventResult {
  status: string;
  messages: number;
}

/** Validates and handles one event. Rejects only with a failure of a read or a send (retryable). */
export async function handleCloudEvent(raw: unknown, deps: CloudEventDeps): Promise<CloudEventResult> {
  let event: CloudEvent;
  try {
    event = parseCloudEvent(raw);
  } catch (error) {
    const failedCall = error instanceof FailedCallEvent;
    // The reason only: an event is never logged whole.
    deps.log.log(failedCall ? 'info' : 'warn', 'cloud-event.rejected', { reason: error instanceof Error ? error.message : String(error) });
    if (!failedCall) deps.log.metric('CloudEventsRejected', 1);
    return { status: failedCall ? 'ignored:failed-call' : 'rejected', messages: 0 };
  }
  const started = deps.now();
  const result = event.kind === 'instance-state' ? await onInstanceState(event, deps) : await onRouteWrite(event, deps);
  const fields = event.kind === 'instance-state' ? { instanceId: event.instanceId, state: event.state } : { routeTableId: event.routeTableId, cidr: event.destinationCidr, eventName: event.eventName };
  deps.log.log('info', 'cloud-event.done', { kind: event.kind, eventId: event.id, ...fields, ...result, ms: deps.now() - started });
  deps.log.metric('CloudEventRepairs', result.messages);
  return result;
}

type InstanceEvent = Extract<CloudEvent, { kind: 'instance-state' }>;
type RouteWriteEvent = Extract<CloudEvent, { kind: 'route-write' }>;

async function onInstanceState(event: InstanceEvent, deps: CloudEventDeps): Promise<CloudEventResult> {
  const state = await deps.instances.instanceState(event.instanceId);
  // A forged event, or a stale one about an instance that runs again: EC2's answer wins.
  if (state !== 'terminated') return { status: `kept:${state ?? 'not-found'}`, messages: 0 };
  const tables = await deps.routeTables.listRouteTables();
  const [nodes, leaseLists] = await Promise.all([deps.nodes.listNodes(), Promise.all(deps.cidrSets.map((set) => set.leases()))]);
  const gone = nodes.filter((node) => instanceIdOf(node) === event.instanceId);
  if (gone.length === 0) return { status: 'done:no-node', messages: 0 };
  const destinations = new Set(gone.flatMap((node) => podCidrsOf(node).flatMap((text) => { const cidr = tryParseCidr(text); return cidr ? [formatCidr(cidr)] : []; })));
  const plan = planRoutes({
    nodes: nodes.filter((node) => !gone.includes(node)),
    routeTables: onlyDestinations(tables, destinations),
    clusterCidrs: deps.config.clusterCidrs,
    leaseTable: { leases: leaseLists.flat(), sets: deps.cidrSets, ...(deps.config.migrationMaskSizes ? { migrationMaskSizes: deps.config.migrationMaskSizes } : {}) },
    ...(deps.config.nodeSelector ? { nodeSelector: deps.config.nodeSelector } : {}),
  });
  const deletes = plan.delete.filter((op) => op.reason === 'blackhole' && destinations.has(op.destinationCidr));
  const messages = toMessages({ create: [], replace: [], delete: deletes }, { withholdDeletes: plan.unsafe !== undefined });
  return send(messages, deps, messages.length > 0 ? 'queued:delete-blackholes' : 'done:nothing-to-delete');
}

async function onRouteWrite(event: RouteWriteEvent, deps: CloudEventDeps): Promise<CloudEventResult> {
  if (event.principals.some((arn) => deps.config.ownPrincipals.includes(arn))) return { status: 'ignored:own-write', messages: 0 };
  if (!isResponsibleForRoute(event.destinationCidr, deps.config.clusterCidrs)) return { status: 'ignored:outside-cluster-cidrs', messages: 0 };
  const tables = await deps.routeTables.listRouteTables();
  if (!tables.some((table) => table.routeTableId === event.routeTableId)) return { status: 'ignored:untagged-table', messages: 0 };
  const holder = await leaseHolder(event.destinationCidr, deps.cidrSets);
  if (holder === null) return { status: 'left-to-reconcile:not-a-leased-block', messages: 0 };
  // Absence is confirmed by key: a holder whose Node is gone is node-left's and reconcile's.
  const node = await currentNode(holder, deps);
  if (node === null) return { status: 'left-to-reconcile:holder-gone', messages: 0 };
  return send([...(await movedRepairs(event.destinationCidr, tables, deps)), syncNodeMessage(holder)], deps, 'queued:sync-node');
}

/** The node holding exactly this destination as its block, by the lease table, or null. */
async function leaseHolder(destinationCidr: string, sets: readonly CidrSet[]): Promise<string | null> {
  const cidr = tryParseCidr(destinationCidr);
  if (!cidr) return null;
  for (const set of sets) {
    const range = tryParseCidr(set.clusterCidr);
    if (!range || cidr.prefix !== set.nodeMaskSize || !containsCidr(range, cidr)) continue;
    const lease = (await set.leases()).find((item) => item.cidr === destinationCidr);
    return lease?.owner ?? null;
  }
  return null;
}

/** The planner's replaces of `destination` where it routes to another instance (moved), as messages. */
async function movedRepairs(destination: string, tables: readonly RouteTable[], deps: CloudEventDeps): Promise<WorkMessage[]> {
  const listed = onlyDestinations(tables, new Set([destination]));
  const moved = listed.some((table) => table.routes.some((route) => route.target === 'instance' && !route.blackhole && route.propagated === undefined));
  if (!moved) return [];
  const [nodes, leaseLists] = await Promise.all([deps.nodes.listNodes(), Promise.all(deps.cidrSets.map((set) => set.leases()))]);
  const plan = planRoutes({
    nodes,
    routeTables: listed,
    clusterCidrs: deps.config.clusterCidrs,
    leaseTable: { leases: leaseLists.flat(), sets: deps.cidrSets, ...(deps.config.migrationMaskSizes ? { migrationMaskSizes: deps.config.migrationMaskSizes } : {}) },
    ...(deps.config.nodeSelector ? { nodeSelector: deps.config.nodeSelector } : {}),
  });
  const replace = plan.replace.filter((op) => op.destinationCidr === destination && op.reason === 'moved');
  return toMessages({ create: [], replace, delete: [] }, { withholdDeletes: true });
}

/** The tables with only the routes to these destinations (the planner then plans nothing else). */
function onlyDestinations(tables: readonly RouteTable[], destinations: ReadonlySet<string>): RouteTable[] {
  return tables.map((table) => ({ ...table, routes: table.routes.filter((route) => destinations.has(route.destinationCidr)) }));
}

async function send(messages: WorkMessage[], deps: CloudEventDeps, status: string): Promise<CloudEventResult> {
  if (messages.length > 0) await deps.queue.send(messages);
  return { status, messages: messages.length };
}
