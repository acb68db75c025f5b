/**
 * A stored node's pod CIDR is a claim (ARCHITECTURE.md, "Authority"): the webhook never adopts it
 * (a signed `NodeJoined` syncs only a node without one or one whose pod CIDR is its own lease), and
 * the CREATE admission lets it keep a block out of allocation only when the ownership decider
 * could give it to that node. A conflict claim (the whole cluster CIDR) changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { admit, handleNodeEvent } from '../../lib/usecases/node-webhook.ts';
import { nodeCreateReview } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

type TestWiring = Awaited<ReturnType<typeof testWiring>>;
const leasesOf = async (w: TestWiring) => ((await w.wiring.cidrSets[0]?.leases()) ?? []).map((l) => [l.cidr, l.owner]).sort();
const patchOf = (response: unknown): unknown[] | null => {
  const patch = (response as { response?: { patch?: string } }).response?.patch;
  return patch === undefined ? null : (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as unknown[]);
};

describe('NodeJoined of a stored node with a pod CIDR', () => {
  it.each<[string, string[]]>([
    ['the whole cluster CIDR', ['100.64.0.0/16']],
    ['a sub-range of another node\'s block', ['100.64.3.0/25']],
    ['an unleased block (adoption is reconcile\'s)', ['100.64.9.0/24']],
  ])('%s: accepted for reconcile, no lease taken, nothing queued', async (_name, podCidrs) => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    await w.wiring.cidrSets[0]?.occupy('100.64.3.0/24', 'node-owner');
    await world.addNode('claimant', { podCidrs, unleased: true });
    const result = await handleNodeEvent({ type: 'NodeJoined', nodeName: 'claimant' }, w.reconcileDeps());
    expect(result.status).toBe(202);
    expect(result.message).toMatch(/not leased to it.*reconcile/);
    expect(await leasesOf(w)).toEqual([['100.64.3.0/24', 'node-owner']]);
    expect(w.queue.sends).toEqual([]);
  });

  it('its own lease: synced and queued', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    await w.wiring.cidrSets[0]?.occupy('100.64.4.0/24', 'own');
    await world.addNode('own', { podCidrs: ['100.64.4.0/24'], unleased: true });
    const result = await handleNodeEvent({ type: 'NodeJoined', nodeName: 'own' }, w.reconcileDeps());
    expect(result).toEqual({ status: 202, message: 'node own synced; its routes are queued' });
    expect(await leasesOf(w)).toEqual([['100.64.4.0/24', 'own']]);
    expect(w.queue.sends.length).toBe(1);
  });
});

describe('CREATE admission next to a stored node carrying the cluster CIDR', () => {
  it.each<[string, Array<[string, string]>, string]>([
    ['next to another lease', [['100.64.0.0/24', 'node-owner']], '100.64.1.0/24'],
    ['in an empty table', [], '100.64.0.0/24'],
  ])('a conflict claim keeps no block out, %s: the new node gets the first free block', async (_name, leased, expected) => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    for (const [cidr, owner] of leased) await w.wiring.cidrSets[0]?.occupy(cidr, owner);
    await world.addNode('hostile', { podCidrs: ['100.64.0.0/16'], unleased: true });
    const instance = world.ec2.state.addInstance();
    const res = await admit(nodeCreateReview(world.nodeObject('node-new', instance.id)), w.reconcileDeps());
    expect(patchOf(res)).toContainEqual({ op: 'add', path: '/spec/podCIDRs', value: [expected] });
    expect(await leasesOf(w)).toEqual([...leased, [expected, 'node-new']].sort());
  });

  it('an adoptable block (node mask, no lease) is still skipped', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    await world.addNode('migrated', { podCidrs: ['100.64.0.0/24'], unleased: true });
    const instance = world.ec2.state.addInstance();
    const res = await admit(nodeCreateReview(world.nodeObject('node-new', instance.id)), w.reconcileDeps());
    expect(patchOf(res)).toContainEqual({ op: 'add', path: '/spec/podCIDRs', value: ['100.64.1.0/24'] });
    expect(await leasesOf(w)).toEqual([['100.64.1.0/24', 'node-new']]);
  });
});
