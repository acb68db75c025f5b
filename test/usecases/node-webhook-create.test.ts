/**
 * The webhook's CREATE admission and the lease table's authority (ARCHITECTURE.md, "Authority"):
 * a pod CIDR a CREATE claims is never adopted at admission (only reconcile adopts), a claim on
 * another node's lease is a conflict, a node that exists already is left alone, a block another
 * node carries is never handed out, and every admitted node is created NetworkUnavailable=True.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { nodeCreateReview } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring, type TestWiring } from '../support/wiring.ts';
import { type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

type PatchOp = { op: string; path: string; value?: unknown };

const answerOf = (response: unknown): { patch: PatchOp[]; warnings: string[] } => {
  const r = (response as { response?: { patch?: string; warnings?: string[] } }).response;
  const patch = r?.patch === undefined ? [] : (JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')) as PatchOp[]);
  return { patch, warnings: r?.warnings ?? [] };
};

/** The fake clock's start, as the condition's transition time. */
const AT = '2026-01-01T00:00:00Z';
const UNAVAILABLE = { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'Node created without a route', lastTransitionTime: AT };
/** A kubelet-registered node comes with status.conditions: ours is appended. */
const conditionOp = { op: 'add', path: '/status/conditions/-', value: UNAVAILABLE };

async function setup(): Promise<{ w: TestWiring; leases: () => Promise<string[]> }> {
  world.addClusterTable();
  const w = await testWiring(world, local);
  const leases = async () => ((await w.wiring.cidrSets[0]?.leases()) ?? []).map((l) => `${l.cidr}=${l.owner}`);
  return { w, leases };
}

