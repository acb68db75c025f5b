export {
  planRoutes,
  isResponsibleForRoute,
  DEFAULT_MAX_DELETE_SHARE,
  DEFAULT_MIN_DELETES_FOR_GUARD,
} from './route-plan.ts';
export type {
  RoutePlan,
  PlanInput,
  CreateOp,
  ReplaceOp,
  DeleteOp,
  NodeStatus,
  PlanWarning,
  PlanWarningReason,
} from './route-plan.ts';
export {
  ROUTE_TABLE_ID,
  propagationOf,
  parseRouteTables,
  normaliseRouteTable,
  normaliseRoute,
  clusterTagKey,
  isClusterTable,
  describeRouteTablesSchema,
  ec2RouteTableSchema,
  ec2RouteSchema,
} from './route-tables.ts';
export type { Route, RouteTable, RouteTarget, Ec2Route, Ec2RouteTable } from './route-tables.ts';
