/**
 * Reconcile and the CIDR leases: a held pod CIDR is never handed out again, vanished nodes' leases
 * are reclaimed through the real wiring, and an empty node list reclaims nothing. (Each case was a
 * bug found by these tests.)
 */
import { describe, expect, it } from 'vitest';
import { DynamoDbClaimStore, cidrSetId } from '../../lib/aws/dynamodb-cidr-store.ts';
import { createCidrSet, type CidrSet } from '../../lib/ipam/index.ts';
import { blockKey } from '../../lib/ipam/claim-items.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { T0, TimedMemoryCidrStore, type World } from '../support/world.ts';
import { withRoutesPlane } from '../support/plane.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

describe('reconcile and CIDR leases', () => {
  // Pod CIDRs that nodes hold without a lease must be occupied before any new node is allocated,
  // or a new node could get a block another node already uses.
  it('reconcile never allocates a pod CIDR that an existing node holds without a lease', async () => {
    world.addClusterTable();
    await world.addNode('node-old', { podCidrs: ['100.64.0.0/24'] });
    await world.addNode('node-new');
    const w = await testWiring(world, local);
    await reconcile(w.reconcileDeps());
    expect(world.podCidrs('node-new')).toHaveLength(1);
    expect(world.podCidrs('node-new')).not.toEqual(['100.64.0.0/24']);
    expect((await w.wiring.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual([
      '100.64.0.0/24=node-old',
      `${world.podCidrs('node-new')[0] ?? '?'}=node-new`,
    ]);
  });

  // The DynamoDB store's leases carry the time they were taken; without it, reconcile could never
  // tell an orphan past its grace period and no lease would ever be reclaimed.
  it('reconcile reclaims the lease of a vanished node with the DynamoDB store (buildWiring)', async () => {
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/24'] });
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '600' });
    const set = w.wiring.cidrSets[0];
    if (!set) throw new Error('no CIDR set');
    await set.occupy('100.64.0.0/24', 'node-a');
    expect(await set.allocateNext('node-gone')).toBe('100.64.1.0/24');
    expect(await set.leases()).toEqual([
      { cidr: '100.64.0.0/24', owner: 'node-a', since: T0, version: 1 },
      { cidr: '100.64.1.0/24', owner: 'node-gone', since: T0, version: 1 },
    ]);
    world.clock.advance(600_001);
    const report = await reconcile(w.reconcileDeps());
    expect(report.reclaimed).toEqual([{ cidr: '100.64.1.0/24', owner: 'node-gone' }]);
  });

  // Leases that survived a scale to zero (their node-left checks lost): the node listing is empty,
  // but a keyed read of every lease's owner answers 404, so the run goes on and reclaim frees them.
  // (Without those reads every later run refused, and nothing was ever reclaimed.)
  it('reconcile frees the leases left by a scale to zero once every owner reads 404', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '300' });
    const set = await createCidrSet({ clusterCidr: '100.64.0.0/16', nodeMaskSize: 24, store: new TimedMemoryCidrStore(world.clock.now) });
    await set.allocateNext('node-a');
    await set.allocateNext('node-b');
    world.clock.advance(3_600_000);
    const report = await reconcile(withRoutesPlane({ ...w.reconcileDeps(), cidrSets: [set] }));
    expect(report.reclaimed.map((r) => r.owner).sort()).toEqual(['node-a', 'node-b']);
    expect(await set.leases()).toEqual([]);
  });

  // One owner still there (the listing is wrong) or unreadable: the run stops, nothing is freed.
  it.each(['present', 'unreadable'] as const)('reconcile refuses a scale to zero while a lease owner reads %s', async (answer) => {
    world.addClusterTable();
    await world.addNode('node-b');
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '300' });
    const set = await createCidrSet({ clusterCidr: '100.64.0.0/16', nodeMaskSize: 24, store: new TimedMemoryCidrStore(world.clock.now) });
    await set.allocateNext('node-a');
    await set.allocateNext('node-b');
    world.clock.advance(3_600_000);
    const source = w.reconcileDeps().nodes;
    const nodes = Object.assign(Object.create(source) as typeof source, {
      listNodes: async () => [],
      getNode: (name: string) => (answer === 'unreadable' && name === 'node-b' ? Promise.reject(new Error('connection reset')) : source.getNode(name)),
    });
    const why = answer === 'present' ? /a keyed read found 1 of their owners/ : /1 of their owners could not be read/;
    await expect(reconcile(withRoutesPlane({ ...w.reconcileDeps(), nodes, cidrSets: [set] }))).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(why) });
    expect((await set.leases()).map((l) => l.owner)).toEqual(['node-a', 'node-b']);
  });

  // Reclaim judges a lease orphaned from a listing; the node may re-join under the same name before
  // the release. Its admission finds (and renews) its lease, and the release must then fail:
  // conditional on the lease as listed, not only on the owner's name.
  it('reclaim spares a lease whose node re-joined between the listing and the release', async () => {
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/24'] });
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '600' });
    const set = w.wiring.cidrSets[0];
    if (!set) throw new Error('no CIDR set');
    await set.occupy('100.64.0.0/24', 'node-a');
    expect(await set.allocateNext('node-b')).toBe('100.64.1.0/24');
    world.clock.advance(600_001);
    const rejoinAfterListing: CidrSet = {
      clusterCidr: set.clusterCidr,
      nodeMaskSize: set.nodeMaskSize,
      total: set.total,
      allocateNext: (owner) => set.allocateNext(owner),
      occupy: (cidr, owner) => set.occupy(cidr, owner),
      release: (cidr, owner) => set.release(cidr, owner),
      usage: () => set.usage(),
      ownedLease: (owner) => set.ownedLease(owner),
      releaseLease: (lease) => set.releaseLease(lease),
      repair: (listed) => set.repair(listed),
      leases: async () => {
        const listed = await set.leases();
        // node-b's kubelet registers again (a CREATE admission): same name, same block.
        expect(await set.allocateNext('node-b')).toBe('100.64.1.0/24');
        return listed;
      },
    };
    const report = await reconcile(withRoutesPlane({ ...w.reconcileDeps(), cidrSets: [rejoinAfterListing] }));
    expect(report.reclaimed).toEqual([]);
    expect((await set.leases()).map((l) => `${l.cidr}=${l.owner}`)).toEqual(['100.64.0.0/24=node-a', '100.64.1.0/24=node-b']);
  });

  // An occupy cut short after its block write (as older versions wrote them: block first) leaves a
  // lease without an owner record; the node's next allocation would then take a second block.
  it('reconcile links a lease without its owner record, so the node never gets a second block', async () => {
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.5.0/24'] });
    const w = await testWiring(world, local);
    const raw = new DynamoDbClaimStore({ client: local.client(), tableName: w.wiring.config.cidrTableName, setId: cidrSetId('100.64.0.0/16', 24) });
    expect(await raw.putIfAbsent(blockKey(5), { owner: 'node-a', since: 0 })).toBe(true);
    const report = await reconcile(w.reconcileDeps());
    expect(report.leasesRepaired).toEqual(['node-a']);
    const set = w.wiring.cidrSets[0];
    expect(await set?.allocateNext('node-a')).toBe('100.64.5.0/24');
    expect((await set?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual(['100.64.5.0/24=node-a']);
  });
});
