/**
 * A node's join under an external cloud controller manager, over the port fakes: the kubelet's
 * CREATE carries no providerID (left alone), the CCM's UPDATE that first sets it gets the CREATE's
 * fast path (a leased block in the answer's patch, a `sync-node` with what was admitted), and the
 * worker routes it before the update is stored. Any other UPDATE, whatever let it through, changes
 * nothing: no lease, no message, no patch.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import { memoryLogger } from '../../lib/log.ts';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';
import { admissionReview } from '../../infra/local/kube/admission.ts';
import { ADMIN } from '../../infra/local/kube/identity.ts';
import { fakeWiring, fakeWorld, type FakeWiring, type FakeWorld } from '../support/fake-world.ts';

type Obj = Record<string, unknown>;

let world: FakeWorld;
beforeEach(() => {
  world = fakeWorld();
});

/** The node as the kubelet registered it with `--cloud-provider=external`: no providerID yet. */
function withoutProviderId(node: Obj): Obj {
  const { providerID: _unset, ...spec } = node.spec as Obj;
  return { ...node, spec };
}

function updateReview(oldObject: Obj, object: Obj, uid = '33333333-0000-4000-8000-000000000001') {
  const name = (object.metadata as { name: string }).name;
  return admissionReviewSchema().parse(admissionReview(uid, 'UPDATE', name, object, oldObject, ADMIN));
}

const patchOf = (response: { response: { patch?: string } }): unknown[] =>
  response.response.patch === undefined ? [] : (JSON.parse(Buffer.from(response.response.patch, 'base64').toString('utf8')) as unknown[]);

async function setup(): Promise<{ w: FakeWiring; table: string; leases: () => Promise<string[]> }> {
  const table = world.addClusterTable();
  const w = await fakeWiring(world);
  const leases = async () => (await Promise.all(w.reconcileDeps().cidrSets.map((s) => s.leases()))).flat().map((l) => `${l.cidr}=${l.owner}`);
  return { w, table, leases };
}

describe('UPDATE admission: the update that first sets spec.providerID is the join', () => {
  it('allocates a block into the patch (no status op: an update keeps the stored status) and queues what was admitted', async () => {
    const { w, leases } = await setup();
    const { instanceId } = world.routeTables.addInstance();
    const joined = world.nodeObject('node-a', instanceId);
    const response = await admit(updateReview(withoutProviderId(joined), joined), w.reconcileDeps());
    expect(response.response.allowed).toBe(true);
    expect(patchOf(response)).toEqual([
      { op: 'add', path: '/spec/podCIDR', value: '100.64.0.0/24' },
      { op: 'add', path: '/spec/podCIDRs', value: ['100.64.0.0/24'] },
    ]);
    expect(await leases()).toEqual(['100.64.0.0/24=node-a']);
    expect(w.queue.messages).toEqual([{ v: 2, kind: 'sync-node', node: 'node-a', admitted: { instanceId, podCidrs: ['100.64.0.0/24'] } }]);
  });

  it.each<[string, (node: Obj) => [Obj, Obj]]>([
    ['a label change of a node with a providerID', (node) => [node, { ...node, metadata: { ...(node.metadata as Obj), labels: { team: 'a' } } }]],
    ['an update that leaves the providerID unset', (node) => [withoutProviderId(node), { ...withoutProviderId(node), metadata: { ...(node.metadata as Obj), labels: { team: 'b' } } }]],
    ['a forged providerID change (set -> another instance)', (node) => [node, { ...node, spec: { ...(node.spec as Obj), providerID: 'aws:///us-east-1a/i-0fffffffffffffff9' } }]],
    ['an update that sets the providerID to an empty string', (node) => [withoutProviderId(node), { ...node, spec: { ...(node.spec as Obj), providerID: '' } }]],
  ])('%s: allowed untouched, nothing leased or queued', async (_name, pair) => {
    const { w, leases } = await setup();
    const { instanceId } = world.routeTables.addInstance();
    const [oldObject, object] = pair(world.nodeObject('node-b', instanceId));
    const response = await admit(updateReview(oldObject, object), w.reconcileDeps());
    expect(response.response).toEqual({ uid: '33333333-0000-4000-8000-000000000001', allowed: true });
    expect(await leases()).toEqual([]);
    expect(w.queue.messages).toEqual([]);
  });

  it('judges a pod CIDR the joining node carries against the leases, never adopting it', async () => {
    const { w, leases } = await setup();
    await w.reconcileDeps().cidrSets[0]?.occupy('100.64.3.0/24', 'node-owner');
    const { instanceId } = world.routeTables.addInstance();
    const joined = world.nodeObject('claimant', instanceId, ['100.64.3.0/24']);
    const response = await admit(updateReview(withoutProviderId(joined), joined), w.reconcileDeps());
    expect(patchOf(response)).toEqual([]);
    expect(response.response.warnings?.join(' ')).toMatch(/100\.64\.3\.0\/24/);
    expect(await leases()).toEqual(['100.64.3.0/24=node-owner']);
    expect(w.queue.messages).toEqual([]);
  });

  it('a dry-run UPDATE takes nothing', async () => {
    const { w, leases } = await setup();
    const { instanceId } = world.routeTables.addInstance();
    const joined = world.nodeObject('node-d', instanceId);
    const review = updateReview(withoutProviderId(joined), joined);
    const response = await admit({ ...review, request: { ...review.request, dryRun: true } }, w.reconcileDeps());
    expect(patchOf(response)).toEqual([]);
    expect(await leases()).toEqual([]);
  });
});

describe('the worker after an UPDATE join', () => {
  it('routes from the admission while the stored node is still the one before it, then settles the condition once it is stored', async () => {
    const { w, table } = await setup();
    const { instanceId } = world.routeTables.addInstance();
    const joined = world.nodeObject('node-c', instanceId);
    world.nodes.put(withoutProviderId(joined));
    await admit(updateReview(withoutProviderId(joined), joined), w.reconcileDeps());
    const [message] = w.queue.messages;
    const deps = { ...w.workerDeps(), log: memoryLogger() };

    // The API server has not stored the update yet: the route is made, the condition waits (retry).
    const first = await handleWorkMessage(JSON.stringify(message), { receiveCount: 1, maxReceiveCount: 3 }, deps);
    expect(first.outcome).toBe('retry');
    expect(world.routeTables.routeSummary(table)).toEqual([`100.64.0.0/24 -> ${instanceId}`]);
    expect(world.nodes.networkUnavailable('node-c')).toBeNull();

    // Stored now, as admitted: the next receive finds the route in place and marks the node ready.
    world.nodes.put({ ...joined, spec: { ...(joined.spec as Obj), podCIDR: '100.64.0.0/24', podCIDRs: ['100.64.0.0/24'] } });
    const second = await handleWorkMessage(JSON.stringify(message), { receiveCount: 2, maxReceiveCount: 3 }, deps);
    expect(second.outcome).toBe('ack');
    expect(world.nodes.networkUnavailable('node-c')).toBe('False');
    expect(world.routeTables.routeSummary(table)).toEqual([`100.64.0.0/24 -> ${instanceId}`]);
  });
});
