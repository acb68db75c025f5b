/**
 * Pod CIDRs whose mask is not the configured node mask (a cluster migrated with another
 * `--node-cidr-mask-size`, or a CIDR set by hand). Adopted only when MIGRATION_MASK_SIZES names the
 * size and no lease overlaps it (lib/routes/ownership.ts), then held as every block it overlaps
 * (`CidrSet.occupy`); otherwise a conflict. Each is reported with what to change.
 */
import { type Cidr, type Family, containsCidr, formatCidr, overlaps, tryParseCidr } from '../cidr/cidr.ts';
import type { CidrSet } from '../ipam/index.ts';
import { podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';

/** The reason of the Warning event on a node whose pod CIDR has another mask than the set's. */
export const MASK_MISMATCH_EVENT = 'PodCidrMaskMismatch';

export interface MaskMismatch {
  node: string;
  /** The node's pod CIDR, canonical. */
  cidr: string;
  family: Family;
  /** The set that holds (a part of) it, and so its configured node mask. */
  set: CidrSet;
}

/** The pod CIDRs of `node` that overlap one of `cidrSets` with a mask other than that set's. */
export function maskMismatches(node: Node, cidrSets: readonly CidrSet[]): MaskMismatch[] {
  const found: MaskMismatch[] = [];
  for (const text of podCidrsOf(node)) {
    const cidr = tryParseCidr(text);
    if (!cidr) continue;
    const set = cidrSets.find((s) => holds(s, cidr));
    if (!set || cidr.prefix === set.nodeMaskSize) continue;
    found.push({ node: node.metadata.name, cidr: formatCidr(cidr), family: cidr.family, set });
  }
  return found;
}

/** What to tell the operator (one line, short enough for an admission warning: under 256 characters). */
export function maskMismatchMessage(m: MaskMismatch): string {
  const prefix = tryParseCidr(m.cidr)?.prefix ?? 0;
  const variable = m.family === 4 ? 'NODE_MASK_SIZE_IPV4' : 'NODE_MASK_SIZE_IPV6';
  const flag = m.family === 4 ? '--node-cidr-mask-size(-ipv4)' : '--node-cidr-mask-size-ipv6';
  return (
    `pod CIDR ${m.cidr} is a /${prefix}, podroute allocates /${m.set.nodeMaskSize} (${variable}=${m.set.nodeMaskSize}). ` +
    `Set ${variable}=${prefix} (kube-controller-manager's ${flag} the nodes got) or adopt it: MIGRATION_MASK_SIZES=ipv${m.family}:${prefix}`
  );
}

/**
 * Whether the leased block `blockCidr` still carries a pod CIDR of one of `nodes`: a block can hold
 * the smaller pod CIDRs of several nodes (held as the one block that contains them, owned by the
 * node occupied first), so it is not free while any of them lives. Only a pod CIDR strictly inside
 * the block counts: one as large or larger (another node's copy of it, the whole cluster CIDR) is a
 * conflict (lib/routes/ownership.ts) and keeps nothing. Reconcile's reclaim keeps a block by it (it
 * lists the nodes anyway); the node-left check lists none (./node-left.ts says why).
 */
export function blockInUse(blockCidr: string, nodes: readonly Node[]): boolean {
  const block = tryParseCidr(blockCidr);
  return block !== null && nodes.some((node) => podCidrsOf(node).some((text) => {
    const cidr = tryParseCidr(text);
    return cidr !== null && cidr.prefix > block.prefix && containsCidr(block, cidr);
  }));
}

/** Whether `cidr` overlaps the set's cluster CIDR (same family). */
export function holds(set: CidrSet, cidr: Cidr): boolean {
  const cluster = tryParseCidr(set.clusterCidr);
  return cluster !== null && cluster.family === cidr.family && overlaps(cluster, cidr);
}
