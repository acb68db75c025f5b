/**
 * Pod CIDRs of another size than the configured node mask (a migration from kube-controller-manager
 * with another --node-cidr-mask-size): every block such a CIDR overlaps is taken for its node, so no
 * new node overlaps it, and the mismatch is reported with what to change.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { overlaps, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { fakeWiring, fakeWorld, type FakeWorld } from '../support/fake-world.ts';

let world: FakeWorld;
beforeEach(() => {
  world = fakeWorld();
});

const overlapping = (a: string, b: string): boolean => {
  const [x, y] = [tryParseCidr(a), tryParseCidr(b)];
  if (!x || !y) throw new Error(`bad CIDR ${a} or ${b}`);
  return overlaps(x, y);
};

describe('reconcile with existing pod CIDRs of another size', () => {
  it.each<{ name: string; env: Record<string, string>; existing: string; leases: string[]; next: string; mentions: string[] }>([
    {
      name: 'a larger CIDR (/24 with NODE_MASK_SIZE_IPV4=25): both /25 blocks it covers',
      env: { CLUSTER_CIDRS: '100.64.0.0/16', NODE_MASK_SIZE_IPV4: '25', MIGRATION_MASK_SIZES: 'ipv4:24' },
      existing: '100.64.0.0/24',
      leases: ['100.64.0.0/25=node-old', '100.64.0.128/25=node-old'],
      next: '100.64.1.0/25',
      mentions: ['/24', 'NODE_MASK_SIZE_IPV4=25', '--node-cidr-mask-size'],
    },
    {
      name: 'a smaller CIDR (/26 with NODE_MASK_SIZE_IPV4=25): the /25 block holding it',
      env: { CLUSTER_CIDRS: '100.64.0.0/16', NODE_MASK_SIZE_IPV4: '25', MIGRATION_MASK_SIZES: 'ipv4:26' },
      existing: '100.64.0.64/26',
      leases: ['100.64.0.0/25=node-old'],
      next: '100.64.0.128/25',
      mentions: ['/26', 'NODE_MASK_SIZE_IPV4=25', '--node-cidr-mask-size'],
    },
    {
      name: 'IPv6 (/63 with NODE_MASK_SIZE_IPV6=64): both /64 blocks it covers',
      env: { CLUSTER_CIDRS: 'fd00:10::/56', NODE_MASK_SIZE_IPV6: '64', MIGRATION_MASK_SIZES: 'ipv6:63' },
      existing: 'fd00:10::/63',
      leases: ['fd00:10::/64=node-old', 'fd00:10:0:1::/64=node-old'],
      next: 'fd00:10:0:2::/64',
      mentions: ['/63', 'NODE_MASK_SIZE_IPV6=64', '--node-cidr-mask-size-ipv6'],
    },
  ])('$name', async ({ env, existing, leases, next, mentions }) => {
    world.addClusterTable();
    await world.addNode('node-old', { podCidrs: [existing] });
    await world.addNode('node-new');
    const w = await fakeWiring(world, env);
    const report = await reconcile(w.reconcileDeps());

    expect(world.nodes.podCidrs('node-new')).toEqual([next]);
    expect(overlapping(existing, next)).toBe(false);
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual([...leases, `${next}=node-new`]);

    // Told three ways: an Event on the node, a plan warning and a log line, each naming what to change.
    expect(world.nodes.eventReasons('node-old')).toEqual(['PodCidrMaskMismatch']);
    const warning = report.plan.warnings?.find((w) => w.reason === 'pod-cidr-mask-mismatch');
    expect(warning?.node).toBe('node-old');
    for (const text of mentions) expect(warning?.detail).toContain(text);
    const logged = w.log.lines.filter((line) => line.event === 'pod-cidr.mask-mismatch');
    expect(logged.map((line) => line.node)).toEqual(['node-old']);

    // A second tick takes nothing more and sends no second Event (the lease is there now).
    const again = await reconcile(w.reconcileDeps());
    expect(again.occupied).toBe(0);
    expect(world.nodes.eventReasons('node-old')).toEqual(['PodCidrMaskMismatch']);
    expect(again.plan.warnings?.some((w) => w.reason === 'pod-cidr-mask-mismatch')).toBe(true);
  });

  it('a dry run reports the mismatch and takes nothing', async () => {
    world.addClusterTable();
    await world.addNode('node-old', { podCidrs: ['100.64.0.0/24'] });
    const w = await fakeWiring(world, { NODE_MASK_SIZE_IPV4: '25' });
    const report = await reconcile(w.reconcileDeps(), { dryRun: true });
    expect(report.plan.warnings?.map((w) => w.reason)).toContain('pod-cidr-mask-mismatch');
    expect(await w.cidrSets[0]?.leases()).toEqual([]);
    expect(world.nodes.eventReasons('node-old')).toEqual([]);
  });

  it('a node with a larger CIDR that leaves frees every block it held', async () => {
    world.addClusterTable();
    await world.addNode('node-old', { podCidrs: ['100.64.0.0/24'] });
    await world.addNode('node-other', { podCidrs: ['100.64.1.0/25'] });
    const w = await fakeWiring(world, { NODE_MASK_SIZE_IPV4: '25', MIGRATION_MASK_SIZES: 'ipv4:24', LEASE_GRACE_SECONDS: '600' });
    await reconcile(w.reconcileDeps());
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual([
      '100.64.0.0/25=node-old',
      '100.64.0.128/25=node-old',
      '100.64.1.0/25=node-other',
    ]);
    world.nodes.delete('node-old');
    world.clock.advance(600_001);
    const report = await reconcile(w.reconcileDeps());
    expect(report.reclaimed).toEqual([
      { cidr: '100.64.0.0/25', owner: 'node-old' },
      { cidr: '100.64.0.128/25', owner: 'node-old' },
    ]);
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual(['100.64.1.0/25=node-other']);
  });
});

const review = (uid: string, object: Record<string, unknown>) =>
  admissionReviewSchema().parse({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, kind: { group: '', version: 'v1', kind: 'Node' }, resource: { group: '', version: 'v1', resource: 'nodes' }, operation: 'CREATE', object, oldObject: null },
  });

describe('the webhook with a node that already carries a pod CIDR of another size', () => {
  it('a CREATE (kubelet re-registration) of the stored node changes nothing; a joining node gets no block inside its pod CIDR', async () => {
    const old = await world.addNode('node-old', { podCidrs: ['100.64.0.0/24'] });
    // A migration mask: the /24 is adoptable, so it holds its blocks (a /24 of no allowed mask is a
    // conflict nobody gets, and holds none: test/usecases/node-webhook-claims.test.ts).
    const w = await fakeWiring(world, { NODE_MASK_SIZE_IPV4: '25', MIGRATION_MASK_SIZES: 'ipv4:24' });
    const response = await admit(
      review('u-1', world.nodeObject('node-old', old.instanceId, ['100.64.0.0/24'])),
      w.reconcileDeps(),
    );
    // The node exists: the server answers AlreadyExists, and adopting its pod CIDR is reconcile's.
    expect(response.response.allowed).toBe(true);
    // Only the NetworkUnavailable condition every managed CREATE carries (AlreadyExists drops it).
    const patch = JSON.parse(Buffer.from(response.response.patch ?? '', 'base64').toString('utf8')) as Array<{ path: string }>;
    expect(patch.map((op) => op.path)).toEqual(['/status/conditions/-']);
    expect(await w.cidrSets[0]?.leases()).toEqual([]);
    // The next node gets a block beside it, never inside it, although no lease holds it yet.
    const fresh = world.routeTables.addInstance();
    await admit(review('u-2', world.nodeObject('node-new', fresh.instanceId)), w.reconcileDeps());
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual(['100.64.1.0/25=node-new']);
  });
});

describe('smaller pod CIDRs that share one block', () => {
  it('the first adopted holds the block, the other is a conflict; the block stays taken while one of them lives', async () => {
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/26'] });
    await world.addNode('node-b', { podCidrs: ['100.64.0.64/26'] });
    const w = await fakeWiring(world, { NODE_MASK_SIZE_IPV4: '25', MIGRATION_MASK_SIZES: 'ipv4:26', LEASE_GRACE_SECONDS: '600' });
    const first = await reconcile(w.reconcileDeps());
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual(['100.64.0.0/25=node-a']);
    // The block is node-a's lease: node-b's /26 inside it is not routed (lib/routes/ownership.ts).
    expect(first.plan.nodes.map((n) => [n.node, n.networkUnavailable, n.conflict ?? null])).toEqual([
      ['node-a', 'pending', null],
      ['node-b', true, 'leased-to-another-node'],
    ]);

    world.nodes.delete('node-a');
    world.clock.advance(600_001);
    const kept = await reconcile(w.reconcileDeps());
    expect(kept.reclaimed).toEqual([]);
    expect((await w.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual(['100.64.0.0/25=node-a']);

    world.nodes.delete('node-b');
    await world.addNode('node-c', { podCidrs: ['100.64.1.0/25'] });
    const freed = await reconcile(w.reconcileDeps());
    expect(freed.reclaimed).toEqual([{ cidr: '100.64.0.0/25', owner: 'node-a' }]);
  });
});
