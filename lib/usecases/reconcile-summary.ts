/**
 * What a reconcile run tells when it ends: the one `reconcile.summary` log line and the gauges
 * emitted every run (also 0, so alarms and the dashboard see a value each tick), and the count of
 * nodes blocked too long that feeds the NodesBlocked gauge.
 */
import type { Node } from '../nodes/node.ts';
import type { RouteTable } from '../routes/index.ts';
import { DEFAULT_ROUTE_QUOTA, fullestTable, routeTableUsage } from '../routes/route-table-headroom.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile.ts';

/**
 * Ends a run that got as far as a plan (a refused run throws before): its summary line and gauges.
 * `ReconcileCompleted` (1 each such run) is the heartbeat: serverless.yml's ReconcileHeartbeatAlarm
 * treats its absence as breaching, so a schedule that stopped, throttled or always-failing runs page.
 * `RouteTableHeadroom` is each table's use of the routes-per-table quota (config ROUTE_QUOTA), per
 * table (dimension RouteTableId, for the dashboard) and for the fullest table (the alarm's stream:
 * an alarm names every dimension, and route table ids are not known to the template).
 */
export function summarize(report: ReconcileReport, deps: Pick<ReconcileDeps, 'log' | 'now' | 'config'>, started: number, tables: readonly RouteTable[]): void {
  const { plan } = report;
  deps.log.log('info', 'reconcile.summary', {
    nodes: report.nodes,
    routeTables: report.routeTables,
    nodesReady: report.nodesReady,
    nodesBlocked: report.nodesBlocked,
    create: plan.create.length,
    replace: plan.replace.length,
    delete: plan.delete.length,
    unsafe: plan.unsafe ?? null,
    messagesSent: report.messagesSent,
    messagesDeferred: report.messagesDeferred,
    conditionsPatched: report.conditionsPatched,
    allocated: report.allocated.length,
    occupied: report.occupied,
    reclaimed: report.reclaimed.length,
    errors: report.errors.length,
    ms: deps.now() - started,
  });
  // Gauges, every run (also 0), so alarms and the dashboard see a value each tick.
  deps.log.metric('ReconcileErrors', report.errors.length);
  deps.log.metric('NodesTotal', report.nodes);
  deps.log.metric('NodesReady', report.nodesReady);
  deps.log.metric('NodesBlocked', report.nodesBlocked);
  deps.log.metric('RoutesPending', plan.create.length + plan.replace.length);
  deps.log.metric('DeletionsWithheld', report.deletionsWithheld);
  const quota = deps.config.routeQuota ?? DEFAULT_ROUTE_QUOTA;
  for (const table of tables) {
    deps.log.metric('RouteTableHeadroom', routeTableUsage(table, quota).percent, 'Percent', { RouteTableId: table.routeTableId });
  }
  const fullest = fullestTable(tables, quota);
  if (fullest !== null) deps.log.metric('RouteTableHeadroom', fullest.percent, 'Percent');
  deps.log.metric('ReconcileCompleted', 1);
}

/**
 * Nodes whose NetworkUnavailable condition has been True for longer than `thresholdMs` at `now`,
 * by the condition's lastTransitionTime (a condition without a readable time is not counted).
 */
export function countBlocked(nodes: readonly Node[], now: number, thresholdMs: number): number {
  let blocked = 0;
  for (const node of nodes) {
    const condition = node.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
    if (condition?.status !== 'True' || !condition.lastTransitionTime) continue;
    const since = Date.parse(condition.lastTransitionTime);
    if (Number.isFinite(since) && now - since > thresholdMs) blocked += 1;
  }
  return blocked;
}
