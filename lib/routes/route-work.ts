/**
 * The route decider: the planner's plan (./route-plan.ts) and the facts read beside it (full-table
 * marks, what backs each deletion, the mass-deletion guard's window, the queue's backlog) turned
 * into one value that says which route operations go out now and which wait, and why. Pure: the
 * clock and every read come in as values; reconcile only applies the answer.
 */
import { type GuardLimits, type GuardWindow, judgeDeletions } from './deletion-guard.ts';
import { type DeleteBacking, type HeldReason, sortRouteDeletes } from './delete-backing.ts';
import { type CreateOp, type DeleteOp, type PlanInput, type ReplaceOp, type RoutePlan, deletionKey, planRoutesCounted } from './route-plan.ts';
import type { RouteTable } from './route-tables.ts';
import { withholdFullTables } from './table-full.ts';

/**
 * The guard's window as the caller has it: read (with how far back its runs count; 0 = this run
 * alone), not read yet (unconfirmed deletions wait for it), or lost: it could not be read, or the
 * write that spends this run's share lost to an overlapping run (`busy`) or failed (`unwritable`).
 */
export type GuardWindowState =
  | { readonly state: 'read'; readonly window: GuardWindow; readonly windowMs: number }
  | { readonly state: 'unread' | 'unreadable' | 'busy' | 'unwritable' };

export interface RouteWorkFacts {
  /** The tables the plan was made from: their full marks (./table-full.ts). */
  readonly tables: readonly RouteTable[];
  readonly now: number;
  readonly backing: Omit<DeleteBacking, 'now'>;
  readonly guard: GuardWindowState;
  readonly limits: Pick<GuardLimits, 'maxDeleteShare' | 'minDeletesForGuard'>;
  /** Messages already in the queue; absent: not read (nothing is deferred). */
  readonly backlog?: number;
}

export interface RouteOps {
  readonly create: readonly CreateOp[];
  readonly replace: readonly ReplaceOp[];
  readonly delete: readonly DeleteOp[];
}

/** Why a planned route operation does not go out this run. */
export type WithheldWhy = HeldReason | 'route-table-full' | 'mass-deletion-guard' | 'backlog';

/** A planned route operation that waits, and why. */
export interface WithheldOp {
  readonly kind: 'create' | 'replace' | 'delete';
  readonly routeTableId: string;
  readonly destinationCidr: string;
  readonly why: WithheldWhy;
}

export interface RouteWork {
  /** The plan as reported: held deletions left out, withheld unconfirmed ones still listed, `unsafe` set when they are withheld. */
  readonly plan: RoutePlan;
  /** What goes out now, in plan order. */
  readonly send: RouteOps;
  /** Deletions that wait for their node: a young lease, a node that exists, a node that could not be read. */
  readonly held: ReadonlyArray<{ readonly op: DeleteOp; readonly why: HeldReason }>;
  /** Unconfirmed deletions the guard withheld. */
  readonly deletionsWithheld: number;
  /** Creates and replaces withheld per full table, and the tables whose stale mark goes. */
  readonly fullTables: { readonly withheld: ReadonlyMap<string, number>; readonly clear: readonly string[] };
  /** The window to write before `send` goes (unconfirmed deletions are spent only once it is written); null: none. */
  readonly guardWindow: GuardWindow | null;
  /** Unconfirmed deletions wait for the guard's window: read it and decide again. */
  readonly needsGuardWindow: boolean;
  /** Route operations not sent because the backlog already holds as many (an earlier tick's). */
  readonly deferred: number;
  /** Every planned operation that does not go out now, with the first reason that holds it (in plan order per reason). */
  readonly withheld: readonly WithheldOp[];
}

const LOST: Record<Exclude<GuardWindowState['state'], 'read'>, string> = {
  unread: "the mass-deletion guard's window was not read; unconfirmed route deletions wait for it",
  unreadable: "the mass-deletion guard's window could not be read; refusing to delete unconfirmed routes",
  busy: "guard window busy: an overlapping run wrote the mass-deletion guard's window first; unconfirmed route deletions wait for the next run",
  unwritable: "guard window unwritable: the mass-deletion guard's window could not be written; refusing to delete unconfirmed routes",
};

