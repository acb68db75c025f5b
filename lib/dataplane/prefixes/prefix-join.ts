/**
 * Prefixes mode's part of the route worker: a joined node's prefixes delegated to its primary
 * interface (the admission only took the blocks, ./prefix-assign.ts) and its condition settled on
 * them (there are no routes to make in that mode).
 */
import { containsCidr, formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Cidr } from '../../cidr/cidr.ts';
import { PodrouteError } from '../../errors.ts';
import type { Admitted, SyncNodeMessage } from '../../messages/work-message.ts';
import { unmanagedReason } from '../../nodes/managed-node.ts';
import { instanceIdOf, networkUnavailableOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import { outcomeOf } from '../../usecases/delivery-outcome.ts';
import { type Delivery, type RouteWorkerDeps, NodeNotStoredError, storedAfterAdmission } from '../../usecases/route-worker-deps.ts';
import { admittedNode, sameCidrs } from '../../usecases/route-writes.ts';
import { conditionText } from '../data-plane.ts';
import { assignAdmitted } from './prefix-assign.ts';
import type { PrefixAssignPorts } from './prefix-assign.ts';
import { verifyInstanceOfNode } from './prefix-instance.ts';
import { prefixReadiness } from './readiness.ts';

/**
 * Prefixes mode's `sync-node`. From a node's admission it carries what the admission took
 * (`admitted`: instance and pod CIDRs, leased in DynamoDB and patched into the node): on its first
 * receive, a node not stored yet is served from that at once, as routes mode's worker routes it
 * (admission runs before the Node is persisted: Kubernetes docs, "Dynamic Admission Control").
 * - the node is stored with another instance or other pod CIDRs than admitted: the admission's
 *   facts are stale, left to reconcile;
 * - one DescribeInstances by id (EniPrefixes.describeInterfaces): DescribeInstances lists the
 *   prefixes assigned to each of an instance's interfaces (EC2 API Reference, InstanceIpv4Prefix
 *   and InstanceIpv6Prefix in InstanceNetworkInterface), and a prefix assigned to an interface is
 *   one EC2 checked and delegated to it (EC2 User Guide, "Prefix delegation for Amazon EC2 network
 *   interfaces");
 * - admitted pod CIDRs missing from the interface are assigned (./prefix-assign.ts), each only
 *   when the lease table gives it to the node, and only when no stored node whose lease is on the
 *   interface holds the instance (./prefix-instance.ts: refused `instance-of-another-node`);
 * - then NetworkUnavailable=False on the stored node, once every pod CIDR is delegated, with one
 *   pod CIDR inside each cluster CIDR (./readiness.ts decides it, as for reconcile's node sync).
 *   A node still not stored after the assignment is retried shortly (the prefixes are on its
 *   interface by then), once, as in routes mode; absent after that, it is gone.
 * A message without `admitted` (a stored node's) assigns nothing: prefixes missing are left to
 * reconcile, which reads the subnet's reservations and runs node sync. The worker never writes
 * True here either: a node not ready yet stays as the kubelet registered it.
 */
export async function settlePrefixJoin(message: SyncNodeMessage, deps: RouteWorkerDeps, ports: PrefixAssignPorts, delivery?: Delivery): Promise<string> {
  const name = message.node;
  const admitted = message.admitted;
  const stored = await storedAfterAdmission(name, admitted, deps);
  if (!stored && (!admitted || (delivery !== undefined && outcomeOf(new NodeNotStoredError(name), delivery) === 'gone'))) {
    // Not stored: retried on the first receive, gone after (outcomeOf, lib/usecases/delivery-outcome.ts).
    throw new NodeNotStoredError(name, `node ${name} is not stored yet, so its condition waits`);
  }
  if (stored) {
    const stale = staleness(stored, admitted, deps);
    if (stale !== null) return stale;
  }
  const instanceId = stored ? instanceIdOf(stored) : (admitted?.instanceId ?? null);
  const podCidrs = (stored ? podCidrsOf(stored) : (admitted?.podCidrs ?? [])).map((text) => tryParseCidr(text));
  const cidrs = podCidrs.filter((c) => c !== null).map(formatCidr);
  if (instanceId === null || !complete(podCidrs, deps.clusterCidrs)) return 'left-to-reconcile:pod-cidrs-incomplete';
  const eni = (await ports.prefixes.describeInterfaces([instanceId])).get(instanceId);
  if (!eni) return 'left-to-reconcile:instance-unlisted';
  const missing = cidrs.filter((cidr) => !eni.prefixes.includes(cidr));
  if (missing.length > 0 && !admitted) {
    deps.log.log('info', 'prefix.not-delegated', { node: name, networkInterfaceId: eni.networkInterfaceId, missing });
    return 'left-to-reconcile:prefixes-missing';
  }
  if (missing.length > 0 && admitted) {
    // Refused (instance-of-another-node) when a stored node's lease is on the interface: nothing is delegated.
    await verifyInstanceOfNode(stored ?? admittedNode(name, admitted, new Date(deps.now()).toISOString()), eni, deps, ports);
    const assigned = await assignAdmitted(name, eni, missing, ports);
    if (assigned.kind === 'left') return assigned.status;
  }
  const node = stored ?? (await storedAsAdmitted(name, admitted, deps));
  if (networkUnavailableOf(node) === 'False') return missing.length > 0 ? 'assigned' : 'in-sync';
  if (prefixReadiness({ podCidrsComplete: true, carried: true }).networkUnavailable !== false) return 'left-to-reconcile:not-ready';
  const started = deps.now();
  const result = await deps.nodes.setNetworkUnavailable(name, false, conditionText({ readiness: prefixReadiness }, false));
  deps.log.log('info', 'action', { action: 'set-network-unavailable', value: false, node: name, result, ms: deps.now() - started });
  return missing.length > 0 ? 'assigned,ready' : 'ready';
}

/** Why a stored node is not this message's to act on, or null when it is. */
function staleness(node: Node, admitted: Admitted | undefined, deps: RouteWorkerDeps): string | null {
  const unmanaged = unmanagedReason(node, deps.nodeSelector);
  if (unmanaged !== null) return `stale:unmanaged ${unmanaged}`;
  const cidrs = podCidrsOf(node).flatMap((text) => tryParseCidr(text) ?? []).map(formatCidr);
  if (admitted && (instanceIdOf(node) !== admitted.instanceId || !sameCidrs(cidrs, admitted.podCidrs))) return 'left-to-reconcile:stored-differs-from-admitted';
  if (networkUnavailableOf(node) === 'False') return 'in-sync';
  return null;
}

/** One pod CIDR inside each cluster CIDR, and none outside. */
function complete(podCidrs: ReadonlyArray<Cidr | null>, clusterCidrs: readonly string[]): boolean {
  const clusters = clusterCidrs.map((text) => tryParseCidr(text));
  const within = (cidr: Cidr | null, cluster: Cidr | null) => cidr !== null && cluster !== null && containsCidr(cluster, cidr);
  return podCidrs.length > 0 && podCidrs.every((c) => clusters.some((cluster) => within(c, cluster))) && clusters.every((cluster) => podCidrs.some((c) => within(c, cluster)));
}

/** The node as stored after its prefixes were assigned from its admission; retried shortly while it is not, or not as admitted. */
async function storedAsAdmitted(name: string, admitted: Admitted | undefined, deps: RouteWorkerDeps): Promise<Node> {
  const node = await storedAfterAdmission(name, admitted, deps);
  if (!node) throw new NodeNotStoredError(name, `node ${name}: prefixes delegated from its admission; the node is not stored yet, so its condition waits`);
  const stale = staleness(node, admitted, deps);
  if (stale !== null && stale !== 'in-sync') {
    throw new PodrouteError(`node ${name} was stored otherwise than admitted; syncing it again`, { retryable: true });
  }
  return node;
}
