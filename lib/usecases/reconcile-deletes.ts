/**
 * Which of a reconcile plan's route deletions go out this run. Each planned deletion is sorted by
 * what backs it (./absence.ts sortRouteDeletes): confirmed ones (blackholes, routes of leases whose
 * owner read 404) go; ones whose lease is young or whose node a keyed read found go nowhere; the
 * unconfirmed rest are judged by the mass-deletion guard over the window of runs
 * (lib/routes/deletion-guard.ts), whose state the run reads and, when it lets deletions go, writes
 * back conditionally: two overlapping runs cannot both spend the same share.
 */
import type { Lease } from '../ipam/index.ts';
import type { Logger } from '../log.ts';
import type { Node } from '../nodes/node.ts';
import { DEFAULT_GUARD_WINDOW_MS, EMPTY_WINDOW, judgeDeletions } from '../routes/deletion-guard.ts';
import type { GuardWindow } from '../routes/deletion-guard.ts';
import { deletionKey } from '../routes/route-plan.ts';
import type { DeleteOp, RoutePlan } from '../routes/route-plan.ts';
import { sortRouteDeletes } from './absence.ts';
import type { Presence } from './absence.ts';
import type { DeletionWindowStore } from './ports.ts';

export interface DeletesDeps {
  config: { maxDeleteShare: number; minDeletesForGuard: number; leaseGraceSeconds: number };
  /** The guard's window; without one each run is judged alone. */
  deletionWindow?: DeletionWindowStore;
  log: Logger;
  now: () => number;
}

export interface DeletesInput {
  plan: RoutePlan;
  /** The planner's count of live routes (route-plan.ts planRoutesCounted). */
  live: number;
  nodes: readonly Node[];
  leases: readonly Lease[];
  presence: ReadonlyMap<string, Presence>;
  /** A dry run reads the window but never writes it. */
  dryRun: boolean;
}

/**
 * Decides `plan.unsafe` (the windowed verdict: the planner leaves it to this guard), drops the held deletions from `plan.delete` (the
 * unconfirmed ones stay listed when withheld, as contract 1 wants), and answers the deletions to
 * send and how many the guard withheld.
 */
export async function settleDeletes(input: DeletesInput, deps: DeletesDeps): Promise<{ send: DeleteOp[]; withheld: number }> {
  const going = await judgeUnconfirmed(input, deps);
  // In plan order (tables, then destinations), as the planner sorted them.
  const send = new Set(going.send);
  return { send: input.plan.delete.filter((op) => send.has(op)), withheld: going.withheld };
}

async function judgeUnconfirmed(input: DeletesInput, deps: DeletesDeps): Promise<{ send: DeleteOp[]; withheld: number }> {
  const { plan } = input;
  const { log } = deps;
  const now = deps.now();
  const sorted = sortRouteDeletes(plan.delete, input.nodes, input.leases, input.presence, now, deps.config.leaseGraceSeconds * 1000);
  const held = new Set(sorted.held.map(({ op }) => op));
  if (held.size > 0) {
    plan.delete = plan.delete.filter((op) => !held.has(op));
    const routes = (why: string) => sorted.held.filter((h) => h.why === why).map(({ op }) => deletionKey(op));
    if (routes('lease-young').length > 0) log.log('info', 'reconcile.deletes-deferred', { reason: 'lease of a node not stored yet', routes: routes('lease-young') });
    for (const why of ['node-exists', 'node-unreadable'] as const) {
      if (routes(why).length > 0) log.log('warn', 'reconcile.deletes-held', { reason: why === 'node-exists' ? 'the node exists (the listing lacked it)' : 'the node could not be read', routes: routes(why) });
    }
  }
  if (sorted.unconfirmed.length === 0) return { send: sorted.confirmed, withheld: 0 };

  let stored: { window: GuardWindow; version: number };
  try {
    stored = deps.deletionWindow ? await deps.deletionWindow.read() : { window: EMPTY_WINDOW, version: 0 };
  } catch (error) {
    plan.unsafe = "the mass-deletion guard's window could not be read; refusing to delete unconfirmed routes";
    log.log('error', 'reconcile.guard-window-unreadable', { error });
    return { send: sorted.confirmed, withheld: sorted.unconfirmed.length };
  }
  const verdict = judgeDeletions({
    live: input.live,
    unconfirmed: sorted.unconfirmed.map(deletionKey),
    noNodes: input.nodes.length === 0,
    window: stored.window,
    now,
    limits: { ...deps.config, windowMs: deps.deletionWindow ? DEFAULT_GUARD_WINDOW_MS : 0 },
  });
  if (verdict.unsafe !== null) {
    plan.unsafe = verdict.unsafe;
    return { send: sorted.confirmed, withheld: sorted.unconfirmed.length };
  }
  if (input.dryRun || !deps.deletionWindow) return { send: [...sorted.confirmed, ...sorted.unconfirmed], withheld: 0 };
  // Spent only once it is written: a run that lost the write to an overlapping one (or could not
  // write) withholds them, says so, and they wait a tick.
  const lost = await deps.deletionWindow.write(verdict.window, stored.version).then(
    (written) => (written ? null : 'busy'),
    (error: unknown) => {
      log.log('error', 'reconcile.guard-window-unwritable', { error });
      return 'unwritable';
    },
  );
  if (lost !== null) {
    plan.unsafe =
      lost === 'busy'
        ? "guard window busy: an overlapping run wrote the mass-deletion guard's window first; unconfirmed route deletions wait for the next run"
        : "guard window unwritable: the mass-deletion guard's window could not be written; refusing to delete unconfirmed routes";
    return { send: sorted.confirmed, withheld: sorted.unconfirmed.length };
  }
  return { send: [...sorted.confirmed, ...sorted.unconfirmed], withheld: 0 };
}
