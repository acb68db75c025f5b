/**
 * A node's sync-node makes its independent calls side by side, against the EC2 and Kubernetes
 * emulators: the node and the route tables are read at once, and after the first route write
 * (which finds the route target) the node's other tables are written together, with the target
 * looked up once. A node found gone is answered so whatever the listing beside its read did.
 */
import { describe, expect, it } from 'vitest';
import { PodrouteError } from '../../lib/errors.ts';
import { memoryLogger } from '../../lib/log.ts';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import type { NodeSource, RouteTables, RouteTargets } from '../../lib/usecases/ports.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { useWorld } from '../support/use-world.ts';
import type { World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];
const FIRST = { receiveCount: 1, maxReceiveCount: 3 };

/** The calls the worker makes, as `<call>:start` and `<call>:end` in the order they happen, and the most CreateRoutes in flight. */
function recording(world: World) {
  const events: string[] = [];
  let creating = 0;
  let mostCreating = 0;
  const timed = async <T>(call: string, run: () => Promise<T>): Promise<T> => {
    events.push(`${call}:start`);
    try {
      return await run();
    } finally {
      events.push(`${call}:end`);
    }
  };
  const routeTables: RouteTables = Object.assign(Object.create(world.routeTables) as RouteTables, {
    listRouteTables: () => timed('listRouteTables', () => world.routeTables.listRouteTables()),
    createRoute: async (spec: Parameters<RouteTables['createRoute']>[0]) => {
      creating++;
      mostCreating = Math.max(mostCreating, creating);
      try {
        return await timed('createRoute', () => world.routeTables.createRoute(spec));
      } finally {
        creating--;
      }
    },
  });
  const nodes: NodeSource = Object.assign(Object.create(world.nodes) as NodeSource, {
    getNode: (name: string) => timed('getNode', () => world.nodes.getNode(name)),
  });
  const routeTargets: RouteTargets = { prepareRouteTarget: (instanceId) => timed('prepareRouteTarget', () => world.routeTargets.prepareRouteTarget(instanceId)) };
  const deps: RouteWorkerDeps = {
    clusterCidrs: CLUSTER_CIDRS,
    routeTables,
    routeTargets,
    nodes,
    cidrSets: world.cidrSets,
    plane: routesWorkerPlane(world.cidrSets),
    leaseGraceSeconds: 600,
    log: memoryLogger(),
    now: world.clock.now,
    targets: new Map(),
  };
  return { deps, events, mostCreating: () => mostCreating };
}

describe('sync-node: independent calls side by side', () => {
  let world: World;
  useWorld((w) => (world = w));

  it('reads the node and the route tables at once', async () => {
    world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const { deps, events } = recording(world);
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: a.instanceId, podCidrs: ['100.64.1.0/24'] }));
    expect(await handleWorkMessage(message, FIRST, deps)).toEqual({ outcome: 'ack', status: 'created' });
    // Both started before either answered.
    const reads = events.filter((e) => e.startsWith('getNode') || e.startsWith('listRouteTables'));
    expect(reads.slice(0, 2).sort()).toEqual(['getNode:start', 'listRouteTables:start']);
  });

  it('answers a node that is gone as gone even when the listing read beside it fails', async () => {
    world.addClusterTable();
    const { deps, events } = recording(world);
    const failing: RouteWorkerDeps = { ...deps, routeTables: Object.assign(Object.create(deps.routeTables) as RouteTables, { listRouteTables: () => Promise.reject(new PodrouteError('throttled', { retryable: true })) }) };
    const message = JSON.stringify({ v: 1, kind: 'sync-node', node: 'node-gone' });
    // A later receive: a node still not stored is gone (a first receive waits for the API server).
    expect(await handleWorkMessage(message, { receiveCount: 2, maxReceiveCount: 5 }, failing)).toEqual({ outcome: 'ack', status: 'stale:node-gone' });
    expect(events).toEqual(['getNode:start', 'getNode:end']);
  });

  it('writes the other tables together after the first, looking the route target up once', async () => {
    const tables = [world.addClusterTable(), world.addClusterTable(), world.addClusterTable()];
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const { deps, events, mostCreating } = recording(world);
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: a.instanceId, podCidrs: ['100.64.1.0/24'] }));
    expect(await handleWorkMessage(message, FIRST, deps)).toEqual({ outcome: 'ack', status: 'created,created,created' });
    for (const table of tables) expect(world.routeSummary(table)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(events.filter((e) => e === 'prepareRouteTarget:start')).toHaveLength(1);
    const writes = events.filter((e) => e.startsWith('createRoute'));
    // The first write alone, then the two others in flight together.
    expect(writes).toEqual(['createRoute:start', 'createRoute:end', 'createRoute:start', 'createRoute:start', 'createRoute:end', 'createRoute:end']);
    expect(mostCreating()).toBe(2);
  });
});
