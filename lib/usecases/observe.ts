/**
 * Observe mode (config `writes: off`, docs/migrate.md): a reconcile run is the dry run, and its
 * drift, what podroute would change, is reported as metrics and one `observe.drift` line. The
 * counts are read off the dry run's report, the same decisions the writing run would apply.
 */
import type { Logger } from '../log.ts';
import type { ReconcileReport } from './reconcile.ts';

export interface Drift {
  /** Routes the plan would create, replace and delete (deletions the guard withholds included). */
  routesCreate: number;
  routesReplace: number;
  routesDelete: number;
  /** Route operations the run would hold back (guard, full table, young lease, backlog). */
  routesWithheld: number;
  /** Nodes whose condition or pod CIDRs the run would write. */
  nodesPatch: number;
  /** Lease writes: pod CIDRs to adopt, leases of gone nodes to release, node sync's allocations and releases. */
  leasesWrite: number;
  /** Messages the run would send to the route worker. */
  messages: number;
}

const NODE_WRITES = new Set(['patchPodCidrs', 'setNetworkUnavailable']);
const LEASE_WRITES = new Set(['allocate', 'occupy', 'release']);

/** The drift of a dry run's report; a report without `planned` (a writing run) counts the plan only. */
export function driftOf(report: ReconcileReport): Drift {
  const planned = report.planned;
  const conditions = planned ? planned.conditions.map((c) => c.node) : report.plan.nodes.filter((status) => status.patch).map((status) => status.node);
  const patched = new Set(conditions);
  let leasesWrite = (planned?.occupy.length ?? 0) + (planned?.reclaim.length ?? 0);
  for (const sync of planned?.nodeSync ?? []) {
    if (sync.actions.some((action) => NODE_WRITES.has(action.kind))) patched.add(sync.node);
    leasesWrite += sync.actions.filter((action) => LEASE_WRITES.has(action.kind)).length;
  }
  return {
    routesCreate: report.plan.create.length,
    routesReplace: report.plan.replace.length,
    routesDelete: report.plan.delete.length,
    routesWithheld: report.withheld.length,
    nodesPatch: patched.size,
    leasesWrite,
    messages: planned?.messages.length ?? 0,
  };
}

/** Metric names of the drift (namespace podroute, dimensions cluster and function). */
const DRIFT_METRICS: ReadonlyArray<[keyof Drift, string]> = [
  ['routesCreate', 'DriftRoutesCreate'],
  ['routesReplace', 'DriftRoutesReplace'],
  ['routesDelete', 'DriftRoutesDelete'],
  ['nodesPatch', 'DriftNodesPatch'],
  ['leasesWrite', 'DriftLeasesWrite'],
];

/** One `observe.drift` line and the drift gauges, every run (also 0, so a converged cluster shows). */
export function reportDrift(drift: Drift, log: Logger): void {
  log.log('info', 'observe.drift', { ...drift });
  for (const [field, metric] of DRIFT_METRICS) log.metric(metric, drift[field]);
}
