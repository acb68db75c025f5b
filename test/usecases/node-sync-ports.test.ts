/**
 * Routes mode's cloud alias (lib/dataplane/routes/route-alias.ts, `routeAlias`): a node's alias is what
 * the cluster's tables route to its instance, a route described with the instance's primary
 * interface alone included, as the planner matches it (lib/usecases/route-targets.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Node } from '../../lib/nodes/node.ts';
import type { Route, RouteTable } from '../../lib/routes/index.ts';
import { routeAlias } from '../../lib/dataplane/routes/route-alias.ts';

const INSTANCE = 'i-0123456789abcdef0';
const ENI = 'eni-0123456789abcdef0';
const OTHER_ENI = 'eni-0fedcba9876543210';
const node: Node = { metadata: { name: 'node-a' }, spec: { providerID: `aws:///us-east-1a/${INSTANCE}` } };

const route = (target: Partial<Route>): Route => ({
  routeTableId: 'rtb-1',
  destinationCidr: '100.64.3.0/24',
  family: 4,
  instanceId: null,
  networkInterfaceId: null,
  target: 'other',
  blackhole: false,
  ...target,
});
const tableOf = (...routes: Route[]): RouteTable[] => [{ routeTableId: 'rtb-1', vpcId: 'vpc-1', tags: {}, routes, skippedRoutes: 0 }];

describe('routeAlias', () => {
  it.each([
    ['a route to the instance', route({ target: 'instance', instanceId: INSTANCE, networkInterfaceId: ENI }), new Map<string, string>(), ['100.64.3.0/24']],
    ['a route to its primary interface alone', route({ target: 'interface', networkInterfaceId: ENI }), new Map([[INSTANCE, ENI]]), ['100.64.3.0/24']],
    ['a route to another interface alone', route({ target: 'interface', networkInterfaceId: OTHER_ENI }), new Map([[INSTANCE, ENI]]), []],
    ['an interface alone, its instance\'s interface unknown', route({ target: 'interface', networkInterfaceId: ENI }), new Map<string, string>(), []],
    ['a blackhole to its primary interface', route({ target: 'interface', networkInterfaceId: ENI, blackhole: true }), new Map([[INSTANCE, ENI]]), []],
    ['a route outside the cluster CIDRs', route({ target: 'interface', networkInterfaceId: ENI, destinationCidr: '10.9.0.0/24' }), new Map([[INSTANCE, ENI]]), []],
  ])('%s', async (_what, listed, primaryInterfaces, alias) => {
    expect(await routeAlias(tableOf(listed), ['100.64.0.0/16'], primaryInterfaces).alias(node)).toEqual(alias);
  });
});
