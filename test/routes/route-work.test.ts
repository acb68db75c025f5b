/**
 * The route decider (lib/routes/route-work.ts) as a pure function: the planner's plan decided on
 * full-table marks, what backs each deletion (leases, keyed reads, the clock), the guard's window
 * and the queue's backlog. Every case states what is sent, what waits and why.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../lib/ipam/index.ts';
import type { Presence } from '../../lib/routes/delete-backing.ts';
import { EMPTY_WINDOW } from '../../lib/routes/deletion-guard.ts';
import { ROUTE_TABLE_FULL_TAG } from '../../lib/routes/table-full.ts';
import { type GuardWindowState, type RouteWorkFacts, planRouteWork } from '../../lib/routes/route-work.ts';
import { node, tables } from './fixtures.ts';

const NOW = Date.UTC(2026, 11, 2, 4, 0);
const MINUTE = 60_000;
const CLUSTER = ['100.64.0.0/16'];
const GONE = '100.64.99.0/24';

/**
 * Ten nodes routed in rtb-1, a new node to route (one create), and a route to an instance no node
 * names (one `no-owner` deletion). `mark` is rtb-1's full mark, if any.
 */
function world(mark?: string) {
  const nodes = [...Array.from({ length: 10 }, (_, i) => node(`n-${i}`, { instance: i + 1, podCidrs: [`100.64.${i}.0/24`] })), node('new', { instance: 50, podCidrs: ['100.64.50.0/24'] })];
  const routes = Array.from({ length: 10 }, (_, i) => ({ to: `100.64.${i}.0/24`, instance: i + 1 }));
  const routeTables = tables({ id: 'rtb-1', routes: [...routes, { to: GONE, instance: 99 }], ...(mark === undefined ? {} : { tags: { [ROUTE_TABLE_FULL_TAG]: mark } }) });
  return { nodes, routeTables };
}

const read: GuardWindowState = { state: 'read', window: EMPTY_WINDOW, windowMs: 0 };

function decide(over: { mark?: string; leases?: Lease[]; presence?: ReadonlyArray<readonly [string, Presence]>; guard?: GuardWindowState; backlog?: number } = {}) {
  const { nodes, routeTables } = world(over.mark);
  const facts: RouteWorkFacts = {
    tables: routeTables,
    now: NOW,
    backing: { nodes, leases: over.leases ?? [], presence: new Map(over.presence ?? []), graceMs: 10 * MINUTE },
    guard: over.guard ?? read,
    limits: { maxDeleteShare: 0.5, minDeletesForGuard: 5 },
    ...(over.backlog === undefined ? {} : { backlog: over.backlog }),
  };
  return planRouteWork({ nodes, routeTables, clusterCidrs: CLUSTER }, facts);
}

const destinations = (ops: ReadonlyArray<{ destinationCidr: string }>) => ops.map((op) => op.destinationCidr);
const iso = (at: number) => new Date(at).toISOString();

describe('route decider: full tables', () => {
  it.each([
    ['no mark', undefined, ['100.64.50.0/24'], [], []],
    ['a young mark at the table\'s route count', `11@${iso(NOW - MINUTE)}`, [], [['rtb-1', 1]], []],
    ['an old mark (one probe)', `11@${iso(NOW - 11 * MINUTE)}`, ['100.64.50.0/24'], [], []],
    ['a mark the table has shrunk below', `12@${iso(NOW - MINUTE)}`, ['100.64.50.0/24'], [], ['rtb-1']],
  ] as const)('%s', (_name, mark, created, withheld, clear) => {
    const work = decide(mark === undefined ? {} : { mark });
    expect(destinations(work.send.create)).toEqual(created);
    expect([...work.fullTables.withheld]).toEqual(withheld);
    expect(work.fullTables.clear).toEqual(clear);
    // The plan still lists the create: withheld is not forgotten.
    expect(destinations(work.plan.create)).toEqual(['100.64.50.0/24']);
  });
});

