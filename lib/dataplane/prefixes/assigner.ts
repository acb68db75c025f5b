/**
 * Who delegates an admitted node's pod CIDRs: the one decider between reconcile's node sync and
 * the route worker's `sync-node` (./prefix-join.ts). An admission takes the blocks and patches
 * them into the node; its `sync-node` message then assigns them at the pace of EC2's buckets. While
 * that message may still be delivered, reconcile leaves the assignment to it, so the two never
 * spend a bucket token on the same prefix (the loser's call is refused as in use). Reconcile is
 * the fallback for a message that is gone: once the queue holds nothing, or the node is older than
 * the lease grace (whose default outlasts the message's last delivery: MAX_RECEIVE_COUNT deliveries,
 * one visibility timeout apart, serverless.yml), reconcile assigns. docs/decisions/0033-who-assigns.md.
 */
import { formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import { podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';

/** What the decision reads about one node and the run. */
export interface AssignFacts {
  /** Node sync's mode: with SyncFromCloud EC2 picks the block when node sync runs, so no message assigns one. */
  nodeSyncMode: 'SyncFromCluster' | 'SyncFromCloud';
  /**
   * The node holds a pod CIDR of every cluster CIDR's family, each leased to it in the run's
   * listing (as an admission leaves it), and one of them is not on its interface.
   */
  awaitingDelegation: boolean;
  /** Since the node's creationTimestamp, in milliseconds; null when it does not say. */
  ageMs: number | null;
  /** The lease grace, in milliseconds. */
  graceMs: number;
  /** Messages the work queue holds (visible, in flight or delayed); null when it could not be read. */
  backlog: number | null;
}

/** Who delegates: the route worker, or reconcile's node sync. */
export type Assigner = 'worker' | 'reconcile';

/** Pure: `worker` while the admission's message may still assign the node's blocks; else `reconcile`. */
export function assignerOf(facts: AssignFacts): Assigner {
  if (facts.nodeSyncMode !== 'SyncFromCluster' || !facts.awaitingDelegation) return 'reconcile';
  if (facts.ageMs === null || facts.ageMs >= facts.graceMs) return 'reconcile';
  return facts.backlog !== null && facts.backlog > 0 ? 'worker' : 'reconcile';
}

/**
 * Pure: whether the node holds a pod CIDR of every cluster family, each among `leased` (its leases
 * in the run's listing), and not all of them among `delegated` (its interface's prefixes).
 */
export function awaitsDelegation(node: Node, clusterCidrs: readonly string[], leased: readonly string[], delegated: readonly string[]): boolean {
  const podCidrs = podCidrsOf(node).map((text) => tryParseCidr(text));
  if (podCidrs.some((cidr) => cidr === null)) return false;
  const texts = podCidrs.flatMap((cidr) => (cidr === null ? [] : [formatCidr(cidr)]));
  const families = new Set(podCidrs.map((cidr) => cidr?.family));
  if (!clusterCidrs.every((text) => families.has(tryParseCidr(text)?.family))) return false;
  if (!texts.every((text) => leased.includes(text))) return false;
  return texts.some((text) => !delegated.includes(text));
}

