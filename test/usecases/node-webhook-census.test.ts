/**
 * The CREATE admission under the claim census (lib/usecases/claim-census.ts, docs/decisions/0030): after a reconcile run
 * that left no unleased pod CIDR, a new node is allocated from the lease table by keyed reads, with
 * no node listing; a node arriving with an unleased claim turns the next admissions back to the
 * listing, so the block it carries is still never handed out.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { CENSUS_MAX_AGE_MS } from '../../lib/usecases/claim-census.ts';
import { nodeCreateReview, patchedPodCidr as podCidrOf } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring, type TestWiring } from '../support/wiring.ts';
import { lambdaContext, sqsEvent, sqsRecord, type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

async function setup(): Promise<TestWiring> {
  world.addClusterTable();
  return testWiring(world, local);
}

/** The admission of a new node on a fresh instance: its pod CIDR, and whether it listed the nodes. */
async function admitNew(w: TestWiring, name: string): Promise<{ podCidr: unknown; listed: boolean; reads: unknown }> {
  world.resetStats();
  const instance = world.ec2.state.addInstance();
  const podCidr = podCidrOf(await admit(nodeCreateReview(world.nodeObject(name, instance.id)), w.reconcileDeps()));
  const listed = (world.kube.stats.all()['GET /api/v1/nodes'] ?? 0) > 0;
  const reads = w.log.lines.filter((l) => l.event === 'webhook.admitted' && l.node === name).map((l) => l.reads)[0];
  return { podCidr, listed, reads };
}

describe('CREATE admission under the claim census', () => {
  it('lists every node until a reconcile run has vouched for them, then reads by key alone', async () => {
    const w = await setup();
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/24'], unleased: true });
    expect(await admitNew(w, 'node-b')).toEqual({ podCidr: '100.64.1.0/24', listed: true, reads: 'listing' });
    // Reconcile adopts node-a's block: no stored node carries an unleased one any more.
    await reconcile(w.reconcileDeps());
    expect(await admitNew(w, 'node-c')).toEqual({ podCidr: '100.64.2.0/24', listed: false, reads: 'keyed' });
    const leases = ((await w.wiring.cidrSets[0]?.leases()) ?? []).map((l) => `${l.cidr}=${l.owner}`);
    expect(leases).toEqual(['100.64.0.0/24=node-a', '100.64.1.0/24=node-b', '100.64.2.0/24=node-c']);
  });

  it('reads as much in a cluster of 510 nodes as in one of 3 (keyed reads: nothing grows with the cluster)', async () => {
    const w = await setup();
    await w.wiring.claimCensus?.recordRun({ at: world.clock.now(), clear: true, writtenAt: world.clock.now() });
    const readsOf = async (name: string) => {
      w.dynamo.reset();
      const { listed } = await admitNew(w, name);
      return { listed, kube: world.kube.stats.all(), ec2: world.ec2.stats.calls, dynamo: Object.fromEntries(w.dynamo.counts) };
    };
    for (let i = 0; i < 3; i++) await world.addNode(`small-${i}`);
    const small = await readsOf('node-x');
    // Past one page of a listing (500), so a listing would show.
    for (let i = 0; i < 510; i++) await world.addNode(`large-${i}`);
    const large = await readsOf('node-y');
    expect(small.listed).toBe(false);
    expect(large).toEqual(small);
  });

  it.each([
    ['a managed node', false],
    ['a node that is not podroute\'s (no instance in its providerID)', true],
  ])('a claim of an unleased block by %s turns the admissions back to the listing: the block is never handed out', async (_name, unmanaged) => {
    const w = await setup();
    await reconcile(w.reconcileDeps());
    // The claimant's CREATE carries the next free block, which no lease holds; it is stored after.
    const instanceId = unmanaged ? '' : world.ec2.state.addInstance().id;
    await admit(nodeCreateReview(world.nodeObject('claimant', instanceId, ['100.64.0.0/24'])), w.reconcileDeps());
    await world.addNode('claimant', { podCidrs: ['100.64.0.0/24'], unleased: true, ...(unmanaged ? { noInstance: true } : {}) });
    expect(await admitNew(w, 'node-n')).toEqual({ podCidr: '100.64.1.0/24', listed: true, reads: 'listing' });
  });
});

