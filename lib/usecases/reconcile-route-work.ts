/**
 * Reconcile's side of the route decider (lib/routes/route-work.ts): the reads and writes the
 * decision needs, with the decider run again on what they answered, and the sending of its answer.
 * The guard's window is read only when unconfirmed deletions wait for it, and when the decider lets
 * them go it is written back conditionally before they are sent: two overlapping runs cannot both
 * spend the same share. The queue's backlog is read only when there is route work to send.
 */
import type { Logger } from '../log.ts';
import { toMessages } from '../messages/work-message.ts';
import type { WorkMessage } from '../messages/work-message.ts';
import { DEFAULT_GUARD_WINDOW_MS, EMPTY_WINDOW } from '../routes/deletion-guard.ts';
import { deletionKey } from '../routes/route-plan.ts';
import type { RoutePlan } from '../routes/route-plan.ts';
import { decideRouteWork } from '../routes/route-work.ts';
import type { GuardWindowState, RouteWork, RouteWorkFacts } from '../routes/route-work.ts';
import type { DeletionWindowStore, RouteTables, WorkQueue } from './ports.ts';

export interface RouteWorkDeps {
  /** The guard's window; without one each run is judged alone. */
  deletionWindow?: DeletionWindowStore;
  log: Logger;
}

export interface PlannedRoutes {
  plan: RoutePlan;
  /** The planner's count of live routes (lib/routes/route-plan.ts planRoutesCounted). */
  live: number;
}

/**
 * The route work of `planned`, decided on `facts` with the guard's window read (and, unless this is a
 * dry run, written) as the decision needs it. Answers the decision and the facts it was made on, so
 * the caller can run the decider again with one more (the queue's backlog).
 */
export async function settleRouteWork(
  planned: PlannedRoutes,
  facts: Omit<RouteWorkFacts, 'guard'>,
  deps: RouteWorkDeps,
  dryRun: boolean,
): Promise<{ work: RouteWork; facts: RouteWorkFacts }> {
  const store = deps.deletionWindow;
  let decided: RouteWorkFacts = { ...facts, guard: store ? { state: 'unread' } : { state: 'read', window: EMPTY_WINDOW, windowMs: 0 } };
  let work = decideRouteWork(planned.plan, planned.live, decided);
  logHeld(work, deps.log);
  let version = 0;
  if (store && work.needsGuardWindow) {
    const read = await store.read().then(
      (stored) => {
        version = stored.version;
        return { state: 'read', window: stored.window, windowMs: DEFAULT_GUARD_WINDOW_MS } as const;
      },
      (error: unknown) => {
        deps.log.log('error', 'reconcile.guard-window-unreadable', { error });
        return { state: 'unreadable' } as const;
      },
    );
    decided = { ...decided, guard: read };
    work = decideRouteWork(planned.plan, planned.live, decided);
  }
  if (store && !dryRun && work.guardWindow !== null) {
    const lost = await writeWindow(store, work.guardWindow, version, deps.log);
    if (lost !== null) {
      decided = { ...decided, guard: lost };
      work = decideRouteWork(planned.plan, planned.live, decided);
    }
  }
  return { work, facts: decided };
}

/** Spends the run's share: null once written, or why it was not. */
async function writeWindow(store: DeletionWindowStore, window: NonNullable<RouteWork['guardWindow']>, version: number, log: Logger): Promise<GuardWindowState | null> {
  return store.write(window, version).then(
    (written) => (written ? null : { state: 'busy' as const }),
    (error: unknown) => {
      log.log('error', 'reconcile.guard-window-unwritable', { error });
      return { state: 'unwritable' as const };
    },
  );
}

function logHeld(work: RouteWork, log: Logger): void {
  const routes = (why: string) => work.held.filter((h) => h.why === why).map(({ op }) => deletionKey(op));
  if (routes('lease-young').length > 0) log.log('info', 'reconcile.deletes-deferred', { reason: 'lease of a node not stored yet', routes: routes('lease-young') });
  for (const why of ['node-exists', 'node-unreadable'] as const) {
    if (routes(why).length > 0) log.log('warn', 'reconcile.deletes-held', { reason: why === 'node-exists' ? 'the node exists (the listing lacked it)' : 'the node could not be read', routes: routes(why) });
  }
}

/** Tells the tables whose creates and replaces the decider withheld as full, and removes the marks it found stale. */
export async function clearFullMarks(work: RouteWork, deps: { routeTables: Pick<RouteTables, 'clearRouteTableFull'>; log: Logger }): Promise<void> {
  const { log } = deps;
  for (const [routeTableId, withheld] of work.fullTables.withheld) {
    log.log('warn', 'reconcile.route-table-full', { routeTableId, withheld });
    log.metric('RouteWritesWithheld', withheld, 'Count', { RouteTableId: routeTableId });
  }
  for (const routeTableId of work.fullTables.clear) {
    await deps.routeTables.clearRouteTableFull?.(routeTableId).then(
      () => log.log('info', 'action', { action: 'clear-route-table-full', routeTableId }),
      (error: unknown) => log.log('warn', 'route-table-full.clear-failed', { routeTableId, error }),
    );
  }
}

/**
 * The messages of the decided route work (one per operation, deletions carrying the route they were
 * planned from) and `extra` (sync-node messages, which always go), as they would be sent now. The
 * queue's backlog is read only when there is route work, and the decider run again with it: while
 * the queue still holds at least as much work as this plan asks for, that work is most likely an
 * earlier tick's, not done yet. Reads only: sending is the caller's (a dry run sends nothing).
 */
export async function workMessages(
  planned: PlannedRoutes,
  facts: RouteWorkFacts,
  extra: readonly WorkMessage[],
  deps: { queue: Pick<WorkQueue, 'backlog'>; log: Logger },
): Promise<{ messages: WorkMessage[]; work: RouteWork }> {
  let work = decideRouteWork(planned.plan, planned.live, facts);
  const { create, replace, delete: deletes } = work.send;
  if (create.length + replace.length + deletes.length > 0 && deps.queue.backlog) {
    const backlog = await deps.queue.backlog();
    work = decideRouteWork(planned.plan, planned.live, { ...facts, backlog });
    if (work.deferred > 0) deps.log.log('info', 'reconcile.backlog', { backlog, deferred: work.deferred });
  }
  const messages = [...toMessages(work.send, { withholdDeletes: false }), ...extra];
  return { messages, work };
}
