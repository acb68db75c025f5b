/**
 * Reconcile with hostile or wrong claims (lib/routes/ownership.ts over the lease table): a node
 * cannot take another node's traffic by writing its pod CIDR, a range inside or around it, the
 * whole cluster CIDR, or its instance. The claimant gets NetworkUnavailable=True and a
 * PodCidrConflict event; the lease holder's routes and condition stay as they are.
 * Over the in-memory ports (test/support/fake-world.ts); the adapters' own tests run them against
 * the emulators and dynalite.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { fakeWiring, fakeWorld, type FakeWiring, type FakeWorld } from '../support/fake-world.ts';
import { drainQueue } from '../support/world.ts';

let world: FakeWorld;
beforeEach(() => {
  world = fakeWorld();
});

/** The instance a table's route for `cidr` sends to, as EC2 describes it (undefined: no such route). */
const routeInstance = async (table: string, cidr: string) => (await world.routeTables.describeRoute(table, cidr))?.instanceId ?? undefined;
const networkUnavailable = (name: string) => world.nodes.networkUnavailable(name);
const eventReasons = (name: string) => world.nodes.eventReasons(name);

const VICTIM_CIDR = '100.64.1.0/24';

/** A routed, ready victim: its lease, its route in the one cluster table, NetworkUnavailable=False. */
async function routedVictim(): Promise<{ table: string; victim: { instanceId: string }; w: FakeWiring }> {
  const table = world.addClusterTable();
  const victim = await world.addNode('victim', { podCidrs: [VICTIM_CIDR], networkUnavailable: 'False' });
  world.routeTables.addRoute(table, VICTIM_CIDR, { instanceId: victim.instanceId });
  const w = await fakeWiring(world);
  await w.cidrSets[0]?.occupy(VICTIM_CIDR, 'victim');
  return { table, victim, w };
}

