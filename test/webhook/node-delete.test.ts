/**
 * A DELETE admitted is not a delete done (issue 7, item 5). The webhook use case, the worker's
 * `node-left` check and reconcile, over the port fakes and the lease table in memory:
 * nothing is released or unrouted at admission; a refused delete leaves the node whole; a node
 * that is really gone (404) loses its leases through the worker and its routes through the planner.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { NODE_LEFT_CHECK_DELAY_SECONDS } from '../../lib/usecases/node-left.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import { memoryLogger } from '../../lib/log.ts';
import { fakeWiring, fakeWorld, type FakeWiring, type FakeWorld } from '../support/fake-world.ts';
import { drainQueue } from '../support/world.ts';

function review(operation: 'CREATE' | 'DELETE', node: Record<string, unknown>) {
  const gvk = { group: '', version: 'v1', kind: 'Node' };
  const gvr = { group: '', version: 'v1', resource: 'nodes' };
  const name = (node.metadata as { name: string }).name;
  return admissionReviewSchema().parse({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `00000000-0000-4000-8000-${operation === 'CREATE' ? '00000000c0de' : '00000000de1e'}`,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name,
      operation,
      userInfo: { username: `system:node:${name}`, groups: ['system:nodes'] },
      object: operation === 'CREATE' ? node : null,
      oldObject: operation === 'DELETE' ? node : null,
      dryRun: false,
    },
  });
}

describe('a DELETE admission', () => {
  let world: FakeWorld;
  let w: FakeWiring;
  let table: string;
  beforeEach(() => {
    world = fakeWorld();
    table = world.addClusterTable();
  });

  const leases = async () => (await Promise.all(w.cidrSets.map((set) => set.leases()))).flat().map((l) => `${l.cidr}=${l.owner}`).sort();
  const stored = (name: string): Record<string, unknown> => {
    const node = world.nodes.peek(name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  };
  /** A stored, leased, routed, Ready node. */
  async function routedNode(name: string, cidr: string) {
    const node = await world.addNode(name, { podCidrs: [cidr], networkUnavailable: 'False' });
    await w.cidrSets[0]?.occupy(cidr, name);
    world.routeTables.addRoute(table, cidr, { instanceId: node.instanceId });
    return node;
  }
  const worker = () => drainQueue(w.queue, w.workerDeps());
  async function tick() {
    await reconcile(w.reconcileDeps());
    return worker();
  }

  it('releases nothing and unroutes nothing: it queues one delayed node-left check (v2)', async () => {
    w = await fakeWiring(world);
    await routedNode('node-a', '100.64.3.0/24');
    w.leases.reset();
    world.resetStats();

    const answer = await admit(review('DELETE', stored('node-a')), w.reconcileDeps());
    expect(answer.response).toEqual({ uid: '00000000-0000-4000-8000-00000000de1e', allowed: true });
    expect(w.queue.sends).toEqual([{ messages: [{ v: 2, kind: 'node-left', node: 'node-a' }], options: { delaySeconds: NODE_LEFT_CHECK_DELAY_SECONDS } }]);
    expect(NODE_LEFT_CHECK_DELAY_SECONDS).toBeGreaterThan(0);
    expect(NODE_LEFT_CHECK_DELAY_SECONDS).toBeLessThanOrEqual(900);
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect([w.leases.writes(), world.ec2Writes(), world.kubeWrites()]).toEqual([0, 0, 0]);
  });

  it('then refused: the node keeps its lease, its route and its Ready condition after the worker’s check and a reconcile', async () => {
    w = await fakeWiring(world);
    const a = await routedNode('node-a', '100.64.3.0/24');
    await admit(review('DELETE', stored('node-a')), w.reconcileDeps());
    // A later validating webhook refuses the delete: the node stays stored, unchanged.

    expect(await worker()).toEqual(['node-left:ack:stale:node-exists']);
    await tick();
    await tick();

    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect(world.routeTables.routeSummary(table)).toEqual([`100.64.3.0/24 -> ${a.instanceId}`]);
    expect(world.nodes.networkUnavailable('node-a')).toBe('False');
  });

  it('then refused, with a /23 cluster CIDR: a joining node never gets the live node’s pod CIDR', async () => {
    w = await fakeWiring(world, { CLUSTER_CIDRS: '100.64.0.0/23' });
    await routedNode('node-a', '100.64.0.0/24');
    await routedNode('node-b', '100.64.1.0/24');
    await admit(review('DELETE', stored('node-a')), w.reconcileDeps());
    await worker();

    // The cluster CIDR is full: node-c is admitted without pod CIDRs rather than with node-a's.
    const c = world.routeTables.addInstance();
    const answer = await admit(review('CREATE', world.nodeObject('node-c', c.instanceId)), w.reconcileDeps());
    expect(answer.response.allowed).toBe(true);
    // No pod CIDR in the patch: only the condition that keeps node-c unschedulable until routed.
    const ops = JSON.parse(Buffer.from(answer.response.patch ?? '', 'base64').toString('utf8')) as Array<{ path: string }>;
    expect(ops.map((op) => op.path)).toEqual(['/status/conditions/-']);
    expect(await leases()).toEqual(['100.64.0.0/24=node-a', '100.64.1.0/24=node-b']);
    expect(world.routeTables.routeSummary(table).filter((line) => line.startsWith('100.64.0.0/24 '))).toHaveLength(1);
  });

  it('the worker releases only once the node is gone (404); the planner, not the worker, deletes its route', async () => {
    w = await fakeWiring(world);
    const a = await routedNode('node-a', '100.64.3.0/24');
    const b = await routedNode('node-b', '100.64.4.0/24');
    const log = memoryLogger();
    const check = JSON.stringify({ v: 2, kind: 'node-left', node: 'node-a' });
    const deps = { ...w.workerDeps(), log };
    const first = { receiveCount: 1, maxReceiveCount: 5 };

    // Still there, no deletion timestamp: the delete was refused.
    expect(await handleWorkMessage(check, first, deps)).toEqual({ outcome: 'ack', status: 'stale:node-exists' });
    expect(await leases()).toEqual(['100.64.3.0/24=node-a', '100.64.4.0/24=node-b']);

    // Being deleted (a finalizer holds it): look again later.
    world.nodes.put({ ...stored('node-a'), metadata: { ...(stored('node-a').metadata as object), deletionTimestamp: '2026-01-01T00:00:05Z', finalizers: ['example.com/hold'] } });
    expect(await handleWorkMessage(check, first, deps)).toEqual({ outcome: 'retry', status: 'retry' });
    // Never into the dead-letter queue for waiting: from the last receive but one (the receive a
    // retryable failure is handed back on), reclaim takes over; the last is left for a crash.
    expect(await handleWorkMessage(check, { receiveCount: 4, maxReceiveCount: 5 }, deps)).toEqual({ outcome: 'ack', status: 'deferred:still-deleting' });
    expect(await handleWorkMessage(check, { receiveCount: 5, maxReceiveCount: 5 }, deps)).toEqual({ outcome: 'ack', status: 'deferred:still-deleting' });
    expect(await leases()).toEqual(['100.64.3.0/24=node-a', '100.64.4.0/24=node-b']);

    // Gone, and its lease past the grace period: the lease goes, the route stays for the planner.
    world.nodes.delete('node-a');
    world.clock.advance(w.config.leaseGraceSeconds * 1000 + 1);
    world.resetStats();
    expect(await handleWorkMessage(check, { receiveCount: 2, maxReceiveCount: 5 }, deps)).toEqual({ outcome: 'ack', status: 'released:100.64.3.0/24' });
    expect(await leases()).toEqual(['100.64.4.0/24=node-b']);
    expect(world.ec2Writes()).toBe(0);
    expect(world.routeTables.routeSummary(table)).toEqual([`100.64.3.0/24 -> ${a.instanceId}`, `100.64.4.0/24 -> ${b.instanceId}`]);
    expect(log.lines.filter((l) => l.event === 'action' && l.action === 'release-cidr')).toEqual([
      expect.objectContaining({ cidr: '100.64.3.0/24', node: 'node-a' }),
    ]);

    // The next reconcile plans the deletion of the ownerless route; node-b's stays.
    await tick();
    expect(world.routeTables.routeSummary(table)).toEqual([`100.64.4.0/24 -> ${b.instanceId}`]);
  });

  it('a released lease of one node is never another node’s: the release is owner-scoped', async () => {
    w = await fakeWiring(world);
    await routedNode('node-b', '100.64.4.0/24');
    await w.cidrSets[0]?.occupy('100.64.3.0/24', 'node-a');
    world.clock.advance(w.config.leaseGraceSeconds * 1000 + 1);
    const deps = { ...w.workerDeps(), log: memoryLogger() };
    const result = await handleWorkMessage(JSON.stringify({ v: 2, kind: 'node-left', node: 'node-a' }), { receiveCount: 1, maxReceiveCount: 5 }, deps);
    expect(result).toEqual({ outcome: 'ack', status: 'released:100.64.3.0/24' });
    expect(await leases()).toEqual(['100.64.4.0/24=node-b']);
  });
});
