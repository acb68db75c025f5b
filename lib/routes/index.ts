export {
  planRoutes,
  isResponsibleForRoute,
  DEFAULT_MAX_DELETE_SHARE,
  DEFAULT_MIN_DELETES_FOR_GUARD,
} from './route-plan.ts';
export type { RoutePlan, PlanInput } from './route-plan.ts';
export { ROUTE_TABLE_ID, parseRouteTables, clusterTagKey } from './route-tables.ts';
export type { Route, RouteTable } from './route-tables.ts';
export { decideOwnership, withAdopted } from './ownership.ts';
export type { Conflict, ConflictReason, LeaseTable, LeaseView, Ownership, OwnershipInput } from './ownership.ts';
