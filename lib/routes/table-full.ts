/**
 * A full route table, marked on the table itself: the tag `podroute.io/route-table-full =
 * <routeCount>@<ISO time>`, written when CreateRoute answers `RouteLimitExceeded` (the "Routes per
 * route table" quota; Amazon VPC quotas). While the mark is young and the table no emptier, no create
 * or replace goes to it; an older mark lets one probe through. Why a tag: docs/decisions/0010-full-route-tables.md.
 */
import type { RouteTable } from './route-tables.ts';

export const ROUTE_TABLE_FULL_TAG = 'podroute.io/route-table-full';

/** How long a full mark holds back creates before one probe is allowed. */
const ROUTE_TABLE_FULL_REPROBE_MS = 10 * 60_000;

export interface FullMark {
  readonly routeCount: number;
  /** Milliseconds since the epoch. */
  readonly at: number;
}

export function formatFullMark(mark: FullMark): string {
  return `${mark.routeCount}@${new Date(mark.at).toISOString()}`;
}

/**
 * The mark a tag value carries, or null when it is not one (then it is cleared like a stale mark).
 * Exported for its table-driven test (test/routes/table-full.test.ts).
 */
export function parseFullMark(value: string): FullMark | null {
  const match = /^(\d{1,5})@(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z)$/.exec(value);
  if (!match?.[1] || !match[2]) return null;
  const at = Date.parse(match[2]);
  return Number.isFinite(at) ? { routeCount: Number(match[1]), at } : null;
}

/**
 * Every route the table lists, prefix-list ones included. This is a yardstick, not EC2's quota
 * count: the quota counts non-propagated routes only (Amazon VPC quotas), so propagated routes here
 * make it larger. Only its change matters: the mark holds while the count has not dropped below the
 * count recorded when the table was full.
 */
export function routeCountOf(table: RouteTable): number {
  return table.routes.length + table.skippedRoutes;
}

/**
 * What reconcile may send to a table now:
 * - `open`: no mark; `clear`: the mark is stale (fewer routes now, or unreadable): send and remove it;
 * - `full`: withhold every create and replace; `probe`: the mark is old: send one.
 * Exported for its table-driven test (test/routes/table-full.test.ts).
 */
export function fullTableVerdict(table: RouteTable, now: number, reprobeMs = ROUTE_TABLE_FULL_REPROBE_MS): 'open' | 'clear' | 'full' | 'probe' {
  if (!Object.hasOwn(table.tags, ROUTE_TABLE_FULL_TAG)) return 'open';
  const mark = parseFullMark(table.tags[ROUTE_TABLE_FULL_TAG] ?? '');
  if (mark === null || routeCountOf(table) < mark.routeCount) return 'clear';
  return now - mark.at < reprobeMs ? 'full' : 'probe';
}

/**
 * Holds back creates and replaces to full tables (at most one per table on a probe). Pure: returns
 * the ops to send, how many were withheld per table, and the tables whose mark should be removed.
 */
export function withholdFullTables<Op extends { readonly routeTableId: string }>(
  ops: readonly Op[],
  tables: readonly RouteTable[],
  now: number,
  reprobeMs = ROUTE_TABLE_FULL_REPROBE_MS,
): { send: Op[]; withheld: Map<string, number>; clear: string[] } {
  const verdicts = new Map(tables.map((table) => [table.routeTableId, fullTableVerdict(table, now, reprobeMs)]));
  const send: Op[] = [];
  const withheld = new Map<string, number>();
  const probed = new Set<string>();
  for (const op of ops) {
    const verdict = verdicts.get(op.routeTableId) ?? 'open';
    if (verdict === 'full' || (verdict === 'probe' && probed.has(op.routeTableId))) {
      withheld.set(op.routeTableId, (withheld.get(op.routeTableId) ?? 0) + 1);
      continue;
    }
    if (verdict === 'probe') probed.add(op.routeTableId);
    send.push(op);
  }
  const clear = [...verdicts].filter(([, verdict]) => verdict === 'clear').map(([id]) => id);
  return { send, withheld, clear };
}
