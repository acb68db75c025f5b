/**
 * What the route worker gives the ownership decider (lib/routes/ownership.ts) for its one node: the
 * fresh node, the nodes that may contest it, and the lease table read afresh, so the worker decides
 * ownership as reconcile does. Cheapest first: one keyed lease read per covering set; only when that
 * is not the whole answer are the sets' leases listed and the contesting nodes read by key.
 */
import { type Cidr, containsCidr, formatCidr, overlaps, tryParseCidr } from '../cidr/cidr.ts';
import type { CidrSet, Lease } from '../ipam/index.ts';
import { type Node, instanceIdOf, podCidrsOf } from '../nodes/node.ts';
import { decideOwnership } from '../routes/index.ts';
import { isNodesRoute } from '../routes/route-rules.ts';
import type { LeaseTable, Ownership, RouteTable } from '../routes/index.ts';
import { checkRouteClaim, refuse } from './route-worker-claims.ts';
import { type RouteWorkerDeps, currentNode } from './route-worker-deps.ts';
import type { RouteOp } from './route-writes.ts';

/** The ownership decider's input for one node, as the worker read it. */
export interface NodeWorld {
  /** The node first, then the nodes found naming its instance (read by key). */
  nodes: Node[];
  leaseTable: LeaseTable;
}

type WorldDeps = Pick<RouteWorkerDeps, 'cidrSets' | 'nodes' | 'clusterCidrs' | 'migrationMaskSizes'>;

const parsedCidrs = (texts: readonly string[]): Cidr[] => texts.map((text) => tryParseCidr(text)).filter((c) => c !== null);

/** The set whose range holds `cidr`, if one does. */
const setOf = (sets: readonly CidrSet[], cidr: Cidr): CidrSet | undefined =>
  sets.find((set) => {
    const range = tryParseCidr(set.clusterCidr);
    return range !== null && containsCidr(range, cidr);
  });

/** Whether `lease` is the one block a claim takes: the claim is no wider than a block and lies in it. */
function isBlockOf(cidr: Cidr, mask: number, lease: Lease | null | undefined): boolean {
  const block = lease ? tryParseCidr(lease.cidr) : null;
  return block !== null && cidr.prefix >= mask && block.prefix === mask && containsCidr(block, cidr);
}

/** Destinations inside the cluster CIDRs of active static routes to `instanceId`, other than `own`. */
function othersRoutedTo(instanceId: string | null, own: ReadonlySet<string>, tables: readonly RouteTable[], clusters: readonly Cidr[]): Cidr[] {
  if (instanceId === null) return [];
  const found = new Map<string, Cidr>();
  for (const table of tables) {
    for (const route of table.routes) {
      if (!isNodesRoute(route, instanceId) || own.has(route.destinationCidr)) continue;
      const cidr = tryParseCidr(route.destinationCidr);
      if (cidr && clusters.some((cluster) => containsCidr(cluster, cidr))) found.set(formatCidr(cidr), cidr);
    }
  }
  return [...found.values()];
}

/** Reads the ownership decider's input for `node` (see the file's comment). */
export async function readNodeWorld(node: Node, tables: readonly RouteTable[], deps: WorldDeps): Promise<NodeWorld> {
  const name = node.metadata.name;
  const claims = parsedCidrs(podCidrsOf(node));
  const own = new Set(claims.map(formatCidr));
  const others = othersRoutedTo(instanceIdOf(node), own, tables, parsedCidrs(deps.clusterCidrs));
  const sets = [...new Set([...claims, ...others].flatMap((cidr) => setOf(deps.cidrSets, cidr) ?? []))];
  // One keyed read per covering set (a set per cluster CIDR, so a few at most), side by side.
  const owned = new Map<CidrSet, Lease | null>(await Promise.all(sets.map(async (set) => [set, await set.ownedLease(name)] as const)));
  const exact = others.length === 0 && claims.every((cidr) => {
    const set = setOf(deps.cidrSets, cidr);
    return set === undefined || isBlockOf(cidr, set.nodeMaskSize, owned.get(set));
  });
  const tableOf = (leases: Lease[]): LeaseTable => ({
    leases,
    sets: deps.cidrSets,
    ...(deps.migrationMaskSizes ? { migrationMaskSizes: deps.migrationMaskSizes } : {}),
  });
  if (exact) return { nodes: [node], leaseTable: tableOf([...owned.values()].filter((lease) => lease !== null)) };

  const leases: Lease[] = [];
  for (const set of sets) leases.push(...(await set.leases()));
  // The holders of CIDRs routed to this node's instance: the decider's instance rule needs them.
  const holders = new Set<string>();
  for (const lease of leases) {
    const cidr = tryParseCidr(lease.cidr);
    if (lease.owner === null || lease.owner === name || cidr === null) continue;
    if (others.some((other) => overlaps(other, cidr))) holders.add(lease.owner);
  }
  const contenders: Node[] = [];
  for (const holder of [...holders].sort()) {
    const read = await currentNode(holder, deps);
    if (read && instanceIdOf(read) === instanceIdOf(node)) contenders.push(read);
  }
  return { nodes: [node, ...contenders], leaseTable: tableOf(leases) };
}

