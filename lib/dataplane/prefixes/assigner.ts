/**
 * Who delegates an admitted node's pod CIDRs: the one decider between reconcile's node sync and
 * the route worker's `sync-node` (./prefix-join.ts). An admission takes the blocks and patches
 * them into the node; its `sync-node` message then assigns them at the pace of EC2's buckets. While
 * that message may still be delivered, reconcile leaves the assignment to it, so the two never
 * spend a bucket token on the same prefix (the loser's call is refused as in use). Reconcile is
 * the fallback for a message that is gone: once the queue holds nothing, or once the node is older
 * than a message's window (the shorter of the lease grace and a message's lifetime, its last
 * delivery's run included: lib/messages/work-queue.ts), reconcile assigns. Only blocks the node
 * leased before it was created are an admission's; a lease reconcile took itself (a pod CIDR the
 * node came with, adopted) has no message. docs/decisions/0033-who-assigns.md.
 */
import { formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import { createdAtMs, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';

/** What the decision reads about one node and the run. */
export interface AssignFacts {
  /** Node sync's mode: with SyncFromCloud EC2 picks the block when node sync runs, so no message assigns one. */
  nodeSyncMode: 'SyncFromCluster' | 'SyncFromCloud';
  /**
   * The node holds a pod CIDR of every cluster CIDR's family, each leased to it before it was
   * created (as an admission leaves it), and one of them is not on its interface.
   */
  awaitingDelegation: boolean;
  /** Since the node's creationTimestamp, in milliseconds; null when it does not say. */
  ageMs: number | null;
  /** How long the admission's message may still be delivered and run (lib/dataplane/data-plane.ts RunFacts). */
  windowMs: number;
  /** Messages the work queue holds (visible, in flight or delayed); null when it could not be read. */
  backlog: number | null;
}

/** Who delegates: the route worker, or reconcile's node sync. */
export type Assigner = 'worker' | 'reconcile';

/** Pure: `worker` while the admission's message may still assign the node's blocks; else `reconcile`. */
export function assignerOf(facts: AssignFacts): Assigner {
  if (facts.nodeSyncMode !== 'SyncFromCluster' || !facts.awaitingDelegation) return 'reconcile';
  if (facts.ageMs === null || facts.ageMs >= facts.windowMs) return 'reconcile';
  return facts.backlog !== null && facts.backlog > 0 ? 'worker' : 'reconcile';
}

/**
 * How much later than the node's creationTimestamp an admission's lease may be stamped: the
 * timestamp has a resolution of a second (Kubernetes API conventions: RFC 3339 times in seconds)
 * and the API server's clock is not the function's.
 */
export const ADMISSION_STAMP_SLACK_MS = 2_000;

/**
 * Pure: whether the node holds a pod CIDR of every cluster family, each among `leases` (its leases
 * in the run's listing) and stamped no later than the node's creation (an admission takes them
 * before the API server stores the node), and not all of them among `delegated` (its interface's
 * prefixes). A lease of unknown age is not taken for an admission's.
 */
export function awaitsDelegation(node: Node, clusterCidrs: readonly string[], leases: ReadonlyArray<{ cidr: string; since?: number }>, delegated: readonly string[]): boolean {
  const podCidrs = podCidrsOf(node).map((text) => tryParseCidr(text));
  if (podCidrs.some((cidr) => cidr === null)) return false;
  const texts = podCidrs.flatMap((cidr) => (cidr === null ? [] : [formatCidr(cidr)]));
  const families = new Set(podCidrs.map((cidr) => cidr?.family));
  if (!clusterCidrs.every((text) => families.has(tryParseCidr(text)?.family))) return false;
  const created = createdAtMs(node);
  if (created === null) return false;
  const admitted = (text: string) => leases.some((l) => l.cidr === text && l.since !== undefined && l.since <= created + ADMISSION_STAMP_SLACK_MS);
  if (!texts.every(admitted)) return false;
  return texts.some((text) => !delegated.includes(text));
}
