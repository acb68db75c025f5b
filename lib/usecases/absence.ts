/**
 * Absence confirmed before anything is freed: a listing that lacks a node is a claim, not proof, so
 * the owners of unlisted leases are read by key, and only a 404 past the grace lets a lease go
 * (./lease-release.ts) or a `no-owner` route be deleted (lib/routes/delete-backing.ts); the rest is
 * the mass-deletion guard's (lib/routes/deletion-guard.ts). Also `refuseWorld`: when a run stops.
 */
import { errorText } from '../errors.ts';
import type { Lease } from '../ipam/index.ts';
import type { Node } from '../nodes/node.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import { strayPodCidrs, strayPodCidrsMessage } from '../nodes/pod-cidr-scope.ts';
import type { StrayPodCidrs } from '../nodes/pod-cidr-scope.ts';
import { isSuspect } from '../routes/delete-backing.ts';
import type { Presence } from '../routes/delete-backing.ts';
import { mapSettled } from '../util/concurrency.ts';
import { NodeNotFoundError } from './port-errors.ts';
import type { NodeSource } from './ports.ts';

export { isSuspect, pastGrace } from '../routes/delete-backing.ts';
export type { Presence } from '../routes/delete-backing.ts';

/** The owners, once each, of the leases whose absence a keyed read must confirm. */
export function absenceSuspects(nodes: readonly Node[], leases: readonly Lease[], now: number, graceMs: number): string[] {
  const listed = new Set(nodes.map((node) => node.metadata.name));
  return [...new Set(leases.filter((lease) => isSuspect(lease, listed, now, graceMs)).map((lease) => lease.owner))].sort();
}

/** One keyed read per owner, `concurrency` at a time: 404 is `absent`, a node `present`, any other answer `unreadable`. */
export async function readPresence(owners: readonly string[], nodes: Pick<NodeSource, 'getNode'>, concurrency: number): Promise<Map<string, Presence>> {
  const results = await mapSettled(owners, concurrency, (owner) => nodes.getNode(owner));
  const presence = new Map<string, Presence>();
  results.forEach((result, i) => {
    const owner = owners[i];
    if (owner === undefined) return;
    if (result.status === 'fulfilled') presence.set(owner, 'present');
    else presence.set(owner, result.reason instanceof NodeNotFoundError ? 'absent' : 'unreadable');
  });
  return presence;
}

/**
 * What `refuseWorld` judges beyond the inputs' sizes: managed nodes' pod CIDRs that all lie outside
 * the cluster CIDRs, and, when the node listing is empty while leases exist, keyed reads of the
 * leases' owners (an empty listing is no proof).
 */
export async function worldChecks(
  nodes: readonly Node[],
  leases: readonly Lease[],
  config: { clusterCidrs: readonly string[]; nodeSelector?: LabelSelector | undefined },
  source: Pick<NodeSource, 'getNode'>,
  concurrency: number,
): Promise<Pick<WorldReads, 'strayPodCidrs' | 'clusterCidrs' | 'leaseOwners'>> {
  const leaseOwners = await readLeaseOwners(nodes.length, leases, source, concurrency);
  return {
    strayPodCidrs: strayPodCidrs(nodes, config.clusterCidrs, config.nodeSelector),
    clusterCidrs: config.clusterCidrs,
    ...(leaseOwners === undefined ? {} : { leaseOwners }),
  };
}

/**
 * The keyed reads that confirm an empty node listing: when no node is listed while leases exist,
 * every lease's owner is read by key; the counts of those found present or unreadable. Undefined
 * when the listing is not empty or no lease names an owner.
 */
async function readLeaseOwners(
  listed: number,
  leases: readonly Lease[],
  nodes: Pick<NodeSource, 'getNode'>,
  concurrency: number,
): Promise<{ present: number; unreadable: number } | undefined> {
  const owners = [...new Set(leases.flatMap((lease) => (lease.owner === null ? [] : [lease.owner])))].sort();
  if (listed > 0 || owners.length === 0) return undefined;
  const answers = [...(await readPresence(owners, nodes, concurrency)).values()];
  return { present: answers.filter((a) => a === 'present').length, unreadable: answers.filter((a) => a === 'unreadable').length };
}

/** An input of the run as read: its size, or why it could not be read. */
export type InputRead = { ok: true; count: number } | { ok: false; error: unknown };

export interface WorldReads {
  /** The data plane needs the cluster's tables: a listing that finds none refuses the run. */
  tablesRequired: boolean;
  /** The tag the cluster's tables carry, for the message. */
  clusterTag: string;
  /** The cluster's tables; null: the data plane reads none. */
  tables: InputRead | null;
  nodes: InputRead;
  /** Leases over every set of the run. */
  leases: InputRead;
  /** Managed nodes carry pod CIDRs and none lies in `clusterCidrs` (lib/nodes/pod-cidr-scope.ts); absent or null: not so. */
  strayPodCidrs?: StrayPodCidrs | null;
  /** The configured cluster CIDRs, for the message. */
  clusterCidrs?: readonly string[];
  /**
   * The node listing empty while leases exist: how many of the leases' owners a keyed read found
   * present or could not read. Absent: not read (the listing alone, which is no proof).
   */
  leaseOwners?: { present: number; unreadable: number };
}

/**
 * Why the run must stop before it writes anything, or null. An input that could not be read, no
 * route table carrying the cluster tag for a plane that needs tables (upstream's AWS provider refuses to run
 * without one: a mistyped CLUSTER_NAME must not mark every node unavailable), managed nodes whose
 * pod CIDRs all lie outside the cluster CIDRs (a mistyped CLUSTER_CIDRS: every node would be
 * marked unavailable), and a node listing that is empty while leases say nodes exist, unless a
 * keyed read of every lease's owner answered 404 (a scale to zero whose node-left checks were
 * lost: the keyed reads confirm the absence, and reclaim frees the leases). Leases empty while
 * nodes exist is no reason: reconcile occupies the nodes' pod CIDRs again (a restored table).
 */
export function refuseWorld(world: WorldReads): string | null {
  const unread = (
    [['route tables', world.tables], ['nodes', world.nodes], ['CIDR leases', world.leases]] as const
  ).find(([, read]) => read !== null && !read.ok);
  if (unread) {
    const [what, read] = unread;
    return `could not read the ${what} (${read !== null && !read.ok ? errorText(read.error) : '?'}); nothing was changed`;
  }
  if (world.tablesRequired && world.tables?.ok && world.tables.count === 0) {
    return `no route table carries the tag ${world.clusterTag}; nothing was changed (check CLUSTER_NAME and the tables' tags)`;
  }
  if (world.strayPodCidrs) return `${strayPodCidrsMessage(world.strayPodCidrs, world.clusterCidrs ?? [], 'CLUSTER_CIDRS')}; nothing was changed`;
  if (world.nodes.ok && world.nodes.count === 0 && world.leases.ok && world.leases.count > 0) {
    const owners = world.leaseOwners;
    const empty = `the node listing is empty while ${world.leases.count} CIDR leases exist`;
    if (owners === undefined) return `${empty}; nothing was changed`;
    if (owners.present > 0) return `${empty} and a keyed read found ${owners.present} of their owners (the listing is wrong); nothing was changed`;
    if (owners.unreadable > 0) return `${empty} and ${owners.unreadable} of their owners could not be read; nothing was changed`;
  }
  return null;
}

