/**
 * What the CREATE admission makes of the pod CIDRs a node comes with, of a block it is about to hand
 * out, and of the instance it names. Pure. A kubelet may write its own pod CIDRs (NodeRestriction
 * does not check them), so a claim is accepted only when it is exactly a block the node leases
 * already, never adopted here; otherwise `conflict` (overlaps another's lease), `unverified` or `invalid`.
 */
import { formatCidr, overlapsText, tryParseCidr } from '../cidr/cidr.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import { instanceIdOf, podCidrsOf, type Node } from '../nodes/node.ts';
import { decideOwnership, type LeaseTable } from '../routes/ownership.ts';

/** One set's leases as the admission reads them. */
export interface LeasedSet {
  clusterCidr: string;
  leases: ReadonlyArray<{ cidr: string; owner: string | null }>;
}

export type RefusedClaim =
  | { cidr: string; reason: 'conflict'; owner: string | null; leased: string }
  | { cidr: string; reason: 'unverified' | 'invalid' };

export type ClaimVerdict = { kind: 'own'; cidrs: string[] } | { kind: 'refused'; refused: RefusedClaim[] };

/**
 * The verdict on `node`'s claimed pod CIDRs (there is at least one): `own` when each is exactly a
 * block leased to the node, else every claim that is not. A refused claim is reported on the
 * claimant only; nothing of the lease's owner changes.
 */
export function judgeClaims(node: Node, sets: readonly LeasedSet[]): ClaimVerdict {
  const name = node.metadata.name;
  const own: string[] = [];
  const refused: RefusedClaim[] = [];
  for (const text of podCidrsOf(node)) {
    const cidr = tryParseCidr(text);
    if (!cidr) {
      refused.push({ cidr: text, reason: 'invalid' });
      continue;
    }
    const shown = formatCidr(cidr);
    const leases = sets.flatMap((set) => set.leases);
    const other = leases.find((lease) => lease.owner !== name && overlapsText(lease.cidr, shown));
    if (other) refused.push({ cidr: shown, reason: 'conflict', owner: other.owner, leased: other.cidr });
    else if (leases.some((lease) => lease.owner === name && lease.cidr === shown)) own.push(shown);
    else refused.push({ cidr: shown, reason: 'unverified' });
  }
  return refused.length === 0 ? { kind: 'own', cidrs: own } : { kind: 'refused', refused };
}

/** One line for the admission's warnings and the log. */
export function refusalMessage(node: string, claim: RefusedClaim): string {
  if (claim.reason === 'conflict') {
    return `node ${node}: pod CIDR ${claim.cidr} overlaps ${claim.leased}, leased to ${claim.owner ?? 'no node'}; it is not routed to this node`;
  }
  if (claim.reason === 'invalid') return `node ${node}: pod CIDR ${JSON.stringify(claim.cidr.slice(0, 64))} is not a CIDR; it is not routed`;
  return `node ${node}: pod CIDR ${claim.cidr} is not leased to this node; it is not routed until reconcile verifies it`;
}

/** A stored node's pod CIDR that keeps every block it overlaps out of allocation. */
export interface HeldClaim {
  cidr: string;
  node: string;
}

/**
 * The pod CIDRs of `nodes` that are not free whatever the lease table says: each the ownership
 * decider (lib/routes/ownership.ts) gives its node over `leaseTable` (its own lease) or holds for
 * it until reconcile adopts it (node mask or a migration mask, no lease overlapping it). Any other
 * claim (a range wider than a block, one overlapping another lease) is a conflict that nobody will
 * ever get: it holds nothing, so one node claiming the whole cluster CIDR cannot stop allocation.
 */
export function heldClaims(nodes: readonly Node[], leaseTable: LeaseTable, clusterCidrs: readonly string[], nodeSelector?: LabelSelector): HeldClaim[] {
  const ownership = decideOwnership({ nodes, clusterCidrs, leaseTable, ...(nodeSelector ? { nodeSelector } : {}) });
  return [...ownership.owners, ...ownership.reserved].map(([cidr, node]) => ({ cidr, node }));
}

/** The node (other than `self`) of the first of `held` that overlaps `candidate`, or null. */
export function claimantOf(candidate: string, held: readonly HeldClaim[], self: string): string | null {
  return held.find((claim) => claim.node !== self && overlapsText(claim.cidr, candidate))?.node ?? null;
}

/**
 * The first of `nodes` (other than `self`) that names `instanceId` in its providerID, or null. Of two
 * nodes naming one instance, the one stored first keeps its routes: a node being admitted is never
 * routed from its admission to an instance a stored node names (the stored node decides later).
 */
export function instanceHolderOf(instanceId: string, nodes: readonly Node[], self: string): string | null {
  return nodes.find((node) => node.metadata.name !== self && instanceIdOf(node) === instanceId)?.metadata.name ?? null;
}

/** One line for the admission's warnings and the log. */
export function sharedInstanceMessage(node: string, instanceId: string, holder: string): string {
  return `node ${node}: instance ${instanceId} is node ${holder}'s already; this node is not routed until reconcile decides`;
}
