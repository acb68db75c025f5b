/** Prefixes mode touches no route table and routes to no interface: a call is a bug, refused. */
import { PodrouteError } from '../../errors.ts';
import type { RouteTables, RouteTargets } from '../../usecases/ports.ts';

export const noRouteTables: RouteTables = {
  listRouteTables: () => Promise.reject(new PodrouteError('prefixes mode has no route tables')),
  createRoute: () => Promise.reject(new PodrouteError('prefixes mode makes no route')),
  replaceRoute: () => Promise.reject(new PodrouteError('prefixes mode makes no route')),
  deleteRoute: () => Promise.reject(new PodrouteError('prefixes mode deletes no route')),
  describeRoute: () => Promise.reject(new PodrouteError('prefixes mode has no route tables')),
};

export const noRouteTargets: RouteTargets = {
  prepareRouteTarget: () => Promise.reject(new PodrouteError('prefixes mode prepares no route target')),
};
