/**
 * Prefixes mode's part of the route worker: a joined node's condition settled on the prefixes
 * delegated to its primary interface (there are no routes to make in that mode).
 */
import { containsCidr, formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Cidr } from '../../cidr/cidr.ts';
import type { SyncNodeMessage } from '../../messages/route-message.ts';
import { unmanagedReason } from '../../nodes/managed-node.ts';
import { instanceIdOf, networkUnavailableOf, podCidrsOf } from '../../nodes/node.ts';
import type { EniPrefixes } from '../../usecases/ports.ts';
import { type RouteWorkerDeps, NodeNotStoredError, currentNode } from '../../usecases/route-worker-deps.ts';
import { sameCidrs } from '../../usecases/route-writes.ts';
import { conditionText } from '../data-plane.ts';
import { prefixReadiness } from './readiness.ts';

/**
 * Prefixes mode's `sync-node`, queued by the webhook at a node's admission: there is no route to
 * make (the admission delegated the node's prefixes to its primary interface already,
 * ./prefix-node-sync.ts), only the condition, which needs the stored node. So:
 * - not stored yet: retried shortly, once, as in routes mode (admission runs before the Node is
 *   persisted: Kubernetes docs, "Dynamic Admission Control"); still absent after: left to reconcile;
 * - stored with another instance or other pod CIDRs than admitted: the admission's facts are stale,
 *   left to reconcile;
 * - else one DescribeInstances by id (EniPrefixes.describeInterfaces), and NetworkUnavailable=False
 *   once every pod CIDR of the node is delegated to its primary interface, with one pod CIDR inside
 *   each cluster CIDR (./readiness.ts decides it, as for reconcile's `syncPrefixNode`). DescribeInstances lists the
 *   prefixes assigned to each of an instance's interfaces (EC2 API Reference, InstanceIpv4Prefix
 *   and InstanceIpv6Prefix in InstanceNetworkInterface), and a prefix assigned to an interface is
 *   one EC2 checked and delegated to it (EC2 User Guide, "Prefix delegation for Amazon EC2 network
 *   interfaces").
 * Prefixes missing (or the instance not listed yet) are left to reconcile, which reads the subnet's
 * reservations and runs node sync: assigning is node sync's decision over the pod range's CIDR set
 * (adopting what a timed-out admission left, or EC2's pick in SyncFromCloud), and the worker has
 * neither the subnet and reservation reads nor the role's Assign permissions. The worker never
 * writes True here either: a node not ready yet stays as the kubelet registered it.
 */
export async function settlePrefixJoin(message: SyncNodeMessage, deps: RouteWorkerDeps, prefixes: Pick<EniPrefixes, 'describeInterfaces'>): Promise<string> {
  const name = message.node;
  const node = await currentNode(name, deps);
  // Not stored: retried on the first receive, gone after (outcomeOf, lib/usecases/delivery-outcome.ts).
  if (!node) throw new NodeNotStoredError(name, `node ${name} is not stored yet, so its condition waits`);
  const unmanaged = unmanagedReason(node, deps.nodeSelector);
  if (unmanaged !== null) return `stale:unmanaged ${unmanaged}`;
  const instanceId = instanceIdOf(node);
  const podCidrs = podCidrsOf(node).map((text) => tryParseCidr(text));
  const cidrs = podCidrs.filter((c) => c !== null).map(formatCidr);
  const admitted = message.admitted;
  if (admitted && (instanceId !== admitted.instanceId || !sameCidrs(cidrs, admitted.podCidrs))) return 'left-to-reconcile:stored-differs-from-admitted';
  if (networkUnavailableOf(node) === 'False') return 'in-sync';
  const clusters = deps.clusterCidrs.map((text) => tryParseCidr(text));
  const within = (cidr: Cidr | null, cluster: Cidr | null) => cidr !== null && cluster !== null && containsCidr(cluster, cidr);
  const complete =
    podCidrs.length > 0 && podCidrs.every((c) => clusters.some((cluster) => within(c, cluster))) && clusters.every((cluster) => podCidrs.some((c) => within(c, cluster)));
  if (instanceId === null || !complete) return 'left-to-reconcile:pod-cidrs-incomplete';
  const eni = (await prefixes.describeInterfaces([instanceId])).get(instanceId);
  if (!eni) return 'left-to-reconcile:instance-unlisted';
  const missing = cidrs.filter((cidr) => !eni.prefixes.includes(cidr));
  if (prefixReadiness({ podCidrsComplete: complete, carried: missing.length === 0 }).networkUnavailable !== false) {
    deps.log.log('info', 'prefix.not-delegated', { node: name, networkInterfaceId: eni.networkInterfaceId, missing });
    return 'left-to-reconcile:prefixes-missing';
  }
  const started = deps.now();
  const result = await deps.nodes.setNetworkUnavailable(name, false, conditionText({ readiness: prefixReadiness }, false));
  deps.log.log('info', 'action', { action: 'set-network-unavailable', value: false, node: name, result, ms: deps.now() - started });
  return 'ready';
}
