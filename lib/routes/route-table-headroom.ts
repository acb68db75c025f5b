/**
 * How full a route table is against the "Routes per route table (non-propagated routes)" quota:
 * the gauge behind the `RouteTableHeadroom` metric and its alarm (serverless.yml). Amazon VPC User
 * Guide, "Amazon VPC quotas": the quota counts non-propagated routes, 500 by default and at most
 * 1,000, per family (L-93826ACB); so the fuller family counts, every static route and `local` too.
 * A prefix-list route counts once per family (its list's size is not read), so it may be fuller.
 */
import { InvalidInputError } from '../errors.ts';
import type { RouteTable } from './route-tables.ts';

/** The quota's default (Amazon VPC quotas, "Routes per route table (non-propagated routes)"). */
export const DEFAULT_ROUTE_QUOTA = 500;
/** The most the quota can be raised to (same page). */
export const MAX_ROUTE_QUOTA = 1000;

export interface RouteTableUsage {
  readonly routeTableId: string;
  /** Non-propagated routes of the fuller family (IPv4 or IPv6). */
  readonly routes: number;
  /** `routes` as a percentage of the quota, rounded to one decimal; over 100 when a quota was lowered. */
  readonly percent: number;
}

/** How full `table` is against `quota` routes per family. Throws InvalidInputError on a quota outside 1..MAX_ROUTE_QUOTA. */
export function routeTableUsage(table: RouteTable, quota: number): RouteTableUsage {
  if (!Number.isInteger(quota) || quota < 1 || quota > MAX_ROUTE_QUOTA) {
    throw new InvalidInputError(`route quota must be a whole number from 1 to ${MAX_ROUTE_QUOTA}, got ${String(quota)}`);
  }
  const byFamily = routeCounts(table);
  const routes = Math.max(byFamily[4], byFamily[6]);
  return { routeTableId: table.routeTableId, routes, percent: Math.round((routes / quota) * 1000) / 10 };
}

/** The routes of `table` the quota counts, per family: every non-propagated route, and a prefix-list route in each. */
export function routeCounts(table: RouteTable): { 4: number; 6: number } {
  const byFamily = { 4: table.skippedRoutes, 6: table.skippedRoutes };
  for (const route of table.routes) {
    if (route.propagated === undefined) byFamily[route.family] += 1;
  }
  return byFamily;
}

/** The fullest of `tables` (the first of equals), or null when there are none. */
export function fullestTable(tables: readonly RouteTable[], quota: number): RouteTableUsage | null {
  let fullest: RouteTableUsage | null = null;
  for (const table of tables) {
    const usage = routeTableUsage(table, quota);
    if (fullest === null || usage.routes > fullest.routes) fullest = usage;
  }
  return fullest;
}