const leases = async (w: FakeWiring) => (await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`) ?? [];

describe('reconcile: a node cannot take another node\'s traffic', () => {
  it('another node\'s exact pod CIDR, its route already re-pointed to the claimant: the route goes back, the victim is untouched', async () => {
    const { table, victim, w } = await routedVictim();
    const attacker = await world.addNode('attacker', { podCidrs: [VICTIM_CIDR] });
    await world.routeTables.replaceRoute({ routeTableId: table, destinationCidr: VICTIM_CIDR, networkInterfaceId: attacker.eniId });

    const report = await reconcile(w.reconcileDeps());
    expect(w.queue.messages).toEqual([
      { v: 2, kind: 'replace', routeTableId: table, destinationCidr: VICTIM_CIDR, node: 'victim', instanceId: victim.instanceId, reason: 'moved', expect: { instanceId: attacker.instanceId } },
    ]);
    expect(report.plan.nodes.find((n) => n.node === 'attacker')?.conflict).toBe('leased-to-another-node');
    await drainQueue(w.queue, w.workerDeps());
    expect(await routeInstance(table, VICTIM_CIDR)).toBe(victim.instanceId);
    expect(networkUnavailable('victim')).toBe('False');
    expect(eventReasons('victim')).toEqual([]);
    expect(networkUnavailable('attacker')).toBe('True');
    expect(eventReasons('attacker')).toEqual(['PodCidrConflict']);
    expect(await leases(w)).toEqual([`${VICTIM_CIDR}=victim`]);
  });

  it('a /25 and a /32 inside another node\'s block: no more-specific route, no lease', async () => {
    const { table, victim, w } = await routedVictim();
    await world.addNode('sub', { podCidrs: ['100.64.1.128/25'] });
    await world.addNode('host', { podCidrs: ['100.64.1.7/32'] });

    await reconcile(w.reconcileDeps());
    await drainQueue(w.queue, w.workerDeps());
    expect(world.routeTables.routeSummary(table)).toEqual([`${VICTIM_CIDR} -> ${victim.instanceId}`]);
    expect(await leases(w)).toEqual([`${VICTIM_CIDR}=victim`]);
    expect(networkUnavailable('victim')).toBe('False');
    for (const name of ['sub', 'host']) {
      expect(networkUnavailable(name)).toBe('True');
      expect(eventReasons(name)).toEqual(['PodCidrConflict']);
    }
  });

  it('the whole cluster CIDR: no block leased to it, and new nodes still get pod CIDRs', async () => {
    const { table, victim, w } = await routedVictim();
    await world.addNode('greedy', { podCidrs: ['100.64.0.0/16'] });
    await world.addNode('newcomer');

    const report = await reconcile(w.reconcileDeps());
    expect(report.occupied).toBe(0);
    expect(report.allocated).toEqual(['newcomer']);
    const [given] = world.nodes.podCidrs('newcomer');
    expect(await leases(w)).toEqual([`${VICTIM_CIDR}=victim`, `${given}=newcomer`].sort());
    await drainQueue(w.queue, w.workerDeps());
    expect(await routeInstance(table, '100.64.0.0/16')).toBeUndefined();
    expect(await routeInstance(table, VICTIM_CIDR)).toBe(victim.instanceId);
    expect(networkUnavailable('greedy')).toBe('True');
    expect(eventReasons('greedy')).toEqual(['PodCidrConflict']);
  });

  it('a second node naming the victim\'s instance: not allocated, not routed; the victim keeps its routes and condition', async () => {
    const { table, victim, w } = await routedVictim();
    await world.addNode('twin', { instanceId: victim.instanceId });

    for (let tick = 0; tick < 2; tick++) {
      const report = await reconcile(w.reconcileDeps());
      expect(report.allocated).toEqual([]);
      await drainQueue(w.queue, w.workerDeps());
    }
    expect(world.routeTables.routeSummary(table)).toEqual([`${VICTIM_CIDR} -> ${victim.instanceId}`]);
    expect(networkUnavailable('victim')).toBe('False');
    expect(eventReasons('victim')).toEqual([]);
    expect(networkUnavailable('twin')).toBe('True');
    expect(await leases(w)).toEqual([`${VICTIM_CIDR}=victim`]);
  });
});

describe('reconcile: a pod CIDR with leading zeros (kube-apiserver 1.32 stores it as written)', () => {
  it('is a conflict on its node, whose network reads it as the victim\'s block: no route, no lease, the victim untouched', async () => {
    const { table, victim, w } = await routedVictim();
    await world.addNode('zeros', { podCidrs: ['100.064.001.0/24'] });

    const report = await reconcile(w.reconcileDeps());
    expect(report.plan.nodes.find((n) => n.node === 'zeros')?.conflict).toBe('non-canonical-pod-cidr');
    await drainQueue(w.queue, w.workerDeps());
    expect(world.routeTables.routeSummary(table)).toEqual([`${VICTIM_CIDR} -> ${victim.instanceId}`]);
    expect(await leases(w)).toEqual([`${VICTIM_CIDR}=victim`]);
    expect(networkUnavailable('victim')).toBe('False');
    expect(eventReasons('victim')).toEqual([]);
    expect(networkUnavailable('zeros')).toBe('True');
    expect(eventReasons('zeros')).toEqual(['PodCidrConflict']);
  });

  it('on a free block: neither adopted (leased) nor routed', async () => {
    const table = world.addClusterTable();
    await world.addNode('zeros', { podCidrs: ['100.64.000.0/24'] });
    const w = await fakeWiring(world);
    const report = await reconcile(w.reconcileDeps());
    expect(report.occupied).toBe(0);
    expect(report.plan.nodes.find((n) => n.node === 'zeros')?.conflict).toBe('non-canonical-pod-cidr');
    await drainQueue(w.queue, w.workerDeps());
    expect(world.routeTables.routeSummary(table)).toEqual([]);
    expect(await leases(w)).toEqual([]);
    expect(networkUnavailable('zeros')).toBe('True');
    expect(eventReasons('zeros')).toEqual(['PodCidrConflict']);
  });
});

describe('reconcile: adopting pod CIDRs podroute did not allocate', () => {
  it('a CIDR of the node mask with no lease overlapping it is adopted and routed in the same run', async () => {
    const table = world.addClusterTable();
    const old = await world.addNode('old', { podCidrs: ['100.64.7.0/24'] });
    const w = await fakeWiring(world);
    const report = await reconcile(w.reconcileDeps());
    expect(report.occupied).toBe(1);
    expect(await leases(w)).toEqual(['100.64.7.0/24=old']);
    expect(w.queue.messages).toEqual([{ v: 1, kind: 'create', routeTableId: table, destinationCidr: '100.64.7.0/24', node: 'old', instanceId: old.instanceId }]);
  });

  it('another mask is adopted only when MIGRATION_MASK_SIZES names it', async () => {
    world.addClusterTable();
    await world.addNode('wide', { podCidrs: ['100.64.2.0/23'] });
    const refused = await fakeWiring(world);
    const report = await reconcile(refused.reconcileDeps());
    expect(report.occupied).toBe(0);
    expect(await leases(refused)).toEqual([]);
    expect(report.plan.nodes).toEqual([{ node: 'wide', networkUnavailable: true, patch: true, conflict: 'mask-size' }]);
    expect(eventReasons('wide')).toEqual(['PodCidrConflict']);

    const named = await fakeWiring(world, { MIGRATION_MASK_SIZES: 'ipv4:23' });
    const adopted = await reconcile(named.reconcileDeps());
    expect(adopted.occupied).toBe(1);
    expect(await leases(named)).toEqual(['100.64.2.0/24=wide', '100.64.3.0/24=wide']);
    expect(adopted.plan.create.map((op) => op.destinationCidr)).toEqual(['100.64.2.0/23']);
  });
});

describe('reconcile: never schedulable before routed', () => {
  it('a managed node without the condition whose routes are not complete gets NetworkUnavailable=True (NoRouteCreated) before its routes go out', async () => {
    world.addClusterTable();
    await world.addNode('joining', { podCidrs: ['100.64.5.0/24'] });
    const w = await fakeWiring(world);
    await w.cidrSets[0]?.occupy('100.64.5.0/24', 'joining');
    await reconcile(w.reconcileDeps());
    expect(networkUnavailable('joining')).toBe('True');
    const condition = (world.nodes.peek('joining') as { status: { conditions: Array<{ type: string; reason?: string }> } }).status.conditions.find((c) => c.type === 'NetworkUnavailable');
    expect(condition?.reason).toBe('NoRouteCreated');
    // The worker turns it False once routed.
    await drainQueue(w.queue, w.workerDeps());
    expect(networkUnavailable('joining')).toBe('False');
  });
});

describe('reconcile: a conflicting claim keeps no block from being freed', () => {
  it('a node claiming the whole cluster CIDR does not keep a departed node\'s block', async () => {
    world.addClusterTable();
    await world.addNode('victim', { podCidrs: [VICTIM_CIDR] });
    await world.addNode('greedy', { podCidrs: ['100.64.0.0/16'] });
    const w = await fakeWiring(world, { LEASE_GRACE_SECONDS: '600' });
    await w.cidrSets[0]?.occupy(VICTIM_CIDR, 'victim');
    world.nodes.delete('victim');
    world.clock.advance(600_001);
    const report = await reconcile(w.reconcileDeps());
    expect(report.reclaimed).toEqual([{ cidr: VICTIM_CIDR, owner: 'victim' }]);
    expect(await leases(w)).toEqual([]);
  });
});
