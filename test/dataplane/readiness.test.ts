/**
 * Each data plane's readiness decider (lib/dataplane/routes/readiness.ts,
 * lib/dataplane/prefixes/readiness.ts): NetworkUnavailable true, false or pending, and the
 * condition's text in the plane's own words.
 */
import { describe, expect, it } from 'vitest';
import { conditionText } from '../../lib/dataplane/data-plane.ts';
import type { ReadinessFacts } from '../../lib/dataplane/data-plane.ts';
import { prefixReadiness } from '../../lib/dataplane/prefixes/readiness.ts';
import { routesReadiness } from '../../lib/dataplane/routes/readiness.ts';

describe('readiness deciders', () => {
  it.each<[string, ReadinessFacts, boolean | 'pending', string, string]>([
    ['routes: complete and routed', { podCidrsComplete: true, carried: true }, false, 'RouteCreated', 'routes'],
    ['routes: complete, a table lacks the route', { podCidrsComplete: true, carried: false }, 'pending', 'NoRouteCreated', 'routes'],
    ['routes: a pod CIDR missing', { podCidrsComplete: false, carried: true }, 'pending', 'NoRouteCreated', 'routes'],
    ['routes: a route failed', { podCidrsComplete: true, carried: true, refused: true }, true, 'NoRouteCreated', 'routes'],
    ['prefixes: complete and delegated', { podCidrsComplete: true, carried: true }, false, 'PrefixDelegated', 'prefixes'],
    ['prefixes: a prefix not on the interface', { podCidrsComplete: true, carried: false }, 'pending', 'NoPrefixDelegated', 'prefixes'],
    ['prefixes: a pod CIDR missing', { podCidrsComplete: false, carried: true }, 'pending', 'NoPrefixDelegated', 'prefixes'],
    ['prefixes: no pod range in the subnet', { podCidrsComplete: false, carried: false, refused: true }, true, 'NoPrefixDelegated', 'prefixes'],
  ])('%s', (_name, facts, networkUnavailable, reason, plane) => {
    const decided = (plane === 'routes' ? routesReadiness : prefixReadiness)(facts);
    expect([decided.networkUnavailable, decided.reason]).toEqual([networkUnavailable, reason]);
  });

  it.each([true, false])('the prefixes plane never words its condition as the route controller (unavailable %s)', (unavailable) => {
    const text = conditionText({ readiness: prefixReadiness }, unavailable);
    expect(text.message).not.toMatch(/RouteController|\broutes?\b/i);
    expect(text.reason).not.toMatch(/Route/);
  });

  it.each([
    [true, { reason: 'NoRouteCreated', message: 'RouteController failed to create a route' }],
    [false, { reason: 'RouteCreated', message: 'RouteController created a route' }],
  ])('the routes plane words it as upstream\'s route controller (unavailable %s)', (unavailable, text) => {
    expect(conditionText({ readiness: routesReadiness }, unavailable)).toEqual(text);
  });
});
