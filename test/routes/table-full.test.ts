/**
 * A route table marked full (lib/routes/table-full.ts): reconcile withholds creates and replaces to
 * it while it still holds the recorded number of routes and the mark is young, allows one probe once
 * the mark is older than the re-probe interval, and clears a mark the table has outgrown.
 */
import { describe, expect, it } from 'vitest';
import { parseRouteTables } from '../../lib/routes/index.ts';
import type { RouteTable } from '../../lib/routes/index.ts';
import {
  ROUTE_TABLE_FULL_TAG,
  formatFullMark,
  fullTableVerdict,
  parseFullMark,
  withholdFullTables,
} from '../../lib/routes/table-full.ts';

const T0 = Date.UTC(2026, 11, 1, 14, 0);
/** The re-probe interval of a full mark: 10 minutes. */
const REPROBE_MS = 10 * 60_000;

function table(id: string, routes: number, mark?: string): RouteTable {
  const parsed = parseRouteTables({
    RouteTables: [
      {
        RouteTableId: id,
        VpcId: 'vpc-1',
        Tags: [{ Key: 'kubernetes.io/cluster/c', Value: 'owned' }, ...(mark === undefined ? [] : [{ Key: ROUTE_TABLE_FULL_TAG, Value: mark }])],
        Routes: Array.from({ length: routes }, (_, i) => ({ DestinationCidrBlock: `100.64.${i}.0/24`, InstanceId: `i-${String(i).padStart(17, '0')}`, State: 'active' })),
      },
    ],
  });
  const only = parsed[0];
  if (!only) throw new Error('no table');
  return only;
}

const op = (routeTableId: string, n: number) => ({ routeTableId, destinationCidr: `100.65.${n}.0/24` });

describe('route table full mark', () => {
  it('round-trips <routeCount>@<ISO time> and refuses anything else', () => {
    expect(formatFullMark({ routeCount: 50, at: T0 })).toBe('50@2026-12-01T14:00:00.000Z');
    expect(parseFullMark('50@2026-12-01T14:00:00.000Z')).toEqual({ routeCount: 50, at: T0 });
    expect(parseFullMark('fifty@2026-12-01T14:00:00.000Z')).toBeNull();
    expect(parseFullMark('50@yesterday')).toBeNull();
    expect(parseFullMark('')).toBeNull();
  });

  it.each([
    ['no mark', undefined, 3, 0, 'open'],
    ['a young mark, as many routes', '3@2026-12-01T14:00:00.000Z', 3, 60_000, 'full'],
    ['a young mark, more routes', '3@2026-12-01T14:00:00.000Z', 4, 60_000, 'full'],
    ['an old mark', '3@2026-12-01T14:00:00.000Z', 3, REPROBE_MS, 'probe'],
    ['a young mark, fewer routes (room again)', '3@2026-12-01T14:00:00.000Z', 2, 60_000, 'clear'],
    ['an unreadable mark', 'garbage', 3, 0, 'clear'],
  ] as const)('%s: %s', (_name, mark, routes, age, verdict) => {
    expect(fullTableVerdict(table('rtb-1', routes, mark), T0 + age)).toBe(verdict);
  });

  it('withholds every op to a full table, lets one probe through an old mark, and leaves other tables alone', () => {
    const tables = [table('rtb-full', 3, '3@2026-12-01T14:00:00.000Z'), table('rtb-open', 3), table('rtb-room', 1, '3@2026-12-01T14:00:00.000Z')];
    const ops = [op('rtb-full', 1), op('rtb-open', 1), op('rtb-full', 2), op('rtb-room', 1), op('rtb-full', 3)];

    const young = withholdFullTables(ops, tables, T0 + 60_000);
    expect(young.send).toEqual([op('rtb-open', 1), op('rtb-room', 1)]);
    expect([...young.withheld]).toEqual([['rtb-full', 3]]);
    expect(young.clear).toEqual(['rtb-room']);

    const old = withholdFullTables(ops, tables, T0 + REPROBE_MS);
    expect(old.send).toEqual([op('rtb-full', 1), op('rtb-open', 1), op('rtb-room', 1)]);
    expect([...old.withheld]).toEqual([['rtb-full', 2]]);
  });
});
