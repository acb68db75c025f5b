/**
 * What `reconcile --dry-run` prints: the plan (the same fields as `podroute plan`), then what the
 * deployed run would do with it: the messages it would send, the operations it would withhold and
 * why, node sync's decided actions per node, the pod CIDRs it would adopt, the NetworkUnavailable
 * conditions it would write and the leases it would release.
 */
import type { ReconcileReport } from '../usecases/reconcile.ts';
import { table } from './output.ts';
import { formatPlanTable } from './plan-table.ts';

/** The JSON / YAML document of a dry run. */
export function dryRunDocument(report: ReconcileReport) {
  return {
    ...report.plan,
    send: report.planned?.messages ?? [],
    withheld: report.withheld,
    nodeSync: report.planned?.nodeSync ?? [],
    occupy: report.planned?.occupy ?? [],
    conditions: report.planned?.conditions ?? [],
    reclaim: report.planned?.reclaim ?? [],
    errors: report.errors,
  };
}

/** The plan's table, then the sends, the withheld operations and the node syncs. */
export function dryRunTable(report: ReconcileReport): string {
  const lines = [formatPlanTable(report.plan).trimEnd()];
  const doc = dryRunDocument(report);
  lines.push('', `would send ${doc.send.length} message(s), withhold ${doc.withheld.length} route operation(s)`);
  if (doc.withheld.length > 0) lines.push('', ...table(['WITHHELD', 'ROUTE TABLE', 'DESTINATION', 'WHY'], doc.withheld.map((w) => [w.kind, w.routeTableId, w.destinationCidr, w.why])));
  const syncRows = doc.nodeSync.map((p) => [p.node, p.outcome, [...p.actions.map((a) => a.kind), ...(p.ec2Picks ?? []).map((r) => `ec2-pick ${r}`)].join(', ')]);
  if (syncRows.length > 0) lines.push('', ...table(['NODE SYNC', 'OUTCOME', 'ACTIONS'], syncRows));
  if (doc.occupy.length > 0) lines.push('', ...table(['ADOPT', 'CIDR'], doc.occupy.map((o) => [o.node, o.cidr])));
  if (doc.conditions.length > 0) lines.push('', ...table(['CONDITION', 'NETWORKUNAVAILABLE'], doc.conditions.map((c) => [c.node, String(c.networkUnavailable)])));
  if (doc.reclaim.length > 0) lines.push('', ...table(['RELEASE', 'OWNER'], doc.reclaim.map((r) => [r.cidr, r.owner])));
  for (const error of doc.errors) lines.push(`error: ${error.step}${error.node ? ` ${error.node}` : ''}: ${error.message}`);
  return `${lines.join('\n')}\n`;
}