/** The ownership decider's answer over what the worker read (the same call the planner makes). */
export function ownershipOf(world: NodeWorld, deps: Pick<RouteWorkerDeps, 'clusterCidrs' | 'nodeSelector'>): Ownership {
  return decideOwnership({
    nodes: world.nodes,
    clusterCidrs: deps.clusterCidrs,
    leaseTable: world.leaseTable,
    ...(deps.nodeSelector ? { nodeSelector: deps.nodeSelector } : {}),
  });
}

/**
 * The node the ownership decider gives `destinationCidr` to, when the route's `instanceId` is that
 * node's; null when there is none (the delete may go ahead). No lease is keyed by CIDR, so the
 * destination's set is listed for the leases overlapping it; each holder is read by key and its
 * world read as for its own messages, so the answer is the one its sync would get.
 */
export async function ownerRoutedTo(destinationCidr: string, instanceId: string, tables: readonly RouteTable[], deps: WorldDeps & Pick<RouteWorkerDeps, 'nodeSelector'>): Promise<string | null> {
  const cidr = tryParseCidr(destinationCidr);
  const set = cidr ? setOf(deps.cidrSets, cidr) : undefined;
  if (!cidr || !set) return null;
  const holders = new Set<string>();
  for (const lease of await set.leases()) {
    const block = tryParseCidr(lease.cidr);
    if (lease.owner !== null && block !== null && overlaps(block, cidr)) holders.add(lease.owner);
  }
  const text = formatCidr(cidr);
  for (const holder of [...holders].sort()) {
    const node = await currentNode(holder, deps);
    if (!node || instanceIdOf(node) !== instanceId) continue;
    if (ownershipOf(await readNodeWorld(node, tables, deps), deps).owners.get(text) === holder) return holder;
  }
  return null;
}

/**
 * Refuses the message unless the ownership decider (over the fresh node and the lease table,
 * above) gives every destination of `ops` to its node
 * (./route-worker-claims.ts, `checkRouteClaim`).
 */
export function verifyOwned(ops: readonly RouteOp[], world: NodeWorld, deps: Pick<RouteWorkerDeps, 'clusterCidrs' | 'nodeSelector'>, what: (op: RouteOp) => string): void {
  const ownership = ownershipOf(world, deps);
  for (const op of ops) {
    const refusal = checkRouteClaim(op, ownership, world.leaseTable, deps.clusterCidrs);
    if (refusal !== null) refuse(refusal, what(op));
  }
}

/**
 * Refuses a node's sync when the ownership decider gives some pod CIDR of it to no one yet (only
 * reconcile adopts) or to another node, or finds it naming another node's instance: the node's
 * conflict is reconcile's to report, and nothing of it is routed or marked here.
 */
export function verifyNode(name: string, world: NodeWorld, deps: Pick<RouteWorkerDeps, 'clusterCidrs' | 'nodeSelector'>): void {
  const ownership = ownershipOf(world, deps);
  const conflict = ownership.conflicts.find((c) => c.node === name);
  if (conflict) refuse(conflict.reason, `sync of node ${name}${conflict.cidr === undefined ? '' : ` (pod CIDR ${conflict.cidr})`}`);
  const waiting = [...ownership.reserved].find(([, owner]) => owner === name);
  if (waiting) refuse('not-leased', `sync of node ${name} (pod CIDR ${waiting[0]})`);
}