/** The planner and the decider in one call: the plan of `input`, decided on `facts`. */
export function planRouteWork(input: PlanInput, facts: RouteWorkFacts): RouteWork {
  const { plan, live } = planRoutesCounted(input);
  return decideRouteWork(plan, live, facts);
}

/**
 * Decides the route work of a plan made by `planRoutesCounted` (its `live` count comes with it).
 * Creates and replaces to a full table wait; deletions are sorted by what backs them, and the
 * unconfirmed ones go only when the guard lets them; everything waits while the backlog holds as
 * many route operations as would go out.
 */
export function decideRouteWork(plan: RoutePlan, live: number, facts: RouteWorkFacts): RouteWork {
  const full = withholdFullTables([...plan.create, ...plan.replace], facts.tables, facts.now);
  const sendable = new Set<CreateOp | ReplaceOp>(full.send);
  const sorted = sortRouteDeletes(plan.delete, { ...facts.backing, now: facts.now });
  const guard = judgeUnconfirmed(sorted.unconfirmed.map(deletionKey), live, facts);
  const going = new Set(guard.unsafe === null ? [...sorted.confirmed, ...sorted.unconfirmed] : sorted.confirmed);
  const heldOps = new Set(sorted.held.map(({ op }) => op));
  const ops: RouteOps = {
    create: plan.create.filter((op) => sendable.has(op)),
    replace: plan.replace.filter((op) => sendable.has(op)),
    delete: plan.delete.filter((op) => going.has(op)),
  };
  const count = ops.create.length + ops.replace.length + ops.delete.length;
  const deferred = count > 0 && facts.backlog !== undefined && facts.backlog >= count ? count : 0;
  const decided: RoutePlan = { ...plan, delete: plan.delete.filter((op) => !heldOps.has(op)), ...(guard.unsafe === null ? {} : { unsafe: guard.unsafe }) };
  const withheld: WithheldOp[] = [
    ...sorted.held.map(({ op, why }) => withheldOp('delete', op, why)),
    ...plan.create.filter((op) => !sendable.has(op)).map((op) => withheldOp('create', op, 'route-table-full')),
    ...plan.replace.filter((op) => !sendable.has(op)).map((op) => withheldOp('replace', op, 'route-table-full')),
    ...(guard.unsafe === null ? [] : sorted.unconfirmed.map((op) => withheldOp('delete', op, 'mass-deletion-guard'))),
    ...(deferred > 0 ? [...ops.create.map((op) => withheldOp('create', op, 'backlog')), ...ops.replace.map((op) => withheldOp('replace', op, 'backlog')), ...ops.delete.map((op) => withheldOp('delete', op, 'backlog'))] : []),
  ];
  return {
    plan: decided,
    send: deferred > 0 ? { create: [], replace: [], delete: [] } : ops,
    held: sorted.held,
    deletionsWithheld: guard.unsafe === null ? 0 : sorted.unconfirmed.length,
    fullTables: { withheld: full.withheld, clear: full.clear },
    guardWindow: guard.window,
    needsGuardWindow: sorted.unconfirmed.length > 0 && facts.guard.state === 'unread',
    deferred,
    withheld,
  };
}

const withheldOp = (kind: WithheldOp['kind'], op: { routeTableId: string; destinationCidr: string }, why: WithheldWhy): WithheldOp => ({
  kind,
  routeTableId: op.routeTableId,
  destinationCidr: op.destinationCidr,
  why,
});

/** The guard's verdict on this run's unconfirmed deletions (./deletion-guard.ts), over the window as the caller has it. */
function judgeUnconfirmed(unconfirmed: readonly string[], live: number, facts: RouteWorkFacts): { unsafe: string | null; window: GuardWindow | null } {
  if (unconfirmed.length === 0) return { unsafe: null, window: null };
  const { guard } = facts;
  if (guard.state !== 'read') return { unsafe: LOST[guard.state], window: null };
  const verdict = judgeDeletions({
    live,
    unconfirmed,
    noNodes: facts.backing.nodes.length === 0,
    window: guard.window,
    now: facts.now,
    limits: { ...facts.limits, windowMs: guard.windowMs },
  });
  return verdict.unsafe === null ? { unsafe: null, window: verdict.window } : { unsafe: verdict.unsafe, window: null };
}
