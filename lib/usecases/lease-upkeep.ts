/**
 * Reconcile's upkeep of the CIDR leases, run over the sets of the run (one per cluster CIDR in
 * routes mode, one per pod range in prefixes mode): repair crash leftovers, occupy pod CIDRs nodes
 * hold without a lease, release leases of nodes a keyed read found gone.
 */
import { formatCidr, overlaps, tryParseCidr } from '../cidr/cidr.ts';
import type { Lease } from '../ipam/index.ts';
import { podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { MASK_MISMATCH_EVENT, blockInUse, heldByLeases, holds, maskMismatchMessage } from './pod-cidr-mask.ts';
import type { MaskMismatch } from './pod-cidr-mask.ts';
import { isSuspect } from './absence.ts';
import type { Presence } from './absence.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile.ts';

type LeaseDeps = Pick<ReconcileDeps, 'cidrSets' | 'nodes' | 'log' | 'now'> & { config: Pick<ReconcileDeps['config'], 'leaseGraceSeconds'> };
type LeaseReport = Pick<ReconcileReport, 'occupied' | 'errors' | 'leasesRepaired' | 'reclaimed' | 'reclaimWithheld'>;

/**
 * Occupies the pod CIDRs nodes hold that the set has no lease for (adopted clusters, a restored
 * table). A CIDR of another size than the set's blocks is held as every block it overlaps, for its
 * node, and the node gets a `PodCidrMaskMismatch` event when that happens.
 */
export async function occupyUnleased(
  nodes: Node[],
  leaseLists: Lease[][],
  mismatches: readonly MaskMismatch[],
  deps: LeaseDeps,
  report: LeaseReport,
): Promise<void> {
  for (const [i, set] of deps.cidrSets.entries()) {
    const leases = leaseLists[i] ?? [];
    const leased = new Set(leases.map((lease) => lease.cidr));
    for (const node of nodes) {
      for (const text of podCidrsOf(node)) {
        const cidr = tryParseCidr(text);
        if (!cidr || !holds(set, cidr)) continue;
        const mismatch = mismatches.find((m) => m.set === set && m.node === node.metadata.name && m.cidr === formatCidr(cidr));
        if (mismatch ? heldByLeases(set, cidr, leases) : leased.has(formatCidr(cidr))) continue;
        try {
          await set.occupy(formatCidr(cidr), node.metadata.name);
          report.occupied += 1;
          deps.log.log('info', 'action', { action: 'occupy-cidr', cidr: formatCidr(cidr), node: node.metadata.name });
        } catch (error) {
          report.errors.push({ node: node.metadata.name, step: 'occupy', message: errorText(error) });
          continue;
        }
        if (mismatch) await deps.nodes.warn(node.metadata.name, MASK_MISMATCH_EVENT, maskMismatchMessage(mismatch)).catch(() => undefined);
      }
    }
  }
}

/** Links blocks that lost their owner record (see lib/ipam/claim-protocol.ts) to their owners. */
export async function repairLeases(leaseLists: Lease[][], deps: LeaseDeps, report: LeaseReport): Promise<void> {
  for (const [i, set] of deps.cidrSets.entries()) {
    try {
      const { records } = await set.repair(leaseLists[i]);
      report.leasesRepaired.push(...records);
      for (const owner of records) deps.log.log('warn', 'action', { action: 'repair-lease', node: owner, set: set.clusterCidr });
    } catch (error) {
      report.errors.push({ step: 'repair', message: errorText(error) });
    }
  }
}

/**
 * Releases leases whose owner a keyed read found gone (404, `presence` from ./absence.ts
 * readPresence), once they are older than the grace period (a node being created is not stored
 * yet). A listing that lacks the owner is no proof: an owner that reads as present (or could not be
 * read) keeps its lease. A confirmed absence is no bad listing either, so no guard holds these back:
 * leases taken at admission for nodes that never got stored go this way too.
 */
export async function reclaimOrphans(
  nodes: Node[],
  leaseLists: Lease[][],
  presence: ReadonlyMap<string, Presence>,
  deps: LeaseDeps,
  report: LeaseReport,
  delegated: readonly string[] = [],
): Promise<void> {
  const live = new Set(nodes.map((node) => node.metadata.name));
  const now = deps.now();
  const graceMs = deps.config.leaseGraceSeconds * 1000;
  for (const [i, set] of deps.cidrSets.entries()) {
    const leases = leaseLists[i] ?? [];
    const expired = leases.filter((lease) => isSuspect(lease, live, now, graceMs));
    // A block stays while a live node's (smaller) pod CIDR lies in it (pod-cidr-mask.ts blockInUse).
    // Prefixes mode: a block still delegated to an interface the run read stays too (its instance
    // may run on after its Node was deleted; EC2 would refuse the block to anyone else).
    const stillDelegated = (lease: Lease) => delegated.some((prefix) => overlapsText(prefix, lease.cidr));
    for (const lease of expired) {
      const why = keptBecause(lease, presence.get(lease.owner) ?? 'unreadable', nodes, stillDelegated(lease));
      if (why !== null) {
        // Withheld: the listing said gone, the keyed read did not.
        if (presence.get(lease.owner) !== 'absent') report.reclaimWithheld += 1;
        if ((presence.get(lease.owner) ?? 'unreadable') === 'unreadable') report.errors.push({ node: lease.owner, step: 'reclaim', message: why });
        deps.log.log('warn', 'reclaim.kept', { cidr: lease.cidr, owner: lease.owner, why });
        continue;
      }
      try {
        // Only the lease as listed: if its node re-joined since (and renewed it), it stays.
        if (!(await set.releaseLease(lease))) {
          deps.log.log('info', 'reclaim.skipped', { cidr: lease.cidr, node: lease.owner, reason: 'lease changed since listed' });
          continue;
        }
        report.reclaimed.push({ cidr: lease.cidr, owner: lease.owner });
        deps.log.log('info', 'action', { action: 'release-cidr', cidr: lease.cidr, node: lease.owner });
      } catch (error) {
        report.errors.push({ step: 'reclaim', message: errorText(error) });
      }
    }
  }
}

/** Why an expired lease of an unlisted owner stays, or null when it goes. */
function keptBecause(lease: Lease, presence: Presence, nodes: readonly Node[], delegated: boolean): string | null {
  if (presence === 'present') return 'its node exists (the listing lacked it)';
  if (presence === 'unreadable') return 'its node could not be read';
  if (delegated) return 'its prefix is still delegated to an interface';
  if (blockInUse(lease.cidr, nodes)) return 'a live node holds a pod CIDR inside it';
  return null;
}

function overlapsText(a: string, b: string): boolean {
  const [x, y] = [tryParseCidr(a), tryParseCidr(b)];
  return x !== null && y !== null && overlaps(x, y);
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
