/**
 * Reconcile's upkeep of the CIDR leases, run over the sets of the run (one per cluster CIDR in
 * routes mode, one per pod range in prefixes mode): repair crash leftovers, adopt pod CIDRs nodes
 * hold without a lease (only what the ownership decider allows), release leases of nodes a keyed
 * read found gone (which ones: the lease decider, ./lease-release.ts).
 */
import { errorText } from '../errors.ts';
import { overlaps, tryParseCidr } from '../cidr/cidr.ts';
import type { Lease } from '../ipam/index.ts';
import type { Node } from '../nodes/node.ts';
import { decideOwnership, withAdopted } from '../routes/index.ts';
import type { LeaseTable } from '../routes/index.ts';
import { MASK_MISMATCH_EVENT, maskMismatchMessage, setRanges } from './pod-cidr-mask.ts';
import type { MaskMismatch } from './pod-cidr-mask.ts';
import { readPresence, type Presence } from './absence.ts';
import { decideLeaseReleases } from './lease-release.ts';
import type { KeepReason } from './lease-release.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile.ts';
import { recordRelease } from './claim-census.ts';

type LeaseDeps = Pick<ReconcileDeps, 'cidrSets' | 'nodes' | 'log' | 'now'> & { config: Pick<ReconcileDeps['config'], 'leaseGraceSeconds'> };
/** Reclaim's deps: the data plane frees a gone owner's block on the cloud side before its lease goes. */
type ReclaimDeps = LeaseDeps & Pick<ReconcileDeps, 'claimCensus'> & { plane: Pick<ReconcileDeps['plane'], 'freeDepartedBlock'> };
type LeaseReport = Pick<ReconcileReport, 'occupied' | 'errors' | 'leasesRepaired' | 'reclaimed' | 'reclaimWithheld'>;

/**
 * Adoption, before the plan: the ownership decider (lib/routes/ownership.ts) names the pod CIDRs
 * reconcile may occupy; outside a dry run they are occupied. Answers the lease lists after it and
 * the lease table to plan from (a dry run's as if adopted, as the run it stands for plans).
 */
export async function adoptPodCidrs(
  nodes: readonly Node[],
  leaseLists: Lease[][],
  mismatches: readonly MaskMismatch[],
  deps: LeaseDeps & { config: Pick<ReconcileDeps['config'], 'clusterCidrs' | 'nodeSelector' | 'migrationMaskSizes'> },
  report: LeaseReport,
  dryRun: boolean,
): Promise<{ leaseLists: Lease[][]; leaseTable: LeaseTable; adoptable: ReadonlyArray<{ node: string; cidr: string }> }> {
  const { config } = deps;
  const tableOf = (lists: readonly Lease[][]): LeaseTable => ({
    leases: lists.flat(),
    sets: deps.cidrSets,
    ...(config.migrationMaskSizes ? { migrationMaskSizes: config.migrationMaskSizes } : {}),
  });
  const selector = config.nodeSelector ? { nodeSelector: config.nodeSelector } : {};
  const { adoptable } = decideOwnership({ nodes, clusterCidrs: config.clusterCidrs, leaseTable: tableOf(leaseLists), ...selector });
  if (dryRun) return { leaseLists, leaseTable: withAdopted(tableOf(leaseLists), adoptable), adoptable };
  const after = await occupyUnleased(adoptable, leaseLists, mismatches, deps, report);
  return { leaseLists: after, leaseTable: tableOf(after), adoptable };
}

/**
 * Occupies the pod CIDRs the ownership decider (lib/routes/ownership.ts) found adoptable: unleased,
 * no lease overlapping them, of the node mask or a migration mask (adopted clusters, a restored
 * table). A CIDR of another size than the set's blocks is held as every block it overlaps, for its
 * node, and the node gets a `PodCidrMaskMismatch` event when that happens. Answers the lease lists
 * with every set that took something listed again, so the route plan sees the new leases.
 */
