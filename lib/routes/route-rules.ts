/**
 * The route rules every decider shares (the planner, ./route-plan-phases.ts; the route worker,
 * lib/usecases/route-writes.ts; reconcile and node sync's alias): which route of a destination
 * counts, whether a route is a node's, what a wanted destination needs, and whether a route may be
 * deleted. Pure functions over routes as lib/routes/route-tables.ts reads them.
 */
import type { Route } from './route-tables.ts';

/**
 * The routes of one destination in one table that decisions look at. A table can hold a static and
 * a propagated route to one destination side by side, and the static one wins (Amazon VPC User
 * Guide, "How route priority works"); route calls act on static routes only (EC2 API reference,
 * Route.Origin), so propagated routes are context.
 */
export interface DestinationRoutes {
  /** The static route (EC2 never lists two; should it, one is chosen in a fixed order). */
  readonly static: Route | undefined;
  /** A propagated route, a VPC Route Server one before a VGW one. */
  readonly propagated: Route | undefined;
}

export const NO_ROUTES: DestinationRoutes = { static: undefined, propagated: undefined };

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Total order for two static routes of one table with one destination: active before blackhole, instance first. */
const compareDuplicateRoutes = (a: Route, b: Route): number =>
  Number(a.blackhole) - Number(b.blackhole) ||
  Number(a.target !== 'instance') - Number(b.target !== 'instance') ||
  compareText(a.instanceId ?? '', b.instanceId ?? '') ||
  compareText(a.networkInterfaceId ?? '', b.networkInterfaceId ?? '') ||
  compareText(a.target, b.target);

/** `seen` with one more route of its destination: which route counts, decided one route at a time. */
export function withRoute(seen: DestinationRoutes, route: Route): DestinationRoutes {
  if (route.propagated !== undefined) {
    return seen.propagated === undefined || route.propagated === 'route-server' ? { ...seen, propagated: route } : seen;
  }
  return seen.static === undefined || compareDuplicateRoutes(route, seen.static) < 0 ? { ...seen, static: route } : seen;
}

/** Which routes of one destination count (`withRoute` over them). */
export const destinationRoutes = (routes: Iterable<Route>): DestinationRoutes => {
  let seen = NO_ROUTES;
  for (const route of routes) seen = withRoute(seen, route);
  return seen;
};

/**
 * Whether `route` is the node's route: active, static, and to the node's instance. When the node's
 * primary interface is known (`primaryEni`, the interface the worker routes to) a route naming an
 * interface must name that one; a route naming only an interface is matched to its instance first
 * (./route-plan-phases.ts `matchInterfaceTarget`).
 */
export function isNodesRoute(route: Route, instanceId: string, primaryEni?: string): boolean {
  if (route.blackhole || route.propagated !== undefined) return false;
  if (primaryEni !== undefined && route.networkInterfaceId !== null) return route.networkInterfaceId === primaryEni;
  return route.target === 'instance' && route.instanceId === instanceId;
}

/** Node-kind routes are the only ones podroute deletes or replaces: static blackholes and static active routes to an instance. */
export function nodeKindOf(route: Route): 'blackhole' | 'instance' | null {
  if (route.propagated !== undefined || route.target === 'local') return null;
  if (route.blackhole) return 'blackhole';
  return route.target === 'instance' ? 'instance' : null;
}

/** What a wanted destination needs in one table, for its owner. */
export type WantedVerdict =
  | { readonly kind: 'keep' }
  | { readonly kind: 'create'; readonly beside?: Route }
  | { readonly kind: 'replace'; readonly reason: 'blackhole' | 'moved' }
  | { readonly kind: 'blocked'; readonly reason: 'foreign-target' | 'propagated-route'; readonly route: Route };

/**
 * A wanted destination's verdict (the planner's step 5): the owner's route in place -> keep; no
 * static route -> create, unless only a VPC Route Server route is there (blocked: CreateRoute beside
 * one is not documented); a VGW route alone is no obstacle (create `beside` it: the static route
 * wins); a blackhole -> replace; a route to another instance that no unmanaged node alone names ->
 * replace (`moved`); anything else (a gateway, a bare interface, an unmanaged node's instance) is
 * blocked.
 */
export function wantedVerdict(
  routes: DestinationRoutes,
  owner: { readonly instanceId: string; readonly primaryEni?: string },
  unmanagedInstances: ReadonlySet<string | null>,
): WantedVerdict {
  const route = routes.static;
  if (route === undefined) {
    const { propagated } = routes;
    if (propagated?.propagated === 'route-server') return { kind: 'blocked', reason: 'propagated-route', route: propagated };
    return propagated === undefined ? { kind: 'create' } : { kind: 'create', beside: propagated };
  }
  if (isNodesRoute(route, owner.instanceId, owner.primaryEni)) return { kind: 'keep' };
  if (route.blackhole) return { kind: 'replace', reason: 'blackhole' };
  if (route.target === 'instance' && !(route.instanceId !== null && unmanagedInstances.has(route.instanceId))) return { kind: 'replace', reason: 'moved' };
  return { kind: 'blocked', reason: 'foreign-target', route };
}

/** A route's target in a refusal or a status: the gateway, the bare interface, or that it is propagated. */
export function targetText(route: Route): string {
  if (route.propagated !== undefined) return 'a propagated route';
  if (route.target === 'interface') return route.networkInterfaceId ?? 'an unknown target';
  return route.gatewayId ?? 'an unknown target';
}

/**
 * Whether a planned deletion still fits the route there now (the planner's delete rule, steps 4
 * and 6, for one destination): a node-kind route, still a blackhole when one was planned, and still
 * the route the plan saw (`expect`). A `stale:` status when it does not; `check-owner` when it is a
 * live route whose node may own it (the lease table decides); `delete` otherwise.
 */
export function deleteVerdict(
  route: Route,
  planned: { readonly reason: 'blackhole' | 'no-owner'; readonly expect?: { readonly instanceId: string | null; readonly blackhole: boolean } | undefined },
): { readonly kind: 'stale'; readonly status: string } | { readonly kind: 'delete' } | { readonly kind: 'check-owner'; readonly instanceId: string } {
  const kind = nodeKindOf(route);
  if (kind === null) return { kind: 'stale', status: `stale:foreign-target ${targetText(route)}` };
  const blackhole = kind === 'blackhole';
  if (planned.reason === 'blackhole' && !blackhole) return { kind: 'stale', status: 'stale:no-longer-blackhole' };
  const { expect } = planned;
  if (expect !== undefined) {
    if (expect.blackhole !== blackhole && planned.reason === 'no-owner') return { kind: 'stale', status: 'stale:state-changed' };
    if (!blackhole && route.instanceId !== expect.instanceId) return { kind: 'stale', status: 'stale:target-changed' };
  }
  if (planned.reason === 'no-owner' && !blackhole && route.instanceId !== null) return { kind: 'check-owner', instanceId: route.instanceId };
  return { kind: 'delete' };
}
