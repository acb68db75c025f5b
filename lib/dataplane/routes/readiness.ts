/**
 * Routes mode's readiness decider: a node is reachable once it holds its pod CIDRs and every
 * cluster table routes them to its instance. The texts are upstream's route controller's
 * (kubernetes/cloud-provider, controllers/route, `updateNetworkingCondition`).
 */
import type { Readiness, ReadinessFacts } from '../data-plane.ts';

export function routesReadiness(facts: ReadinessFacts): Readiness {
  if (facts.refused === true) return { networkUnavailable: true, reason: 'NoRouteCreated', message: 'RouteController failed to create a route' };
  if (facts.podCidrsComplete && facts.carried) return { networkUnavailable: false, reason: 'RouteCreated', message: 'RouteController created a route' };
  return { networkUnavailable: 'pending', reason: 'NoRouteCreated', message: 'Node created without a route' };
}
