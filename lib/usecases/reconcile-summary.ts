/**
 * What a reconcile run tells when it ends: the one `reconcile.summary` log line and the gauges
 * emitted every run (also 0, so alarms and the dashboard see a value each tick), and the count of
 * nodes blocked too long that feeds the NodesBlocked gauge.
 */
import type { Node } from '../nodes/node.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile.ts';

export function summarize(report: ReconcileReport, deps: Pick<ReconcileDeps, 'log' | 'now'>, started: number): void {
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
