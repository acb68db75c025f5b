/**
 * The node webhook's use case: a node joins or leaves, and podroute acts at once instead of at the
 * next schedule tick (upstream waits for its resync).
 *
 * - Admission CREATE: allocate the node's pod CIDRs (node sync, configured mode) and answer with a
 *   JSON Patch that sets them; the node is not stored yet, so the patch is the only way to write them.
 *   Then queue a `sync-node` message (held back a moment) so the worker routes the new CIDRs.
 * - Admission DELETE: release the node's CIDRs (owner-scoped) and queue deletions of its routes,
 *   each guarded by the route as it is now, so a CIDR re-used by the next node is never unrouted.
 * - Signed events: `NodeJoined` syncs a stored node, `NodeLeft` releases a node that is gone.
 *
 * An admission review is never refused: whatever fails is logged and the node is admitted without a
 * patch (the schedule repairs it); a dry run changes nothing.
 */
import { tryParseCidr, formatCidr } from '../cidr/cidr.ts';
import { syncNodeMessage } from '../messages/route-message.ts';
import type { RouteMessage } from '../messages/route-message.ts';
import { instanceIdOf, podCidrsOf, parseNode } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { syncNodeDualStack } from '../nodesync/index.ts';
import type { DualStackKubeNodes } from '../nodesync/index.ts';
import { parseRouteTables } from '../routes/index.ts';
import { admissionResponse, podCidrPatch } from '../webhook/index.ts';
import type { AdmissionReview, AdmissionReviewResponse, NodeEvent } from '../webhook/index.ts';
import { NodeNotFoundError } from '../kube/kube-errors.ts';
import { nodeSyncCloud, nodeSyncKube } from './reconcile.ts';
import type { ReconcileDeps } from './reconcile.ts';

/** The webhook runs over the same ports as reconcile. */
export type WebhookDeps = Omit<ReconcileDeps, 'concurrency'>;

/**
 * Seconds a `sync-node` message waits, so the API server has (almost always) stored the node the
 * worker reads; if not, the worker looks once more shortly after.
 */
export const SYNC_DELAY_SECONDS = 1;

export async function admit(review: AdmissionReview, deps: WebhookDeps): Promise<AdmissionReviewResponse> {
  const request = review.request;
  if (request.dryRun === true) return admissionResponse(request.uid);
  try {
    if (request.operation === 'CREATE') {
      const node = parseNode(request.object);
      const unmanaged = unmanagedReason(node, deps.config.nodeSelector);
      if (unmanaged !== null) {
        // Not podroute's node (Fargate, another node group, no providerID yet): nothing to allocate.
        deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'CREATE', unmanaged });
        return admissionResponse(request.uid);
      }
      const cidrs = await allocateForNewNode(node, deps);
      await queueNodeSync(node.metadata.name, deps);
      deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'CREATE', podCidrs: cidrs });
      return admissionResponse(request.uid, cidrs.length > 0 ? podCidrPatch(node, cidrs) : undefined);
    }
    const node = parseNode(request.oldObject);
    await releaseNode(node, deps);
    deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'DELETE' });
    return admissionResponse(request.uid);
  } catch (error) {
    deps.log.log('error', 'webhook.failed', { uid: request.uid, operation: request.operation, error });
    deps.log.metric('WebhookFailures', 1);
    return admissionResponse(request.uid, undefined, ['podroute could not act on this node now; its next reconcile will']);
  }
}

export type EventResult = { status: 202 | 404 | 409; message: string };

export async function handleNodeEvent(event: NodeEvent, deps: WebhookDeps): Promise<EventResult> {
  if (event.type === 'NodeJoined') {
    let node: Node;
    try {
      node = await deps.nodes.getNode(event.nodeName);
    } catch (error) {
      if (error instanceof NodeNotFoundError) return { status: 404, message: `node ${event.nodeName} not found` };
      throw error;
    }
    const unmanaged = unmanagedReason(node, deps.config.nodeSelector);
    if (unmanaged !== null) return { status: 202, message: `node ${event.nodeName} is not podroute's (${unmanaged}); nothing to do` };
    await syncNodeDualStack({ kind: 'update', nodeName: node.metadata.name, node }, syncDeps(deps, node, nodeSyncKube(deps)));
    await queueNodeSync(node.metadata.name, deps, 0);
    return { status: 202, message: `node ${event.nodeName} synced; its routes are queued` };
  }
  try {
    await deps.nodes.getNode(event.nodeName);
    return { status: 409, message: `node ${event.nodeName} still exists; NodeLeft is accepted once it is deleted` };
  } catch (error) {
    if (!(error instanceof NodeNotFoundError)) throw error;
  }
  const released = await releaseOwner(event.nodeName, deps);
  await queueRouteDeletes(released, null, deps);
  return { status: 202, message: `node ${event.nodeName}: released ${released.length} pod CIDR(s)` };
}