describe('review findings: a census that cannot vouch, a claim that cannot be recorded', () => {
  it('a census older than its max age (a restored table: leases lost, the census item as it was) lists: the carrier\'s block is held', async () => {
    const w = await setup();
    await reconcile(w.reconcileDeps());
    // The restored table lost the carrier's lease; its census item is as old as the restore point.
    await world.addNode('carrier', { podCidrs: ['100.64.0.0/24'], unleased: true });
    world.clock.advance(CENSUS_MAX_AGE_MS + 1);
    expect(await admitNew(w, 'node-n')).toEqual({ podCidr: '100.64.1.0/24', listed: true, reads: 'listing' });
  });

  it.each([
    ['a managed node with an unleased pod CIDR', false],
    ['an unmanaged node with a pod CIDR', true],
  ])('%s whose claim cannot be recorded is denied: nothing allocated, nothing queued', async (_name, unmanaged) => {
    const w = await setup();
    await reconcile(w.reconcileDeps());
    const failing = { read: async () => ({}), recordRun: async () => undefined, recordClaim: async () => Promise.reject(new Error('DynamoDB unavailable')) };
    const instanceId = unmanaged ? '' : world.ec2.state.addInstance().id;
    const response = await admit(nodeCreateReview(world.nodeObject('claimant', instanceId, ['100.64.0.0/24'])), { ...w.reconcileDeps(), claimCensus: failing });
    expect(response.response.allowed).toBe(false);
    expect((response.response as { status?: { message?: string } }).status?.message).toMatch(/could not record.*100\.64\.0\.0\/24.*retr/i);
    expect(await w.wiring.cidrSets[0]?.leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
  });

  it('a claim still being recorded when the deadline comes is denied, not admitted', async () => {
    const w = await setup();
    await reconcile(w.reconcileDeps());
    const deadline = new AbortController();
    const hanging = { read: async () => ({}), recordRun: async () => undefined, recordClaim: () => (deadline.abort(), new Promise<void>(() => undefined)) };
    const instance = world.ec2.state.addInstance();
    const response = await admit(nodeCreateReview(world.nodeObject('claimant', instance.id, ['100.64.0.0/24'])), { ...w.reconcileDeps(), claimCensus: hanging }, deadline.signal);
    expect(response.response.allowed).toBe(false);
    expect(w.queue.sends).toEqual([]);
  });
});

describe('a new node naming a stored node\'s instance, under a fresh clear census', () => {
  it('routes mode: admitted by key without the warning; the worker\'s ownership decider refuses it on fresh reads, the stored node keeps its route', async () => {
    const w = await setup();
    const table = (await w.wiring.routeTables.listRouteTables())[0]?.routeTableId ?? '';
    const victim = await world.addNode('victim', { podCidrs: ['100.64.5.0/24'], networkUnavailable: 'False' });
    // The emulator stamps creationTimestamp by the real clock: the admission's clock runs after it, as in a cluster.
    world.clock.ms = Date.now() + 1_000;
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.5.0/24', instanceId: victim.instanceId });
    // Reconcile adopts the victim's block into the lease table and records a clear run.
    await reconcile(w.reconcileDeps());
    w.queue.clear();
    world.kube.stats.reset();
    const response = await admit(nodeCreateReview(world.nodeObject('thief', victim.instanceId)), w.reconcileDeps());
    expect(world.kube.stats.all()['GET /api/v1/nodes'] ?? 0).toBe(0);
    expect(response.response.warnings).toBeUndefined();
    const [message] = w.queue.messages;
    expect(message).toMatchObject({ kind: 'sync-node', node: 'thief', admitted: { instanceId: victim.instanceId } });
    const handler = createRouteWorkerHandler(async () => w.wiring);
    await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message), 1)), lambdaContext());
    expect(w.log.lines.filter((l) => l.event === 'message.refused').map((l) => [l.node, l.reason])).toEqual([['thief', 'instance-of-another-node']]);
    expect(world.routeSummary(table)).toEqual([`100.64.5.0/24 -> ${victim.instanceId}`]);
  });

  it('prefixes mode: admitted by key without the warning; the worker\'s ownership decider refuses it before delegating, the stored node keeps its prefix', async () => {
    const vpc = world.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16' });
    const subnet = world.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.16.0/20', availabilityZone: 'us-east-1b' });
    world.ec2.state.createReservation({ subnetId: subnet.id, cidr: '10.0.24.0/22', type: 'explicit', description: 'podroute' });
    const w = await testWiring(world, local, { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16' });
    const victim = await world.addNode('victim', { podCidrs: ['10.0.24.0/28'], instance: world.ec2.state.addInstance({ subnetId: subnet.id }) });
    world.clock.ms = Date.now() + 1_000;
    // Reconcile adopts the victim's block, delegates it to the victim's interface and records a clear run.
    await reconcile(w.reconcileDeps());
    const delegated = () => world.ec2.state.primaryInterface(victim.instanceId)?.ipv4Prefixes ?? [];
    expect(delegated()).toEqual(['10.0.24.0/28']);
    w.queue.clear();
    world.kube.stats.reset();
    const response = await admit(nodeCreateReview(world.nodeObject('thief', victim.instanceId)), w.reconcileDeps());
    expect(world.kube.stats.all()['GET /api/v1/nodes'] ?? 0).toBe(0);
    expect(response.response.warnings).toBeUndefined();
    expect(w.log.lines.filter((l) => l.event === 'webhook.admitted').map((l) => l.reads)).toEqual(['keyed']);
    const [message] = w.queue.messages;
    expect(message).toMatchObject({ kind: 'sync-node', node: 'thief', admitted: { instanceId: victim.instanceId } });
    const handler = createRouteWorkerHandler(async () => w.wiring);
    await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message), 1)), lambdaContext());
    expect(w.log.lines.filter((l) => l.event === 'message.refused').map((l) => [l.node, l.reason])).toEqual([['thief', 'instance-of-another-node']]);
    expect(delegated()).toEqual(['10.0.24.0/28']);
  });
});