describe('route decider: what backs a deletion', () => {
  const lease = (since: number): Lease => ({ cidr: GONE, owner: 'gone', since });
  it.each([
    ['no lease names it: the guard lets it go', [], [], [GONE], [GONE], []],
    ['a young lease of an unlisted node', [lease(NOW - MINUTE)], [], [], [], [{ why: 'lease-young' }]],
    ['an old lease whose node read 404', [lease(NOW - 20 * MINUTE)], [['gone', 'absent']], [GONE], [GONE], []],
    ['an old lease whose node exists', [lease(NOW - 20 * MINUTE)], [['gone', 'present']], [], [], [{ why: 'node-exists' }]],
    ['an old lease whose node could not be read', [lease(NOW - 20 * MINUTE)], [['gone', 'unreadable']], [], [], [{ why: 'node-unreadable' }]],
  ] as const)('%s', (_name, leases, presence, sent, listed, held) => {
    const work = decide({ leases: [...leases], presence: [...presence] });
    expect(destinations(work.send.delete)).toEqual(sent);
    expect(destinations(work.plan.delete)).toEqual(listed);
    expect(work.held.map(({ op, why }) => ({ cidr: op.destinationCidr, why }))).toEqual(held.map(({ why }) => ({ cidr: GONE, why })));
    expect(work.plan.unsafe).toBeUndefined();
  });

  it('a confirmed deletion goes even while the guard\'s window is lost', () => {
    const work = decide({ leases: [lease(NOW - 20 * MINUTE)], presence: [['gone', 'absent']], guard: { state: 'unreadable' } });
    expect(destinations(work.send.delete)).toEqual([GONE]);
    expect(work.deletionsWithheld).toBe(0);
  });
});

describe('route decider: the mass-deletion guard', () => {
  // Five deletions let go 10 minutes ago: with this one, 6 of 11 live routes (more than half, and at least 5).
  const spent: GuardWindowState = {
    state: 'read',
    window: { runs: [{ at: NOW - 10 * MINUTE, live: 11, deleted: ['rtb-1|100.64.201.0/24', 'rtb-1|100.64.202.0/24', 'rtb-1|100.64.203.0/24', 'rtb-1|100.64.204.0/24', 'rtb-1|100.64.205.0/24'] }] },
    windowMs: 60 * MINUTE,
  };
  it.each([
    ['not read yet', { state: 'unread' }, /was not read/, true],
    ['unreadable', { state: 'unreadable' }, /could not be read/, false],
    ['lost to an overlapping run', { state: 'busy' }, /guard window busy/, false],
    ['not writable', { state: 'unwritable' }, /guard window unwritable/, false],
    ['over the share in the window', spent, /plan deletes 6 of 11 live routes/, false],
  ] as const)('%s: the unconfirmed deletion is withheld, still listed, and the plan says why', (_name, guard, unsafe, needsWindow) => {
    const work = decide({ guard });
    expect(work.send.delete).toEqual([]);
    expect(destinations(work.plan.delete)).toEqual([GONE]);
    expect(work.plan.unsafe).toMatch(unsafe);
    expect(work.deletionsWithheld).toBe(1);
    expect(work.needsGuardWindow).toBe(needsWindow);
    expect(work.guardWindow).toBeNull();
  });

  it('within the share it goes, and the window to write records it', () => {
    const work = decide({ guard: { ...read, windowMs: 60 * MINUTE } });
    expect(destinations(work.send.delete)).toEqual([GONE]);
    expect(work.guardWindow).toEqual({ runs: [{ at: NOW, live: 11, deleted: [`rtb-1|${GONE}`] }] });
    expect(work.plan.unsafe).toBeUndefined();
  });
});

describe('route decider: the queue backlog', () => {
  // One create and one delete go out.
  it.each([
    ['not read', undefined, 2, 0],
    ['empty', 0, 2, 0],
    ['smaller than the work', 1, 2, 0],
    ['as large as the work', 2, 0, 2],
    ['larger', 50, 0, 2],
  ] as const)('%s: sends %i, defers %i', (_name, backlog, sent, deferred) => {
    const work = decide(backlog === undefined ? {} : { backlog });
    expect(work.send.create.length + work.send.replace.length + work.send.delete.length).toBe(sent);
    expect(work.deferred).toBe(deferred);
    // Deferred work stays in the plan.
    expect(destinations([...work.plan.create, ...work.plan.delete])).toEqual(['100.64.50.0/24', GONE]);
  });

  it('defers nothing when nothing would go out', () => {
    const work = decide({ mark: `11@${iso(NOW - MINUTE)}`, leases: [{ cidr: GONE, owner: 'gone', since: NOW - MINUTE }], backlog: 100 });
    expect(work.deferred).toBe(0);
    expect(work.send).toEqual({ create: [], replace: [], delete: [] });
  });
});
