/**
 * What the route worker checks before it acts on a message, as pure functions. A message is a hint
 * anyone allowed to send to the queue can write, so each route it names is checked against the
 * authority (ARCHITECTURE.md, "Authority"): the lease table via `decideOwnership`
 * (lib/routes/ownership.ts, fed by ./route-worker-ownership.ts), and the cluster's tagged tables and
 * CIDRs. A message that fails is refused: acknowledged and reported, never retried or acted on.
 */
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { PodrouteError } from '../errors.ts';
import type { DeleteRouteMessage } from '../messages/work-message.ts';
import { type ConflictReason, type LeaseTable, type Ownership } from '../routes/index.ts';

export type Refusal =
  | 'outside-cluster-cidrs' // the destination is in no cluster CIDR: never podroute's route
  | 'not-a-cluster-table' // the table does not carry the cluster tag
  | 'no-expect' // a delete without the route the planner saw
  | 'no-lease-table' // no configured lease set covers the destination
  | 'not-leased' // unleased: not the node's until reconcile adopts it (or never)
  | 'owned' // a no-owner delete of a route to the node the ownership decider gives it to
  | ConflictReason; // the ownership decider gives it to no one, or to another node

/** A message the worker will not act on: it contradicts the authority. Never retryable. */
export class MessageRefusedError extends PodrouteError {
  override name = 'MessageRefusedError';
  constructor(
    readonly reason: Refusal,
    message: string,
  ) {
    super(message, { retryable: false });
  }
}

function insideCluster(cidr: string, clusterCidrs: readonly string[]): boolean {
  const parsed = tryParseCidr(cidr);
  return (
    parsed !== null &&
    clusterCidrs.some((text) => {
      const cluster = tryParseCidr(text);
      return cluster !== null && containsCidr(cluster, parsed);
    })
  );
}

/**
 * Whether a route of `destinationCidr` may target `node`: only inside the cluster CIDRs, in a
 * range the lease table covers, and only when the ownership decider (run over the fresh node and
 * the lease table, `ownership`) gives that CIDR to `node`. A conflict says why it does not; an
 * unleased CIDR is `not-leased` (only reconcile adopts). Null when it may.
 */
export function checkRouteClaim(
  claim: { destinationCidr: string; node: string },
  ownership: Ownership,
  leaseTable: Pick<LeaseTable, 'sets'>,
  clusterCidrs: readonly string[],
): Refusal | null {
  if (!insideCluster(claim.destinationCidr, clusterCidrs)) return 'outside-cluster-cidrs';
  if (!insideCluster(claim.destinationCidr, leaseTable.sets.map((set) => set.clusterCidr))) return 'no-lease-table';
  const wanted = tryParseCidr(claim.destinationCidr);
  const text = wanted === null ? claim.destinationCidr : formatCidr(wanted);
  if (ownership.owners.get(text) === claim.node) return null;
  const conflict = ownership.conflicts.find((c) => c.node === claim.node && (c.cidr === text || c.cidr === undefined));
  return conflict?.reason ?? 'not-leased';
}

/**
 * Whether a delete may go ahead at all: inside the cluster CIDRs, in a table carrying the cluster
 * tag (`taggedTableIds`, as listed), and with the route the planner saw (`expect`), so the worker
 * can tell that the route it finds is still that one. Null when it may.
 */
export function checkDelete(message: DeleteRouteMessage, taggedTableIds: ReadonlySet<string>, clusterCidrs: readonly string[]): Refusal | null {
  if (!insideCluster(message.destinationCidr, clusterCidrs)) return 'outside-cluster-cidrs';
  if (!taggedTableIds.has(message.routeTableId)) return 'not-a-cluster-table';
  if (message.expect === undefined) return 'no-expect';
  return null;
}

/** Throws the refusal, with one line saying what was refused and why. */
export function refuse(reason: Refusal, what: string): never {
  throw new MessageRefusedError(reason, `refused ${what}: ${REASONS[reason]}`);
}

const REASONS: Record<Refusal, string> = {
  'outside-cluster-cidrs': 'the destination is outside the cluster CIDRs',
  'not-a-cluster-table': 'the route table does not carry the cluster tag',
  'no-expect': 'a delete must carry the route the planner saw (expect)',
  'no-lease-table': 'no lease set of the cluster covers the destination',
  'not-leased': 'the node holds no lease for it in the lease table',
  'owned': 'the lease table gives the destination to the node the route targets',
  'leased-to-another-node': 'the lease table gives it, or a CIDR overlapping it, to another node',
  'overlaps-pod-cidr': 'it overlaps a pod CIDR of a node registered first',
  'mask-size': 'its mask is neither the node mask nor a migration mask',
  'instance-of-another-node': 'the node names an instance another node holds',
  'non-canonical-pod-cidr': 'the pod CIDR is written with leading zeros, which the node reads otherwise',
};