export async function occupyUnleased(
  adoptable: ReadonlyArray<{ node: string; cidr: string }>,
  leaseLists: Lease[][],
  mismatches: readonly MaskMismatch[],
  deps: LeaseDeps,
  report: LeaseReport,
): Promise<Lease[][]> {
  const touched = new Set<number>();
  const ranges = setRanges(deps.cidrSets);
  for (const { node, cidr: text } of adoptable) {
    const cidr = tryParseCidr(text);
    const held = cidr ? ranges.find((r) => r.range.family === cidr.family && overlaps(r.range, cidr)) : undefined;
    const i = held ? deps.cidrSets.indexOf(held.set) : -1;
    const set = deps.cidrSets[i];
    if (!set) continue;
    try {
      await set.occupy(text, node);
      touched.add(i);
      report.occupied += 1;
      deps.log.log('info', 'action', { action: 'occupy-cidr', cidr: text, node });
    } catch (error) {
      report.errors.push({ node, step: 'occupy', message: errorText(error) });
      continue;
    }
    const mismatch = mismatches.find((m) => m.set === set && m.node === node && m.cidr === text);
    if (mismatch) await deps.nodes.warn(node, MASK_MISMATCH_EVENT, maskMismatchMessage(mismatch)).catch(() => undefined);
  }
  const lists = [...leaseLists];
  for (const i of touched) {
    const set = deps.cidrSets[i];
    if (!set) continue;
    try {
      lists[i] = await set.leases();
    } catch (error) {
      report.errors.push({ step: 'occupy', message: errorText(error) });
    }
  }
  return lists;
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

/** Pure: the lease decider's verdicts on one set's leases, at the run's time and grace; the listed names are built once for all sets. */
function reclaimVerdicts(listed: { nodes: readonly Node[]; listedNames: ReadonlySet<string> }, leases: readonly Lease[], presence: ReadonlyMap<string, Presence>, deps: Pick<LeaseDeps, 'now' | 'config'>, delegated: readonly string[]) {
  return decideLeaseReleases({ leases, listed: listed.nodes, listedNames: listed.listedNames, presence, now: deps.now(), graceMs: deps.config.leaseGraceSeconds * 1000, delegated });
}

/** What `reclaimOrphans` would release (a dry run): the leases the lease decider lets go, in set order. */
export function reclaimable(nodes: readonly Node[], leaseLists: readonly Lease[][], presence: ReadonlyMap<string, Presence>, deps: Pick<LeaseDeps, 'now' | 'config'>, delegated: readonly string[] = []): Array<{ cidr: string; owner: string }> {
  const listed = { nodes, listedNames: new Set(nodes.map((node) => node.metadata.name)) };
  return leaseLists.flatMap((leases) => reclaimVerdicts(listed, leases, presence, deps, delegated).flatMap((v) => (v.release ? [{ cidr: v.lease.cidr, owner: v.lease.owner }] : [])));
}

/**
 * Releases the leases the lease decider (./lease-release.ts) lets go: owners a keyed read found
 * gone (404, `presence` from ./absence.ts readPresence), past the grace period. A listing that
 * lacks the owner is no proof: an owner that reads as present (or could not be read) keeps its
 * lease, and counts as withheld. Leases taken at admission for nodes that never got stored go
 * this way too. A lease goes only once the data plane has let go of its block
 * (`DataPlane.freeDepartedBlock`); one it still holds stays, and the next run asks again.
 */
export async function reclaimOrphans(
  nodes: Node[],
  leaseLists: Lease[][],
  presence: ReadonlyMap<string, Presence>,
  deps: ReclaimDeps,
  report: LeaseReport,
  delegated: readonly string[] = [],
): Promise<void> {
  const listedNames = new Set(nodes.map((node) => node.metadata.name));
  for (const [i, set] of deps.cidrSets.entries()) {
    const verdicts = reclaimVerdicts({ nodes, listedNames }, leaseLists[i] ?? [], presence, deps, delegated);
    for (const verdict of verdicts) {
      const { lease } = verdict;
      if (!verdict.release) {
        // A young lease of an unlisted owner is a node not stored yet: nothing to say.
        if (verdict.why !== 'young') keptReport(lease, verdict.why, deps, report);
        continue;
      }
      try {
        // Re-read by key right before any unassign: a node re-joined under the name since the run's read keeps its block.
        const stillGone = async () => (await readPresence([lease.owner], deps.nodes, 1)).get(lease.owner) === 'absent';
        const freed = await deps.plane.freeDepartedBlock(lease.cidr, lease.owner, stillGone);
        if (!freed.release) {
          deps.log.log('warn', 'reclaim.kept', { cidr: lease.cidr, owner: lease.owner, why: freed.why });
          continue;
        }
        if (freed.unassignedFrom !== undefined) {
          deps.log.log('info', 'action', { action: 'unassign-prefix', cidr: lease.cidr, node: lease.owner, networkInterfaceId: freed.unassignedFrom });
        }
        // Told before the release (this run's record came before it): keyed admissions pause.
        await recordRelease(deps.claimCensus, lease.owner, lease.cidr, deps.now());
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

const KEPT_BECAUSE: Record<Exclude<KeepReason, 'young'>, string> = {
  'node-exists': 'its node exists (the listing lacked it)',
  'node-unreadable': 'its node could not be read',
  'still-delegated': 'its prefix is still delegated to an interface',
  'block-in-use': 'a live node holds a pod CIDR inside it',
};

/** Tells a kept lease: withheld when the keyed read did not confirm the listing; an error when it failed. */
function keptReport(lease: Lease & { owner: string }, reason: Exclude<KeepReason, 'young'>, deps: LeaseDeps, report: LeaseReport): void {
  const why = KEPT_BECAUSE[reason];
  if (reason === 'node-exists' || reason === 'node-unreadable') report.reclaimWithheld += 1;
  if (reason === 'node-unreadable') report.errors.push({ node: lease.owner, step: 'reclaim', message: why });
  deps.log.log('warn', 'reclaim.kept', { cidr: lease.cidr, owner: lease.owner, why });
}