/** Allocates pod CIDRs for a node being created; returns them (empty when it has them already). */
async function allocateForNewNode(node: Node, deps: WebhookDeps): Promise<string[]> {
  const captured: string[] = [];
  const kube: DualStackKubeNodes = {
    ...nodeSyncKube(deps),
    // The node is not stored yet: the admission patch writes its pod CIDRs.
    updatePodCidr: async (_node, cidrs) => {
      captured.push(...cidrs);
    },
    setNetworkUnavailable: async () => undefined,
  };
  await syncNodeDualStack({ kind: 'update', nodeName: node.metadata.name, node }, syncDeps(deps, node, kube));
  return captured;
}

async function releaseNode(node: Node, deps: WebhookDeps): Promise<void> {
  const kube: DualStackKubeNodes = { ...nodeSyncKube(deps), setNetworkUnavailable: async () => undefined };
  await syncNodeDualStack({ kind: 'delete', node }, syncDeps(deps, node, kube));
  // Leases taken for this node but never written to it (a failed admission) go too.
  const extra = await releaseOwner(node.metadata.name, deps);
  const cidrs = [...new Set([...podCidrsOf(node).map(canonical).filter((c): c is string => c !== null), ...extra])];
  await queueRouteDeletes(cidrs, instanceIdOf(node), deps);
}

/** Releases every block `owner` holds; returns their CIDRs. */
async function releaseOwner(owner: string, deps: WebhookDeps): Promise<string[]> {
  const released: string[] = [];
  for (const set of deps.cidrSets) {
    for (const lease of await set.leases()) {
      if (lease.owner !== owner) continue;
      await set.release(lease.cidr, owner);
      released.push(lease.cidr);
    }
  }
  return released;
}

/** Queues deletion of the routes to `cidrs` (to `instanceId` when known), guarded by what is there now. */
async function queueRouteDeletes(cidrs: string[], instanceId: string | null, deps: WebhookDeps): Promise<void> {
  if (cidrs.length === 0 || deps.config.mode !== 'routes') return;
  const wanted = new Set(cidrs);
  const tables = parseRouteTables({ RouteTables: await deps.routeTables.listRouteTables() });
  const messages: RouteMessage[] = [];
  for (const table of tables) {
    for (const route of table.routes) {
      if (!wanted.has(route.destinationCidr)) continue;
      if (!route.blackhole && (route.instanceId === null || (instanceId !== null && route.instanceId !== instanceId))) continue;
      messages.push({
        v: 1,
        kind: 'delete',
        routeTableId: table.routeTableId,
        destinationCidr: route.destinationCidr,
        reason: route.blackhole ? 'blackhole' : 'no-owner',
        expect: { instanceId: route.instanceId, blackhole: route.blackhole },
      });
    }
  }
  if (messages.length > 0) await deps.queue.send(messages);
}

async function queueNodeSync(name: string, deps: WebhookDeps, delaySeconds = SYNC_DELAY_SECONDS): Promise<void> {
  if (deps.config.mode !== 'routes') return;
  await deps.queue.send([syncNodeMessage(name)], { delaySeconds });
}

function syncDeps(deps: WebhookDeps, node: Node, kube: DualStackKubeNodes) {
  return {
    mode: deps.config.nodeSyncMode,
    cidrSets: deps.cidrSets,
    // Routes mode: a brand-new node has no route yet, so its alias is empty and it is allocated.
    cloud: nodeSyncCloud(deps, [], node),
    kube,
  };
}

function canonical(text: string): string | null {
  const cidr = tryParseCidr(text);
  return cidr ? formatCidr(cidr) : null;
}


