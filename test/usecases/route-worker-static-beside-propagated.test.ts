/**
 * The route worker with a static and a propagated route to one destination (Amazon VPC User
 * Guide, "How route priority works": they coexist and the static route wins). The worker acts on
 * the static (CreateRoute) route, whatever order DescribeRouteTables lists them in, and never on
 * the propagated one. Real adapters over HTTP, the EC2 emulator behind (addPropagatedRoute).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { startWorld, type World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const VGW = 'vgw-0a1b2c3d4e5f60001';
const body = (message: WorkMessage): string => JSON.stringify(message);

function depsOf(world: World): RouteWorkerDeps {
  return { clusterCidrs: ['100.64.0.0/16'], routeTables: world.routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log: memoryLogger(), now: world.clock.now };
}

/** The table's routes to `cidr`, as `origin target state` strings, in listing order. */
function routesTo(world: World, tableId: string, cidr: string): string[] {
  return world.ec2.state
    .routes(tableId)
    .filter((r) => r.destinationCidrBlock === cidr)
    .map((r) => `${r.origin} ${r.instanceId ?? r.gatewayId ?? r.networkInterfaceId ?? '?'} ${r.state}`);
}

describe('route worker: a static route beside a propagated one', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it('replaces a blackhole static route of a live node listed after a VGW route to the same destination', async () => {
    const t1 = world.addClusterTable();
    const dead = world.ec2.state.addInstance();
    world.ec2.state.addPropagatedRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', gatewayId: VGW });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', instanceId: dead.id });
    world.ec2.state.terminateInstance(dead.id);
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });

    expect(await handleWorkMessage(body({ v: 1, kind: 'sync-node', node: 'node-a' }), FIRST, depsOf(world))).toEqual({ outcome: 'ack', status: 'replaced' });
    expect(routesTo(world, t1, '100.64.1.0/24')).toEqual([`EnableVgwRoutePropagation ${VGW} active`, `CreateRoute ${a.instanceId} active`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it('creates the static route beside a VGW route that is the only one to the destination', async () => {
    const t1 = world.addClusterTable();
    world.ec2.state.addPropagatedRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', gatewayId: VGW });
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });

    const message = body({ v: 1, kind: 'create', routeTableId: t1, destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: a.instanceId });
    expect(await handleWorkMessage(message, FIRST, depsOf(world))).toEqual({ outcome: 'ack', status: 'created' });
    expect(routesTo(world, t1, '100.64.1.0/24')).toEqual([`EnableVgwRoutePropagation ${VGW} active`, `CreateRoute ${a.instanceId} active`]);
  });

  it('a delete message removes the blackhole static route and leaves the VGW route', async () => {
    const t1 = world.addClusterTable();
    const dead = world.ec2.state.addInstance();
    world.ec2.state.addPropagatedRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', gatewayId: VGW });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', instanceId: dead.id });
    world.ec2.state.terminateInstance(dead.id);

    const message = body({ v: 1, kind: 'delete', routeTableId: t1, destinationCidr: '100.64.9.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } });
    expect(await handleWorkMessage(message, FIRST, depsOf(world))).toEqual({ outcome: 'ack', status: 'deleted' });
    expect(routesTo(world, t1, '100.64.9.0/24')).toEqual([`EnableVgwRoutePropagation ${VGW} active`]);
  });
});
