/**
 * The shared route rules (lib/routes/route-rules.ts): which route of a destination counts, whether
 * a route is the node's, and the planner's delete rule for one destination as the worker runs it.
 */
import { describe, expect, it } from 'vitest';
import type { Route } from '../../lib/routes/route-tables.ts';
import { deleteVerdict, destinationRoutes, isNodesRoute, wantedVerdict } from '../../lib/routes/route-rules.ts';
import { type RouteSpec, inst, tables } from './fixtures.ts';

const TO = '100.64.1.0/24';
const routeOf = (spec: RouteSpec): Route => {
  const route = tables({ id: 'rtb-1', routes: [spec] })[0]?.routes[0];
  if (!route) throw new Error('no route');
  return route;
};
const routeServer = (): Route => ({ ...routeOf({ to: TO, eni: 'eni-rs' }), propagated: 'route-server' });
const vgw = routeOf({ to: TO, vgw: 'vgw-1' });

describe('which route of a destination counts', () => {
  it.each([
    ['a static route beside a VGW one: the static one', [vgw, routeOf({ to: TO, instance: 1 })], inst(1), 'vgw'],
    ['two static routes: the active one', [routeOf({ to: TO, blackhole: true }), routeOf({ to: TO, instance: 2 })], inst(2), undefined],
    ['VGW and Route Server: no static, the Route Server one', [vgw, routeServer()], undefined, 'route-server'],
    ['nothing', [], undefined, undefined],
  ] as const)('%s', (_name, routes, instanceId, propagated) => {
    const seen = destinationRoutes(routes);
    expect(seen.static?.instanceId ?? undefined).toBe(instanceId);
    expect(seen.propagated?.propagated).toBe(propagated);
  });
});

describe("is this the node's route", () => {
  const toNode = routeOf({ to: TO, instance: 1 }); // EC2 shows the instance and eni-000…1
  it.each([
    ['to its instance', toNode, undefined, true],
    ['to its instance, through its primary interface', toNode, `eni-${inst(1).slice(2)}`, true],
    ['to its instance, through another interface', toNode, 'eni-other', false],
    ['to another instance', routeOf({ to: TO, instance: 2 }), undefined, false],
    ['a blackhole', routeOf({ to: TO, blackhole: true }), undefined, false],
    ['a propagated route', routeServer(), 'eni-rs', false],
  ] as const)('%s: %s', (_name, route, primaryEni, mine) => {
    expect(isNodesRoute(route, inst(1), primaryEni)).toBe(mine);
  });

  it('a wanted destination whose route is the node\'s is kept; one to an unmanaged node\'s instance is blocked', () => {
    const other = routeOf({ to: TO, instance: 2 });
    expect(wantedVerdict(destinationRoutes([toNode]), { instanceId: inst(1) }, new Set()).kind).toBe('keep');
    expect(wantedVerdict(destinationRoutes([other]), { instanceId: inst(1) }, new Set())).toEqual({ kind: 'replace', reason: 'moved' });
    expect(wantedVerdict(destinationRoutes([other]), { instanceId: inst(1) }, new Set([inst(2)]))).toMatchObject({ kind: 'blocked', reason: 'foreign-target' });
    expect(wantedVerdict(destinationRoutes([routeServer()]), { instanceId: inst(1) }, new Set())).toMatchObject({ kind: 'blocked', reason: 'propagated-route' });
  });
});

describe('the delete rule for one destination', () => {
  const live = routeOf({ to: TO, instance: 2 });
  it.each([
    ['a gateway route', routeOf({ to: TO, gateway: 'igw-1' }), 'no-owner', { instanceId: inst(2), blackhole: false }, { kind: 'stale', status: 'stale:foreign-target igw-1' }],
    ['a propagated blackhole', { ...vgw, blackhole: true }, 'blackhole', { instanceId: null, blackhole: true }, { kind: 'stale', status: 'stale:foreign-target a propagated route' }],
    ['a blackhole planned, active now', live, 'blackhole', { instanceId: null, blackhole: true }, { kind: 'stale', status: 'stale:no-longer-blackhole' }],
    ['planned active, a blackhole now', routeOf({ to: TO, blackhole: true }), 'no-owner', { instanceId: inst(2), blackhole: false }, { kind: 'stale', status: 'stale:state-changed' }],
    ['re-pointed since the plan', live, 'no-owner', { instanceId: inst(3), blackhole: false }, { kind: 'stale', status: 'stale:target-changed' }],
    ['as planned, live: the lease table decides', live, 'no-owner', { instanceId: inst(2), blackhole: false }, { kind: 'check-owner', instanceId: inst(2) }],
    ['as planned, a blackhole', routeOf({ to: TO, blackhole: true }), 'blackhole', { instanceId: null, blackhole: true }, { kind: 'delete' }],
  ] as const)('%s', (_name, route, reason, expected, verdict) => {
    expect(deleteVerdict(route, { reason, expect: expected })).toEqual(verdict);
  });
});
