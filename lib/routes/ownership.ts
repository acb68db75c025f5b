/**
 * Who owns which pod CIDR: the one decider (ARCHITECTURE.md, "Authority") that the route planner,
 * reconcile's lease upkeep and the route worker call. A Node's pod CIDRs and providerID are claims
 * (NodeRestriction does not check them), judged against the lease table, which only podroute writes.
 * The rules, conflict by conflict, are docs/decisions/0009-pod-cidr-ownership.md.
 */
import { type Cidr, type Family, addressBits, containsCidr, formatCidr, leadingZerosReading, tryParseCanonical, tryParseCidr } from '../cidr/cidr.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { type Node, instanceIdOf, podCidrsOf } from '../nodes/node.ts';
import { TakenIndex, truncate } from './taken-index.ts';

export type ConflictReason = 'leased-to-another-node' | 'overlaps-pod-cidr' | 'mask-size' | 'instance-of-another-node' | 'non-canonical-pod-cidr';

export interface Conflict {
  node: string;
  /** The claimed pod CIDR, canonical; absent for a node without one that names another's instance. */
  cidr?: string;
  reason: ConflictReason;
  /** The node whose lease, pod CIDR or instance it is, when there is one. */
  other?: string;
  detail: string;
}

/** A lease as the lease table lists it (lib/ipam Lease). */
export interface LeaseView {
  cidr: string;
  owner: string | null;
  since?: number;
}

export interface LeaseTable {
  leases: readonly LeaseView[];
  /** The sets the leases are blocks of: their range and node mask. */
  sets: readonly { clusterCidr: string; nodeMaskSize: number }[];
  /** Masks other than the node mask that may be adopted (config MIGRATION_MASK_SIZES). Default none. */
  migrationMaskSizes?: Readonly<Record<Family, readonly number[]>>;
}

export interface OwnershipInput {
  nodes: readonly Node[];
  /** The ranges claims must lie in when there is no lease table. */
  clusterCidrs: readonly string[];
  /** Absent: no lease table (the plan CLI); the first registered node owns overlapping CIDRs. */
  leaseTable?: LeaseTable;
  nodeSelector?: LabelSelector;
}

export interface Ownership {
  /** Canonical pod CIDR -> the node it belongs to (routed when the node is managed). */
  owners: Map<string, string>;
  /** Canonical pod CIDR -> node: adoption candidates not leased yet; neither routed nor freed. */
  reserved: Map<string, string>;
  /** Lease table only: the candidates reconcile may occupy for their node, sorted. */
  adoptable: Array<{ node: string; cidr: string }>;
  /** Sorted by (node, cidr). */
  conflicts: Conflict[];
  /** Instances named by unmanaged nodes and by no managed node: routes to them are left alone. */
  unmanagedInstances: Set<string>;
}

interface Claim {
  readonly node: NodeClaims;
  readonly cidr: Cidr;
  readonly text: string;
  /** The node mask of the range it lies in (lease table only). */
  readonly mask: number | null;
  /** What it takes in the lease table: the block holding it when it is smaller than a block, else itself. */
  readonly footprint: Cidr;
}

