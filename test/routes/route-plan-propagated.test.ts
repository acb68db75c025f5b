/**
 * EC2 keeps a static route and a propagated route with the same destination side by side, and the
 * static one wins (Amazon VPC User Guide, "How route priority works": "If the destination of a
 * propagated route is identical to the destination of a static route, the static route takes
 * priority", with a table holding 172.31.0.0/24 -> vgw (propagated) and 172.31.0.0/24 -> igw).
 * The planner decides on a destination's static (CreateRoute) route only; propagated routes are
 * context, never touched. (From the review test propagated-and-static.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { planRoutes } from '../../lib/routes/route-plan.ts';
import { parseRouteTables } from '../../lib/routes/route-tables.ts';

const RTB = 'rtb-0a1b2c3d4e5f60001';
const NODE = { metadata: { name: 'n1' }, spec: { podCIDR: '10.244.3.0/24', providerID: 'aws:///us-east-1a/i-0a1b2c3d4e5f60009' } };
const DEAD_STATIC = { DestinationCidrBlock: '10.244.3.0/24', InstanceOwnerId: '111122223333', NetworkInterfaceId: 'eni-0a1b2c3d4e5f60003', Origin: 'CreateRoute', State: 'blackhole' };
const LIVE_STATIC = { DestinationCidrBlock: '10.244.3.0/24', InstanceId: 'i-0a1b2c3d4e5f60009', InstanceOwnerId: '111122223333', NetworkInterfaceId: 'eni-0a1b2c3d4e5f60009', Origin: 'CreateRoute', State: 'active' };
const OTHER_STATIC = { ...LIVE_STATIC, InstanceId: 'i-0a1b2c3d4e5f60004', NetworkInterfaceId: 'eni-0a1b2c3d4e5f60004' };
const VGW = { DestinationCidrBlock: '10.244.3.0/24', GatewayId: 'vgw-0a1b2c3d4e5f60001', Origin: 'EnableVgwRoutePropagation', State: 'active' };
const ROUTE_SERVER = { DestinationCidrBlock: '10.244.3.0/24', NetworkInterfaceId: 'eni-0a1b2c3d4e5f60007', Origin: 'Advertisement', State: 'active' };

function planFor(routes: unknown[], nodes: unknown[] = [NODE]) {
  const routeTables = parseRouteTables({ RouteTables: [{ RouteTableId: RTB, Tags: [{ Key: 'kubernetes.io/cluster/demo', Value: 'owned' }], Routes: routes }] });
  return planRoutes({ clusterName: 'demo', clusterCidrs: ['10.244.0.0/16'], routeTables, nodes: nodes as Parameters<typeof planRoutes>[0]['nodes'], minDeletesForGuard: 1000 });
}

const summary = (plan: ReturnType<typeof planRoutes>) => ({
  create: plan.create.map((op) => op.destinationCidr),
  replace: plan.replace.map((op) => `${op.destinationCidr} ${op.reason}`),
  delete: plan.delete.map((op) => `${op.destinationCidr} ${op.reason}`),
  warnings: (plan.warnings ?? []).map((w) => w.reason),
  nodes: plan.nodes.map((n) => `${n.node} ${String(n.networkUnavailable)}`),
});

describe('planRoutes: static and propagated routes with one destination', () => {
  it.each([
    ['static first', [DEAD_STATIC, VGW]],
    ['propagated first', [VGW, DEAD_STATIC]],
  ])('replaces the blackhole static route of a live node beside a VGW route (%s)', (_order, routes) => {
    expect(summary(planFor(routes))).toEqual({ create: [], replace: ['10.244.3.0/24 blackhole'], delete: [], warnings: [], nodes: ['n1 pending'] });
  });

  it.each([
    ['static first', [OTHER_STATIC, VGW]],
    ['propagated first', [VGW, OTHER_STATIC]],
  ])('moves the static route of a live node beside a VGW route (%s)', (_order, routes) => {
    expect(summary(planFor(routes)).replace).toEqual(['10.244.3.0/24 moved']);
  });

  it('a live static route to the node beside a VGW route is done: no op, no warning', () => {
    expect(summary(planFor([VGW, LIVE_STATIC]))).toEqual({ create: [], replace: [], delete: [], warnings: [], nodes: ['n1 false'] });
  });

  it('only a VGW route: creates the static route beside it (it takes priority), with a warning', () => {
    expect(summary(planFor([VGW]))).toEqual({ create: ['10.244.3.0/24'], replace: [], delete: [], warnings: ['propagated-route'], nodes: ['n1 pending'] });
  });

  it('only a VPC Route Server route: no op, the node is blocked with a warning', () => {
    expect(summary(planFor([ROUTE_SERVER]))).toEqual({ create: [], replace: [], delete: [], warnings: ['propagated-route'], nodes: ['n1 true'] });
  });

  it.each([
    ['a blackhole', [VGW, DEAD_STATIC], '10.244.3.0/24 blackhole'],
    ['an ownerless', [VGW, OTHER_STATIC], '10.244.3.0/24 no-owner'],
  ])('no node wants the destination: deletes %s static route, never the propagated one', (_kind, routes, deleted) => {
    const other = { metadata: { name: 'n2' }, spec: { podCIDR: '10.244.9.0/24', providerID: 'aws:///us-east-1a/i-0a1b2c3d4e5f60002' } };
    expect(summary(planFor(routes, [other])).delete).toEqual([deleted]);
  });
});
