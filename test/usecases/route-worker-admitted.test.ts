/**
 * Join-to-ready without a fixed delay (issue 9 goal 4): a `sync-node` from a node's admission
 * carries its instance and pod CIDRs, so the worker routes the node before the API server has
 * stored it; only the condition write waits for the stored node, retried shortly, never into the
 * dead-letter queue.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import { parseWorkMessage, syncNodeMessage } from '../../lib/messages/work-message.ts';
import type { RouteTargets } from '../../lib/usecases/ports.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { leaseTo, startWorld, type World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];
const receive = (receiveCount: number) => ({ receiveCount, maxReceiveCount: 3 });

function depsOf(world: World): RouteWorkerDeps {
  return { clusterCidrs: CLUSTER_CIDRS, routeTables: world.routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log: memoryLogger(), now: world.clock.now };
}

/** The adapter, running `first` before each route-target lookup (where the worker is before any route). */
function beforeTarget(inner: RouteTargets, first: () => Promise<void>): RouteTargets {
  return {
    prepareRouteTarget: async (instanceId) => {
      await first();
      return inner.prepareRouteTarget(instanceId);
    },
  };
}

describe('sync-node from an admission: routes at once, the condition waits for the stored node', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it('routes a node not stored yet from what its admission knew, and retries only for the condition', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const instance = world.ec2.state.addInstance();
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: instance.id, podCidrs: ['100.64.7.0/24'] }));
    // The admission leased the pod CIDR to the node before it queued the message.
    await leaseTo(world.cidrSets, 'node-a', ['100.64.7.0/24']);

    // First receive: the Node is not stored yet, yet both routes are made.
    expect(await handleWorkMessage(message, receive(1), depsOf(world))).toEqual({ outcome: 'retry', status: 'retry' });
    expect(world.routeSummary(t1)).toEqual([`100.64.7.0/24 -> ${instance.id}`]);
    expect(world.routeSummary(t2)).toEqual([`100.64.7.0/24 -> ${instance.id}`]);

    // The API server stores it; the retry finds the routes made and writes the condition.
    await world.addNode('node-a', { podCidrs: ['100.64.7.0/24'], instance, networkUnavailable: 'True' });
    world.resetStats();
    expect(await handleWorkMessage(message, receive(2), depsOf(world))).toEqual({ outcome: 'ack', status: 'in-sync' });
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.ec2Writes()).toBe(0);
  });

  it('writes the condition in the same receive when the node is stored by the time its routes are made', async () => {
    const [t1] = [world.addClusterTable()];
    const instance = world.ec2.state.addInstance();
    const deps = depsOf(world);
    // The API server stores the node while the worker describes the instance (before any route).
    deps.routeTargets = beforeTarget(world.routeTargets, async () => {
      await world.addNode('node-a', { podCidrs: ['100.64.7.0/24'], instance, networkUnavailable: 'True' });
    });
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: instance.id, podCidrs: ['100.64.7.0/24'] }));
    // The admission leased the pod CIDR to the node before it queued the message.
    await leaseTo(world.cidrSets, 'node-a', ['100.64.7.0/24']);
    const notStored = await world.nodes.getNode('node-a').then(() => 'stored', () => 'not stored');
    expect(notStored).toBe('not stored');
    expect(await handleWorkMessage(message, receive(1), deps)).toEqual({ outcome: 'ack', status: 'created' });
    expect(world.routeSummary(t1)).toEqual([`100.64.7.0/24 -> ${instance.id}`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it('does not mark a node stored with other pod CIDRs than admitted; its next receive syncs the stored node', async () => {
    const [t1] = [world.addClusterTable()];
    const instance = world.ec2.state.addInstance();
    const deps = depsOf(world);
    let stored = false;
    deps.routeTargets = beforeTarget(world.routeTargets, async () => {
      // Stored with a pod CIDR of its own making: the lease table gives the node 100.64.7.0/24 only.
      if (!stored) await world.addNode('node-a', { podCidrs: ['100.64.8.0/24'], instance, networkUnavailable: 'True', unleased: true });
      stored = true;
    });
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: instance.id, podCidrs: ['100.64.7.0/24'] }));
    // The admission leased the pod CIDR to the node before it queued the message.
    await leaseTo(world.cidrSets, 'node-a', ['100.64.7.0/24']);
    expect(await handleWorkMessage(message, receive(1), deps)).toEqual({ outcome: 'retry', status: 'retry' });
    expect(world.networkUnavailable('node-a')).toBe('True');
    // Its next receive syncs the stored node, whose pod CIDR is not leased to it: refused, nothing routed.
    expect(await handleWorkMessage(message, receive(2), deps)).toEqual({ outcome: 'ack', status: 'refused:not-leased' });
    expect(world.routeSummary(t1)).toEqual([`100.64.7.0/24 -> ${instance.id}`]);
    expect(world.networkUnavailable('node-a')).toBe('True');
  });

  it('hands a node that never appears back before the dead-letter queue, with nothing written to Kubernetes', async () => {
    world.addClusterTable();
    const instance = world.ec2.state.addInstance();
    const message = JSON.stringify(syncNodeMessage('node-a', { instanceId: instance.id, podCidrs: ['100.64.7.0/24'] }));
    // The admission leased the pod CIDR to the node before it queued the message.
    await leaseTo(world.cidrSets, 'node-a', ['100.64.7.0/24']);
    expect(await handleWorkMessage(message, receive(1), depsOf(world))).toEqual({ outcome: 'retry', status: 'retry' });
    // Later receives take the stored node's path only: nothing stored, nothing more to do.
    expect(await handleWorkMessage(message, receive(2), depsOf(world))).toEqual({ outcome: 'ack', status: 'stale:node-gone' });
    expect(world.kubeWrites()).toBe(0);
  });

  it('accepts admitted facts only in version 2, and only canonical pod CIDRs', () => {
    const instanceId = 'i-0123456789abcdef0';
    expect(() => parseWorkMessage(JSON.stringify({ v: 1, kind: 'sync-node', node: 'node-a', admitted: { instanceId, podCidrs: ['100.64.7.0/24'] } }))).toThrow(
      /admitted is new in version 2/,
    );
    expect(() => parseWorkMessage(JSON.stringify({ v: 2, kind: 'sync-node', node: 'node-a', admitted: { instanceId, podCidrs: ['100.64.7.1/24'] } }))).toThrow(
      /not canonical/,
    );
    expect(() => parseWorkMessage(JSON.stringify({ v: 2, kind: 'sync-node', node: 'node-a', admitted: { instanceId, podCidrs: [] } }))).toThrow(/at least one/);
    expect(syncNodeMessage('node-a')).toEqual({ v: 1, kind: 'sync-node', node: 'node-a' });
  });
});
