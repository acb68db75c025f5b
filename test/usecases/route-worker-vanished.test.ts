/**
 * A route that vanishes between the worker's read and its ReplaceRoute: EC2 answers
 * `InvalidParameterValue` (not `InvalidRoute.NotFound`; the EC2 emulator answers as EC2 does), and
 * the worker re-reads and creates the route instead of reporting the node. Real adapters over HTTP
 * against the emulators; the race is made by deleting the route right before the replace is sent.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import type { RouteTables } from '../../lib/usecases/ports.ts';
import { startWorld, type World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CIDR = '100.64.1.0/24';
const FIRST = { receiveCount: 1, maxReceiveCount: 3 };

/** The adapter, with every ReplaceRoute preceded by `before`. */
function replacingAfter(inner: RouteTables, before: () => void): RouteTables {
  return {
    listRouteTables: () => inner.listRouteTables(),
    createRoute: (spec) => inner.createRoute(spec),
    replaceRoute: (spec) => {
      before();
      return inner.replaceRoute(spec);
    },
    deleteRoute: (spec) => inner.deleteRoute(spec),
    describeRoute: (routeTableId, destinationCidr) => inner.describeRoute(routeTableId, destinationCidr),
  };
}

describe('ReplaceRoute on a route that vanished', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it.each(['moved', 'blackhole'] as const)('a %s route deleted before the replace: the route is created, the node is not reported', async (reason) => {
    const table = world.addClusterTable();
    const other = world.ec2.state.addInstance();
    const otherEni = world.ec2.state.primaryInterface(other.id)?.id ?? '';
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: CIDR, networkInterfaceId: otherEni });
    if (reason === 'blackhole') world.ec2.state.terminateInstance(other.id);
    const a = await world.addNode('node-a', { podCidrs: [CIDR] });
    const routeTables = replacingAfter(world.routeTables, () => world.ec2.state.deleteRoute({ routeTableId: table, destinationCidr: CIDR }));
    const log = memoryLogger();
    const deps: RouteWorkerDeps = { clusterCidrs: ['100.64.0.0/16'], routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log, now: world.clock.now };
    const message: WorkMessage =
      reason === 'moved'
        ? { v: 2, kind: 'replace', routeTableId: table, destinationCidr: CIDR, node: 'node-a', instanceId: a.instanceId, reason, expect: { instanceId: other.id } }
        : { v: 1, kind: 'replace', routeTableId: table, destinationCidr: CIDR, node: 'node-a', instanceId: a.instanceId, reason };

    expect(await handleWorkMessage(JSON.stringify(message), FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.ec2.stats.count('ReplaceRoute')).toBe(1);
    expect(world.route(table, CIDR)).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, state: 'active' });
    expect(world.eventReasons('node-a')).toEqual([]);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });
});
