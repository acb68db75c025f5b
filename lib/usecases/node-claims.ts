/**
 * Reconcile's word to nodes about their claims, from the plan: a node whose pod CIDR or instance is
 * a conflict (lib/routes/ownership.ts) gets a Warning Event `PodCidrConflict`; a managed node not yet
 * complete and without NetworkUnavailable is marked True (in the plane's words for a node not carried yet) before
 * any route work of the run goes out, so it is never schedulable before it is routed.
 */
import { conditionText } from '../dataplane/data-plane.ts';
import type { Node } from '../nodes/node.ts';
import { networkUnavailableOf } from '../nodes/node.ts';
import type { RoutePlan } from '../routes/index.ts';
import { mapSettled } from '../util/concurrency.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile.ts';

/** The reason of the Warning event on a node whose claim is a conflict. */
export const POD_CIDR_CONFLICT_EVENT = 'PodCidrConflict';

/** core/v1 Event `message` is free text; kept short so one recurring event stays small in etcd. */
const MAX_EVENT_MESSAGE = 1000;

type ClaimDeps = Pick<ReconcileDeps, 'nodes' | 'log' | 'concurrency'>;

/** One Warning event per node with a conflict, its conflicts' details joined. */
export async function warnConflicts(plan: RoutePlan, deps: ClaimDeps): Promise<void> {
  const details = new Map<string, string[]>();
  for (const warning of plan.warnings ?? []) {
    if (warning.reason !== 'pod-cidr-conflict' || warning.node === undefined) continue;
    const list = details.get(warning.node);
    if (list) list.push(warning.detail);
    else details.set(warning.node, [warning.detail]);
  }
  const entries = [...details];
  const sent = await mapSettled(entries, deps.concurrency ?? 4, async ([node, lines]) => {
    const message = lines.join('; ');
    await deps.nodes.warn(node, POD_CIDR_CONFLICT_EVENT, message.length > MAX_EVENT_MESSAGE ? `${message.slice(0, MAX_EVENT_MESSAGE - 3)}...` : message);
  });
  sent.forEach((result, i) => {
    if (result.status === 'rejected') deps.log.log('warn', 'conflict.event-failed', { node: entries[i]?.[0], error: result.reason });
  });
}

/** Pure: the managed nodes of `plan` that are not complete (pending or unavailable) and have no NetworkUnavailable yet. */
export function unroutedNodes(plan: RoutePlan, nodes: readonly Node[]): string[] {
  const lacking = new Set(nodes.filter((node) => networkUnavailableOf(node) === null).map((node) => node.metadata.name));
  return plan.nodes.filter((status) => status.unmanaged === undefined && status.networkUnavailable !== false && lacking.has(status.node)).map((status) => status.node);
}

/**
 * Writes NetworkUnavailable=True on the nodes `unroutedNodes` names. Answers the names written, so the run's later
 * condition step does not write them again.
 */
export async function markUnrouted(plan: RoutePlan, nodes: readonly Node[], deps: ClaimDeps & Pick<ReconcileDeps, 'plane'>, report: Pick<ReconcileReport, 'conditionsPatched' | 'errors'>): Promise<Set<string>> {
  const targets = unroutedNodes(plan, nodes);
  const results = await mapSettled(targets, deps.concurrency ?? 4, async (name) => deps.nodes.setNetworkUnavailable(name, true, conditionText(deps.plane, 'pending')));
  const written = new Set<string>();
  results.forEach((result, i) => {
    const name = targets[i];
    if (name === undefined) return;
    if (result.status === 'fulfilled') {
      written.add(name);
      if (result.value === 'patched') report.conditionsPatched += 1;
      deps.log.log('info', 'action', { action: 'set-network-unavailable', node: name, value: true, reason: 'not routed yet', result: result.value });
    } else {
      report.errors.push({ node: name, step: 'condition', message: result.reason instanceof Error ? result.reason.message : String(result.reason) });
    }
  });
  return written;
}
