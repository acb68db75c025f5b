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

/** The pod CIDRs of `nodes` that overlap one of `cidrSets` with a mask other than that set's. */
export function maskMismatches(nodes: readonly Node[], cidrSets: readonly CidrSet[]): MaskMismatch[] {
  const ranges = setRanges(cidrSets);
  // A pod CIDR of the one mask every set of its family has cannot mismatch: no search for it.
  const masks = new Map<Family, Set<number>>();
  for (const { set, range } of ranges) masks.set(range.family, (masks.get(range.family) ?? new Set()).add(set.nodeMaskSize));
  const found: MaskMismatch[] = [];
  for (const node of nodes) {
    for (const text of podCidrsOf(node)) {
      const cidr = tryParseCidr(text);
      const familyMasks = cidr && masks.get(cidr.family);
      if (!cidr || !familyMasks || (familyMasks.size === 1 && familyMasks.has(cidr.prefix))) continue;
      const set = ranges.find((r) => overlaps(r.range, cidr))?.set;
      if (!set || cidr.prefix === set.nodeMaskSize) continue;
      found.push({ node: node.metadata.name, cidr: formatCidr(cidr), family: cidr.family, set });
    }
  }
  return found;
}

/** Each set with its parsed range (sets whose range does not parse are left out), in the order given. */
export function setRanges(cidrSets: readonly CidrSet[]): Array<{ set: CidrSet; range: Cidr }> {
  return cidrSets.flatMap((set) => {
    const range = tryParseCidr(set.clusterCidr);
    return range ? [{ set, range }] : [];
  });
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