interface NodeClaims {
  readonly name: string;
  readonly managed: boolean;
  readonly instanceId: string | null;
  readonly createdAt: number;
  readonly claims: Claim[];
  /** Lease table: some claim of it is leased to it; the oldest such lease's time. */
  leased: boolean;
  leasedSince: number;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `metadata.creationTimestamp` in ms, or +Infinity when absent or unreadable (registered last). */
function createdAtOf(node: Node): number {
  const text: unknown = node.metadata.creationTimestamp;
  const ms = typeof text === 'string' ? Date.parse(text) : Number.NaN;
  return Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY;
}

const byRegistration = (a: NodeClaims, b: NodeClaims): number => a.createdAt - b.createdAt || compareText(a.name, b.name);

export function decideOwnership(input: OwnershipInput): Ownership {
  const ranges = rangesOf(input);
  const nodes = collectClaims(input, ranges);
  const conflicts: Conflict[] = nonCanonicalClaims(input.nodes, ranges);
  const lost = new Set<Claim>();
  const lose = (claim: Claim, reason: ConflictReason, detail: string, other?: string) => {
    lost.add(claim);
    conflicts.push({ node: claim.node.name, cidr: claim.text, reason, ...(other === undefined ? {} : { other }), detail });
  };

  const owners = new Map<string, string>();
  const leased = input.leaseTable ? judgeLeases(nodes, input.leaseTable, lose) : new Set<Claim>();
  const conflictless = (node: string, instanceId: string, other: string) =>
    conflicts.push({ node, reason: 'instance-of-another-node', other, detail: `node ${node} names instance ${instanceId}, which node ${other} holds; it is not routed` });
  instanceRule(nodes, Boolean(input.leaseTable), lose, conflictless);
  const unmanagedInstances = unmanagedInstancesOf(nodes, conflictless);

  // Leased claims own their CIDR; the rest (candidates, or every claim without a lease table) are
  // taken in registration order, each unless it overlaps one taken before.
  const taken = new TakenIndex<Claim>(nodes.flatMap((node) => node.claims.map((claim) => claim.footprint.prefix)));
  for (const claim of leased) {
    if (lost.has(claim)) continue;
    owners.set(claim.text, claim.node.name);
    taken.add(claim);
  }
  const reserved = new Map<string, string>();
  const adoptable: Array<{ node: string; cidr: string }> = [];
  for (const node of [...nodes].sort(byRegistration)) {
    for (const claim of node.claims) {
      if (lost.has(claim) || leased.has(claim)) continue;
      const earlier = taken.overlapping(claim.footprint);
      if (earlier) {
        lose(claim, 'overlaps-pod-cidr', `pod CIDR ${claim.text} of node ${node.name} overlaps ${earlier.text} of node ${earlier.node.name}, registered first; it is not routed to ${node.name}`, earlier.node.name);
        continue;
      }
      taken.add(claim);
      if (input.leaseTable) {
        reserved.set(claim.text, node.name);
        adoptable.push({ node: node.name, cidr: claim.text });
      } else {
        owners.set(claim.text, node.name);
      }
    }
  }
  adoptable.sort((a, b) => compareText(a.node, b.node) || compareText(a.cidr, b.cidr));
  conflicts.sort((a, b) => compareText(a.node, b.node) || compareText(a.cidr ?? '', b.cidr ?? ''));
  return { owners, reserved, adoptable, conflicts, unmanagedInstances };
}

/** The ranges claims must lie in, with their node mask (lease table) or none. */
function rangesOf(input: OwnershipInput): Array<{ cidr: Cidr; mask: number | null }> {
  if (input.leaseTable) {
    return input.leaseTable.sets.flatMap((set) => {
      const cidr = tryParseCidr(set.clusterCidr);
      return cidr ? [{ cidr, mask: set.nodeMaskSize }] : [];
    });
  }
  return input.clusterCidrs.flatMap((text) => {
    const cidr = tryParseCidr(text);
    return cidr ? [{ cidr, mask: null }] : [];
  });
}

type Lose = (claim: Claim, reason: ConflictReason, detail: string, other?: string) => void;

/** Each claim against the leases and the masks: the claims leased to their node; the refused ones lost. */
function judgeLeases(nodes: readonly NodeClaims[], table: LeaseTable, lose: Lose): Set<Claim> {
  const leased = new Set<Claim>();
  const leases = indexLeases(table.leases);
  const migration = table.migrationMaskSizes;
  for (const node of nodes) {
    for (const claim of node.claims) {
      const mask = claim.mask ?? claim.cidr.prefix;
      const maskAllowed = claim.cidr.prefix === mask || (migration?.[claim.cidr.family] ?? []).includes(claim.cidr.prefix);
      // A range wider than a block is judged by its mask first: its leases are not even looked at.
      const standing = maskAllowed || claim.cidr.prefix > mask ? leaseStanding(claim, mask, leases) : null;
      if (standing?.kind === 'other') {
        const who = standing.owner === null ? 'a lease without an owner' : `node ${standing.owner}`;
        lose(claim, 'leased-to-another-node', `pod CIDR ${claim.text} of node ${node.name} overlaps ${standing.block}, leased to ${who}; it is not routed to ${node.name}`, standing.owner ?? undefined);
      } else if (!maskAllowed || standing === null) {
        lose(claim, 'mask-size', `pod CIDR ${claim.text} of node ${node.name} is a /${claim.cidr.prefix}, neither the node mask /${mask} nor a migration mask (MIGRATION_MASK_SIZES); it is neither leased nor routed`);
      } else if (standing.kind === 'leased') {
        leased.add(claim);
        node.leased = true;
        node.leasedSince = Math.min(node.leasedSince, standing.since);
      }
    }
  }
  return leased;
}

/** One entry per node name (the first), with its parsed pod CIDRs that lie inside a range. */
function collectClaims(input: OwnershipInput, ranges: ReadonlyArray<{ cidr: Cidr; mask: number | null }>): NodeClaims[] {
  const seen = new Set<string>();
  const out: NodeClaims[] = [];
  for (const node of input.nodes) {
    const name = node.metadata.name;
    if (seen.has(name)) continue;
    seen.add(name);
    const entry: NodeClaims = {
      name,
      managed: unmanagedReason(node, input.nodeSelector) === null,
      instanceId: instanceIdOf(node),
      createdAt: createdAtOf(node),
      claims: [],
      leased: false,
      leasedSince: Number.POSITIVE_INFINITY,
    };
    for (const raw of podCidrsOf(node)) {
      const parsed = tryParseCanonical(raw);
      if (!parsed) continue;
      const { cidr, text } = parsed;
      const range = ranges.find((r) => containsCidr(r.cidr, cidr));
      // A node has one or two pod CIDRs: a scan, not a set per node.
      if (!range || entry.claims.some((claim) => claim.text === text)) continue;
      entry.claims.push({ node: entry, cidr, text, mask: range.mask, footprint: range.mask !== null && cidr.prefix > range.mask ? blockOf(cidr, range.mask) : cidr });
    }
    out.push(entry);
  }
  return out;
}

/** A conflict for each pod CIDR with leading zeros read inside a range, of the first node of each name. */
function nonCanonicalClaims(nodes: readonly Node[], ranges: ReadonlyArray<{ cidr: Cidr }>): Conflict[] {
  const firsts = [...new Map([...nodes].reverse().map((node) => [node.metadata.name, node])).values()];
  return firsts.flatMap((node) =>
    [...new Set(podCidrsOf(node))].flatMap((raw) => {
      const cidr = leadingZerosReading(raw);
      if (!cidr || !ranges.some((range) => containsCidr(range.cidr, cidr))) return [];
      const read = formatCidr(cidr);
      const detail = `pod CIDR ${JSON.stringify(raw)} of node ${node.metadata.name} has leading zeros; its network reads it as ${read}, so it is neither leased nor routed`;
      return [{ node: node.metadata.name, cidr: read, reason: 'non-canonical-pod-cidr' as const, detail }];
    }),
  );
}

/** The `/mask` block holding `cidr` (its network with the block's host bits cleared). */
const blockOf = (cidr: Cidr, mask: number): Cidr => truncate(cidr, mask);

/** Every `/mask` block of `cidr` (a range wider than the block). */
function blocksOf(cidr: Cidr, mask: number): Cidr[] {
  const shift = BigInt(addressBits(cidr.family) - mask);
  const first = cidr.network >> shift;
  const out: Cidr[] = [];
  for (let i = 0n; i < 1n << BigInt(mask - cidr.prefix); i++) out.push({ family: cidr.family, prefix: mask, network: (first + i) << shift });
  return out;
}

interface LeaseIndex {
  byCidr: Map<string, LeaseView>;
  parsed: Array<{ cidr: Cidr; lease: LeaseView }>;
}

function indexLeases(leases: readonly LeaseView[]): LeaseIndex {
  const byCidr = new Map<string, LeaseView>();
  const parsed: Array<{ cidr: Cidr; lease: LeaseView }> = [];
  for (const lease of leases) {
    const canonical = tryParseCanonical(lease.cidr);
    if (!canonical) continue;
    byCidr.set(canonical.text, lease);
    parsed.push({ cidr: canonical.cidr, lease });
  }
  return { byCidr, parsed };
}

type Standing = { kind: 'leased'; since: number } | { kind: 'other'; owner: string | null; block: string } | { kind: 'unleased' };

/** How the leases stand to one claim of a node whose blocks are `/mask`. */
function leaseStanding(claim: Claim, mask: number, leases: LeaseIndex): Standing {
  const { cidr } = claim;
  const since = (lease: LeaseView) => lease.since ?? Number.POSITIVE_INFINITY;
  if (cidr.prefix >= mask) {
    const block = formatCidr(blockOf(cidr, mask));
    const lease = leases.byCidr.get(block);
    if (!lease) return { kind: 'unleased' };
    return lease.owner === claim.node.name ? { kind: 'leased', since: since(lease) } : { kind: 'other', owner: lease.owner, block };
  }
  // A larger CIDR: every block inside it, looked up one by one when there are fewer blocks than leases.
  const blocks = 2 ** (mask - cidr.prefix);
  const inside = blocks <= leases.parsed.length ? blocksOf(cidr, mask).flatMap((block) => {
    const lease = leases.byCidr.get(formatCidr(block));
    return lease ? [{ cidr: block, lease }] : [];
  }) : leases.parsed.filter((entry) => containsCidr(cidr, entry.cidr));
  const foreign = inside.find((entry) => entry.lease.owner !== claim.node.name);
  if (foreign) return { kind: 'other', owner: foreign.lease.owner, block: formatCidr(foreign.cidr) };
  if (inside.length < blocks) return { kind: 'unleased' };
  return { kind: 'leased', since: Math.min(...inside.map((entry) => since(entry.lease))) };
}

/** Managed nodes naming one instance: the first keeps it, every pod CIDR of the others is a conflict. */
function instanceRule(
  nodes: readonly NodeClaims[],
  withLeases: boolean,
  lose: Lose,
  conflictless: (node: string, instanceId: string, other: string) => void,
): void {
  const byInstance = new Map<string, NodeClaims[]>();
  for (const node of nodes) {
    if (!node.managed || node.instanceId === null) continue;
    const group = byInstance.get(node.instanceId);
    if (group) group.push(node);
    else byInstance.set(node.instanceId, [node]);
  }
  // creationTimestamp first: the API server sets it and a kubelet cannot renew it (a lease's time
  // is renewed at each re-registration); a migrated node's pod CIDR is not leased yet.
  const rank = (a: NodeClaims, b: NodeClaims): number =>
    a.createdAt - b.createdAt ||
    (withLeases ? Number(b.leased) - Number(a.leased) || a.leasedSince - b.leasedSince || 0 : 0) ||
    compareText(a.name, b.name);
  for (const [instanceId, group] of byInstance) {
    if (group.length < 2) continue;
    const [first, ...others] = [...group].sort(rank);
    if (!first) continue;
    for (const node of others) {
      if (node.claims.length === 0) {
        conflictless(node.name, instanceId, first.name);
        continue;
      }
      for (const claim of node.claims) {
        lose(claim, 'instance-of-another-node', `node ${node.name} names instance ${instanceId}, which node ${first.name} holds; pod CIDR ${claim.text} is not routed to it`, first.name);
      }
    }
  }
}

/** Instances only unmanaged nodes name; an unmanaged node naming a managed node's instance is reported. */
function unmanagedInstancesOf(nodes: readonly NodeClaims[], report: (node: string, instanceId: string, other: string) => void): Set<string> {
  const managed = new Map<string, string>();
  for (const node of [...nodes].sort(byRegistration)) if (node.managed && node.instanceId !== null && !managed.has(node.instanceId)) managed.set(node.instanceId, node.name);
  const out = new Set<string>();
  for (const node of nodes) {
    if (node.managed || node.instanceId === null) continue;
    const holder = managed.get(node.instanceId);
    if (holder === undefined) out.add(node.instanceId);
    else report(node.name, node.instanceId, holder);
  }
  return out;
}

/**
 * The lease table as it will be once `adoptable` is occupied (what `CidrSet.occupy` writes: every
 * block of its set the CIDR overlaps, for its node). A dry run plans from it, as the run it stands
 * for plans after adopting.
 */
export function withAdopted(table: LeaseTable, adoptable: ReadonlyArray<{ node: string; cidr: string }>): LeaseTable {
  const added: LeaseView[] = [];
  for (const { node, cidr: text } of adoptable) {
    const cidr = tryParseCidr(text);
    const set = cidr ? table.sets.find((s) => { const range = tryParseCidr(s.clusterCidr); return range !== null && containsCidr(range, cidr); }) : undefined;
    if (!cidr || !set) continue;
    const blocks = cidr.prefix >= set.nodeMaskSize ? [blockOf(cidr, set.nodeMaskSize)] : blocksOf(cidr, set.nodeMaskSize);
    for (const block of blocks) added.push({ cidr: formatCidr(block), owner: node });
  }
  return { ...table, leases: [...table.leases, ...added] };
}
