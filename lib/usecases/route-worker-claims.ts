/**
 * What the route worker checks before it acts on a message, as pure functions: a message is a hint
 * (anyone allowed to send to the queue can write one), so every route it names is checked against
 * the authority (ARCHITECTURE.md, "Authority"): the lease table for who owns a pod CIDR, the
 * cluster's tagged tables and CIDRs for where podroute may act at all. A message that fails a check
 * is refused: acknowledged and reported, never retried, never acted on.
 *
 * `checkRouteClaim` decides for one (CIDR, node) pair from the fresh node's claim and its lease. It
 * is the one-node case of ownership; when the shared ownership decider over nodes and leases
 * (lib/routes/) exists, this function is where the worker calls it for its one node.
 */
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { PodrouteError } from '../errors.ts';
import type { Lease } from '../ipam/index.ts';
import type { DeleteRouteMessage } from '../messages/route-message.ts';

export type Refusal =
  | 'outside-cluster-cidrs' // the destination is in no cluster CIDR: never podroute's route
  | 'not-a-cluster-table' // the table does not carry the cluster tag
  | 'no-expect' // a delete without the route the planner saw
  | 'no-lease-table' // no configured lease set covers the destination
  | 'not-leased' // the node holds no lease in the destination's set
  | 'lease-differs'; // the node's lease is another CIDR than the destination

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

/** The lease of a node in the set that covers a destination, as the worker read it. */
export type LeaseRead = { kind: 'no-set' } | { kind: 'read'; lease: Lease | null };

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
 * Whether a route of `destinationCidr` may target `node`: only inside the cluster CIDRs, and only
 * when the lease table says `node` holds exactly that CIDR's lease (a sub-range, a super-range or
 * another node's block is a conflict, never routed). The fresh node's own claim (its instance and
 * pod CIDRs) is checked before, as staleness. Null when it may.
 */
export function checkRouteClaim(claim: { destinationCidr: string; node: string }, lease: LeaseRead, clusterCidrs: readonly string[]): Refusal | null {
  if (!insideCluster(claim.destinationCidr, clusterCidrs)) return 'outside-cluster-cidrs';
  if (lease.kind === 'no-set') return 'no-lease-table';
  if (lease.lease === null || lease.lease.owner !== claim.node) return 'not-leased';
  const wanted = tryParseCidr(claim.destinationCidr);
  const held = tryParseCidr(lease.lease.cidr);
  return wanted !== null && held !== null && formatCidr(wanted) === formatCidr(held) ? null : 'lease-differs';
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
  'lease-differs': 'the node holds another CIDR\'s lease',
};
