import type { RoutePlan } from '../routes/index.ts';
import { table } from './output.ts';

/** A readable summary of a plan for people; tools read the JSON. */
export function formatPlanTable(plan: RoutePlan): string {
  const lines: string[] = [];
  const ready = plan.nodes.filter((n) => n.networkUnavailable === false).length;
  const pending = plan.nodes.filter((n) => n.networkUnavailable === 'pending').length;
  const unavailable = plan.nodes.length - ready - pending;
  lines.push(
    `nodes: ${plan.nodes.length} (${ready} ready, ${pending} pending routes, ${unavailable} unavailable)`,
    `routes: ${plan.create.length} to create, ${plan.replace.length} to replace, ${plan.delete.length} to delete`,
  );
  if (plan.unsafe !== undefined) lines.push(`UNSAFE: ${plan.unsafe} (deletions would be withheld)`);

  const rows: string[][] = [];
  for (const op of plan.create) rows.push(['create', op.routeTableId, op.destinationCidr, `${op.node} (${op.instanceId})`, '']);
  for (const op of plan.replace) rows.push(['replace', op.routeTableId, op.destinationCidr, `${op.node} (${op.instanceId})`, op.reason]);
  for (const op of plan.delete) rows.push(['delete', op.routeTableId, op.destinationCidr, '', op.reason]);
  if (rows.length > 0) lines.push('', ...table(['ACTION', 'ROUTE TABLE', 'DESTINATION', 'TARGET NODE', 'REASON'], rows));

  const nodeRows = plan.nodes
    .filter((n) => n.patch || n.networkUnavailable !== false)
    .map((n) => [n.node, String(n.networkUnavailable), n.patch ? 'yes' : 'no', n.conflict ?? '']);
  if (nodeRows.length > 0) lines.push('', ...table(['NODE', 'NETWORK UNAVAILABLE', 'PATCH', 'CONFLICT'], nodeRows));

  const warnings = plan.warnings ?? [];
  if (warnings.length > 0) {
    lines.push('', 'warnings:');
    for (const w of warnings) lines.push(`  ${w.reason}: ${w.detail}`);
  }
  return `${lines.join('\n')}\n`;
}
