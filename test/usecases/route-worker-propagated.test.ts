/** The worker never deletes or replaces a propagated route, even a blackhole one (lib/usecases/route-worker.ts). */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import { applyWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { parseRouteTables } from '../../lib/routes/index.ts';
import { routesWorkerPlane } from '../support/plane.ts';

/** A route as DescribeRouteTables lists it. */
type Ec2Route = Record<string, string>;

/** The port answers the route as the adapter does: EC2's shape translated (lib/routes/route-tables.ts). */
function deps(route: Ec2Route, calls: string[]): RouteWorkerDeps {
  const fail = (name: string) => async () => {
    calls.push(name);
    throw new Error(`${name} must not be called`);
  };
  return {
    clusterCidrs: ['10.244.0.0/16'],
    cidrSets: [], plane: routesWorkerPlane([]),
    leaseGraceSeconds: 600,
    routeTables: {
      // The cluster's tagged tables, as listed: the delete's table is one of them.
      listRouteTables: async () => parseRouteTables({ RouteTables: [{ RouteTableId: 'rtb-0a1b2c3d4e5f60001', Routes: [route] }] }),
      createRoute: fail('createRoute'),
      replaceRoute: fail('replaceRoute'),
      deleteRoute: fail('deleteRoute'),
      describeRoute: async () => parseRouteTables({ RouteTables: [{ RouteTableId: 'rtb-0a1b2c3d4e5f60001', Routes: [route] }] })[0]?.routes[0] ?? null,
    } as unknown as RouteWorkerDeps['routeTables'],
    routeTargets: { prepareRouteTarget: fail('prepareRouteTarget') },
    nodes: {} as RouteWorkerDeps['nodes'],
    log: memoryLogger(),
    now: () => 0,
  };
}

describe('route worker: propagated routes', () => {
  it.each<[string, Ec2Route]>([
    ['a blackhole VGW-propagated route', { DestinationCidrBlock: '10.244.7.0/24', GatewayId: 'vgw-0a1b2c3d4e5f60001', Origin: 'EnableVgwRoutePropagation', State: 'blackhole' }],
    ['a blackhole Route Server route', { DestinationCidrBlock: '10.244.7.0/24', NetworkInterfaceId: 'eni-0a1b2c3d4e5f60001', Origin: 'Advertisement', State: 'blackhole' }],
  ])('a delete message for %s is acknowledged as stale, no EC2 write', async (_name, route) => {
    const calls: string[] = [];
    const result = await applyWorkMessage(
      { v: 1, kind: 'delete', routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.7.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } },
      deps(route, calls),
    );
    expect(result).toBe('stale:foreign-target a propagated route');
    expect(calls).toEqual([]);
  });

  it('a blackhole created with CreateRoute is still deleted', async () => {
    const calls: string[] = [];
    const d = deps({ DestinationCidrBlock: '10.244.7.0/24', NetworkInterfaceId: 'eni-0a1b2c3d4e5f60007', Origin: 'CreateRoute', State: 'blackhole' }, calls);
    await expect(
      applyWorkMessage({ v: 1, kind: 'delete', routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.7.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } }, d),
    ).rejects.toThrow('deleteRoute must not be called');
    expect(calls).toEqual(['deleteRoute']);
  });
});