describe('CREATE admission', () => {
  it('allocates a block and creates the node NetworkUnavailable=True (NoRouteCreated) in the same patch', async () => {
    const { w, leases } = await setup();
    const instance = world.ec2.state.addInstance();
    const { patch } = answerOf(await admit(nodeCreateReview(world.nodeObject('node-a', instance.id)), w.reconcileDeps()));
    expect(patch).toEqual([
      { op: 'add', path: '/spec/podCIDR', value: '100.64.0.0/24' },
      { op: 'add', path: '/spec/podCIDRs', value: ['100.64.0.0/24'] },
      conditionOp,
    ]);
    expect(await leases()).toEqual(['100.64.0.0/24=node-a']);
    expect(w.queue.sends).toEqual([
      { messages: [{ v: 2, kind: 'sync-node', node: 'node-a', admitted: { instanceId: instance.id, podCidrs: ['100.64.0.0/24'] } }], options: { delaySeconds: 0 } },
    ]);
  });

  it.each([
    ['the exact block another node leases', ['100.64.3.0/24']],
    ['a sub-range of another node\'s block', ['100.64.3.128/25']],
    ['a single address in another node\'s block', ['100.64.3.7/32']],
    ['the whole cluster CIDR', ['100.64.0.0/16']],
  ])('a claim on %s is a conflict: no lease, no route message, NetworkUnavailable=True; the owner is untouched', async (_name, claim) => {
    const { w, leases } = await setup();
    await w.wiring.cidrSets[0]?.occupy('100.64.3.0/24', 'node-owner');
    w.dynamo.reset();
    const instance = world.ec2.state.addInstance();
    const { patch, warnings } = answerOf(await admit(nodeCreateReview(world.nodeObject('node-thief', instance.id, claim)), w.reconcileDeps()));
    expect(patch).toEqual([conditionOp]);
    expect(warnings.join('\n')).toContain('node-owner');
    expect(await leases()).toEqual(['100.64.3.0/24=node-owner']);
    expect(w.queue.sends).toEqual([]);
    expect(w.dynamo.writes()).toBe(0);
    expect(w.log.lines.filter((l) => l.event === 'webhook.claim-refused').map((l) => [l.node, l.reason])).toEqual([['node-thief', 'conflict']]);
  });

  it('a free pod CIDR the CREATE claims is not adopted at admission: reconcile decides', async () => {
    const { w, leases } = await setup();
    const instance = world.ec2.state.addInstance();
    const { patch } = answerOf(await admit(nodeCreateReview(world.nodeObject('node-b', instance.id, ['100.64.9.0/24'])), w.reconcileDeps()));
    expect(patch).toEqual([conditionOp]);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
    expect(w.log.lines.filter((l) => l.event === 'webhook.claim-refused').map((l) => l.reason)).toEqual(['unverified']);
  });

  it('a claim of exactly the block the node already leases is its own: queued, no second lease', async () => {
    const { w, leases } = await setup();
    await w.wiring.cidrSets[0]?.occupy('100.64.4.0/24', 'node-c');
    const instance = world.ec2.state.addInstance();
    const { patch } = answerOf(await admit(nodeCreateReview(world.nodeObject('node-c', instance.id, ['100.64.4.0/24'])), w.reconcileDeps()));
    expect(patch).toEqual([conditionOp]);
    expect(await leases()).toEqual(['100.64.4.0/24=node-c']);
    expect(w.queue.sends).toEqual([
      { messages: [{ v: 2, kind: 'sync-node', node: 'node-c', admitted: { instanceId: instance.id, podCidrs: ['100.64.4.0/24'] } }], options: { delaySeconds: 0 } },
    ]);
  });

  it('a kubelet CREATE of a node that exists (the server answers AlreadyExists after admission) allocates and queues nothing', async () => {
    const { w, leases } = await setup();
    const stored = await world.addNode('node-d');
    w.dynamo.reset();
    world.resetStats();
    // The kubelet restarts and sends its Node again; the stored one has no pod CIDR yet.
    const answer = answerOf(await admit(nodeCreateReview(world.nodeObject('node-d', stored.instanceId)), w.reconcileDeps()));
    // The condition is patched in regardless: the CREATE is refused AlreadyExists after admission.
    expect(answer.patch).toEqual([conditionOp]);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
    expect(w.dynamo.writes()).toBe(0);
    // One keyed read told it (no listing).
    expect(world.kube.stats.all()).toEqual({ 'GET /api/v1/nodes/{name}': 1 });
  });

  it('never hands out a block a stored node carries without a lease (written by someone else since the last reconcile)', async () => {
    const { w, leases } = await setup();
    // Written on node-e by another writer: no lease says so.
    await world.addNode('node-e', { podCidrs: ['100.64.0.0/24'] });
    const instance = world.ec2.state.addInstance();
    const { patch } = answerOf(await admit(nodeCreateReview(world.nodeObject('node-f', instance.id)), w.reconcileDeps()));
    expect(patch.slice(0, 2)).toEqual([
      { op: 'add', path: '/spec/podCIDR', value: '100.64.1.0/24' },
      { op: 'add', path: '/spec/podCIDRs', value: ['100.64.1.0/24'] },
    ]);
    expect(await leases()).toEqual(['100.64.1.0/24=node-f']);
  });

  it.each([
    ['a server error', { kind: 'error', code: 500 }],
    ['throttling', { kind: 'error', code: 429 }],
  ] as const)('when the keyed read of the node fails (%s) the node is still created NetworkUnavailable=True, nothing allocated or queued', async (_name, failure) => {
    const { w, leases } = await setup();
    const instance = world.ec2.state.addInstance();
    world.kube.state.setFailure({ ...failure, times: 10, match: 'GET /api/v1/nodes/{name}' });
    const { patch, warnings } = answerOf(await admit(nodeCreateReview(world.nodeObject('node-g', instance.id)), w.reconcileDeps()));
    expect(patch).toEqual([conditionOp]);
    expect(warnings.length).toBe(1);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
  });

  it.each([
    ['without a pod CIDR (allocated)', null],
    ['with its own leased block', '100.64.7.0/24'],
  ])('a new node naming a stored node\'s instance, %s, is queued without what it was admitted with: the stored node keeps its routes', async (_name, ownBlock) => {
    const { w } = await setup();
    const victim = await world.addNode('victim', { podCidrs: ['100.64.3.0/24'] });
    if (ownBlock !== null) await w.wiring.cidrSets[0]?.occupy(ownBlock, 'thief');
    const claim = ownBlock === null ? [] : [ownBlock];
    const { patch, warnings } = answerOf(await admit(nodeCreateReview(world.nodeObject('thief', victim.instanceId, claim)), w.reconcileDeps()));
    expect(patch).toContainEqual(conditionOp);
    expect(w.queue.sends).toEqual([{ messages: [{ v: 1, kind: 'sync-node', node: 'thief' }], options: { delaySeconds: 0 } }]);
    expect(warnings).toEqual([expect.stringContaining(`node victim`)]);
    expect(warnings[0]).toContain(victim.instanceId);
    expect(w.log.lines.filter((l) => l.event === 'webhook.instance-shared').map((l) => [l.node, l.holder])).toEqual([['thief', 'victim']]);
  });
});

