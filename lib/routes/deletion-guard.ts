/**
 * The mass-deletion guard: the one decider of whether route deletions that no keyed read confirmed
 * may go, judged over a window of runs (the deletions it let go plus the ones proposed, against the
 * most live routes a run of the window saw). Pure: the window comes in and goes out as a value; the
 * caller keeps it (lib/aws/dynamodb-deletion-guard.ts). Deletions a keyed 404 confirmed are never held.
 */

export interface GuardLimits {
  /** Share of the live routes the window may remove unconfirmed, in (0, 1]. */
  readonly maxDeleteShare: number;
  /**
   * The share rule trips only from this many unconfirmed deletions on: the one floor, the
   * documented MIN_DELETES_FOR_GUARD (default 5, 0..1000). 0 and 1 judge alike: a run that proposes
   * no unconfirmed deletion is never unsafe. Lease releases have no floor of their own: a keyed 404
   * confirms each, so none is judged here.
   */
  readonly minDeletesForGuard: number;
  /** How far back runs count, in ms (0: this run alone). */
  readonly windowMs: number;
}

/** One earlier run: when, how many routes were live, and the deletions the guard let go. */
export interface GuardRun {
  readonly at: number;
  readonly live: number;
  readonly deleted: readonly string[];
}

/** The runs of the window, oldest first. */
export interface GuardWindow {
  readonly runs: readonly GuardRun[];
}

export const EMPTY_WINDOW: GuardWindow = { runs: [] };

/** How long runs count by default: an hour of schedule ticks. */
export const DEFAULT_GUARD_WINDOW_MS = 60 * 60 * 1000;

export interface GuardInput {
  /** Routes live now in the cluster CIDRs. */
  readonly live: number;
  /** Keys (`table|cidr`) of the route deletions proposed now that no keyed read confirmed. */
  readonly unconfirmed: readonly string[];
  /** The node listing came back empty. */
  readonly noNodes: boolean;
  readonly window: GuardWindow;
  readonly now: number;
  readonly limits: GuardLimits;
}

export interface GuardVerdict {
  /** Why the unconfirmed deletions must be withheld, or null when they may go. */
  readonly unsafe: string | null;
  /** The window to keep for the next run (this run added, runs past the window dropped). */
  readonly window: GuardWindow;
}

/**
 * Judges the unconfirmed deletions of one run against the window. They are withheld when the node
 * listing is empty while routes are live, or when the window's unconfirmed deletions with these
 * would exceed `maxDeleteShare` of the most live routes the window saw and number at least
 * `minDeletesForGuard`. A key deleted in an earlier run and proposed again (its deletion still in
 * flight) counts once.
 */
export function judgeDeletions(input: GuardInput): GuardVerdict {
  const { limits, now } = input;
  const recent = input.window.runs.filter((run) => now - run.at < limits.windowMs && run.at <= now);
  const peak = Math.max(input.live, ...recent.map((run) => run.live));
  const earlier = new Set(recent.flatMap((run) => run.deleted));
  const counted = new Set([...earlier, ...input.unconfirmed]);
  const unsafe = verdictReason(input, peak, counted.size, earlier.size);
  const deleted = unsafe === null ? [...new Set(input.unconfirmed)].filter((key) => !earlier.has(key)) : [];
  const runs = limits.windowMs > 0 ? [...recent, { at: now, live: input.live, deleted }] : [];
  return { unsafe, window: { runs } };
}

function verdictReason(input: GuardInput, peak: number, counted: number, earlier: number): string | null {
  const { limits } = input;
  if (input.unconfirmed.length === 0) return null;
  if (input.noNodes && input.live > 0) {
    return `node list is empty but ${input.live} routes exist in the cluster CIDRs; refusing to delete them`;
  }
  if (counted > limits.maxDeleteShare * peak && counted >= limits.minDeletesForGuard) {
    const share = Math.round((counted / peak) * 1000) / 10;
    const allowed = Math.round(limits.maxDeleteShare * 1000) / 10;
    const over = earlier > 0 ? ` (with ${earlier} deleted in the last ${Math.round(limits.windowMs / 60_000)} min)` : '';
    return `plan deletes ${counted} of ${peak} live routes in the cluster CIDRs${over} (${share}%, more than the ${allowed}% allowed); refusing to delete them`;
  }
  return null;
}
