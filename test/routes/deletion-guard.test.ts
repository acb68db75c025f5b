/**
 * The mass-deletion guard (lib/routes/deletion-guard.ts): one decider over a window of runs.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GUARD_WINDOW_MS, EMPTY_WINDOW, judgeDeletions } from '../../lib/routes/deletion-guard.ts';
import type { GuardWindow } from '../../lib/routes/deletion-guard.ts';

const MINUTE = 60_000;
const limits = (windowMs: number) => ({ maxDeleteShare: 0.5, minDeletesForGuard: 5, windowMs });
const keys = (from: number, count: number) => Array.from({ length: count }, (_, i) => `rtb-1|100.64.${from + i}.0/24`);

/**
 * A listing that loses 2 more nodes each run (4 routes, 2 tables) while 28 routes were live: the
 * deletions the guard lets go over 6 runs a minute apart, the live count shrinking by what went.
 */
function sixRuns(windowMs: number): { allowed: number; trippedAt: number | null } {
  let window: GuardWindow = EMPTY_WINDOW;
  let live = 28;
  let allowed = 0;
  let trippedAt: number | null = null;
  for (let run = 0; run < 6; run++) {
    const verdict = judgeDeletions({ live, unconfirmed: keys(run * 4, 4), noNodes: false, window, now: run * MINUTE, limits: limits(windowMs) });
    window = verdict.window;
    if (verdict.unsafe === null) {
      allowed += 4;
      live -= 4;
    } else {
      trippedAt ??= run + 1;
    }
  }
  return { allowed, trippedAt };
}

describe('judgeDeletions', () => {
  it('judged run by run, a listing losing 2 nodes a run removes 24 of 28 routes in 6 runs', () => {
    expect(sixRuns(0)).toEqual({ allowed: 24, trippedAt: null });
  });

  it('judged over the window, the same listing is stopped at half of the 28 routes', () => {
    expect(sixRuns(DEFAULT_GUARD_WINDOW_MS)).toEqual({ allowed: 12, trippedAt: 4 });
  });

  const run = (at: number, live: number, deleted: string[]) => ({ at, live, deleted });
  it.each([
    ['nothing proposed', { live: 10, unconfirmed: [], noNodes: true, runs: [] }, null],
    ['an empty listing while routes are live', { live: 3, unconfirmed: keys(0, 1), noNodes: true, runs: [] }, /node list is empty but 3 routes exist/],
    ['under the share', { live: 20, unconfirmed: keys(0, 10), noNodes: false, runs: [] }, null],
    ['over the share', { live: 20, unconfirmed: keys(0, 11), noNodes: false, runs: [] }, /plan deletes 11 of 20 live routes .*55%/],
    ['over the share but under the floor', { live: 6, unconfirmed: keys(0, 4), noNodes: false, runs: [] }, null],
    ['over the share with the window', { live: 14, unconfirmed: keys(6, 5), noNodes: false, runs: [run(-MINUTE, 20, keys(0, 6))] }, /plan deletes 11 of 20 live routes .*with 6 deleted in the last 60 min/],
    ['a deletion still in flight counts once', { live: 20, unconfirmed: keys(0, 6), noNodes: false, runs: [run(-MINUTE, 20, keys(0, 6))] }, null],
    ['runs older than the window are forgotten', { live: 14, unconfirmed: keys(6, 4), noNodes: false, runs: [run(-DEFAULT_GUARD_WINDOW_MS, 20, keys(0, 6))] }, null],
  ])('%s', (_name, input, expected) => {
    const verdict = judgeDeletions({ ...input, window: { runs: input.runs }, now: 0, limits: limits(DEFAULT_GUARD_WINDOW_MS) });
    if (expected === null) expect(verdict.unsafe).toBeNull();
    else expect(verdict.unsafe).toMatch(expected);
  });

  it('keeps what it let go and this run\'s live count, drops expired runs, and lets nothing go when unsafe', () => {
    const old = { at: -DEFAULT_GUARD_WINDOW_MS, live: 30, deleted: keys(20, 2) };
    const recent = { at: -MINUTE, live: 20, deleted: keys(0, 2) };
    const allowed = judgeDeletions({ live: 18, unconfirmed: [...keys(0, 2), ...keys(2, 1)], noNodes: false, window: { runs: [old, recent] }, now: 0, limits: limits(DEFAULT_GUARD_WINDOW_MS) });
    expect(allowed).toEqual({ unsafe: null, window: { runs: [recent, { at: 0, live: 18, deleted: keys(2, 1) }] } });
    const refused = judgeDeletions({ live: 18, unconfirmed: keys(2, 12), noNodes: false, window: { runs: [recent] }, now: 0, limits: limits(DEFAULT_GUARD_WINDOW_MS) });
    expect(refused.unsafe).not.toBeNull();
    expect(refused.window).toEqual({ runs: [recent, { at: 0, live: 18, deleted: [] }] });
  });
});
