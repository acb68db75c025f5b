/**
 * Prefixes mode (lib/dataplane/prefixes/) through reconcile and the webhook, over in-memory
 * ports: per-subnet allocation from podroute's subnet CIDR reservations (issue 8).
 */
import { describe, expect, it } from 'vitest';
import { containsCidr, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { noReservationMessage, placeNode, podRanges } from '../../lib/dataplane/prefixes/pod-ranges.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { FakeEc2, MemoryNodes, prefixDeps } from './prefix-fakes.ts';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import type { RecordingQueue } from '../support/world.ts';
import type { NodeInterface } from '../../lib/usecases/ports.ts';

const inside = (range: string, cidr: string): boolean => {
  const [outer, inner] = [tryParseCidr(range), tryParseCidr(cidr)];
  return outer !== null && inner !== null && containsCidr(outer, inner);
};

/** Three subnets in three zones, each with an IPv4 and an IPv6 reservation for pods. */
function threeSubnets(ec2: FakeEc2, type: 'prefix' | 'explicit' = 'explicit') {
  return [0, 1, 2].map((i) =>
    ec2.addSubnet(`subnet-${i}`, [`10.0.${i * 16}.0/20`, `2600:1f18:1234:${i}::/64`], [
      { cidr: `10.0.${i * 16 + 8}.0/22`, type },
      { cidr: `2600:1f18:1234:${i}:8000::/65`, type },
    ]),
  );
}

describe('prefixes mode: pod ranges and placement (pure)', () => {
  it('takes every podroute reservation overlapping a cluster CIDR, cut to it, and no other', () => {
    const ec2 = new FakeEc2();
    const subnet = ec2.addSubnet('subnet-a', ['10.1.0.0/16'], [
      { cidr: '10.1.128.0/17', type: 'explicit' }, // wider than the cluster CIDR: cut to it
      { cidr: '10.1.4.0/24', type: 'prefix' }, // outside the cluster CIDR
      { cidr: '10.1.64.0/24', type: 'prefix', description: 'vpc-cni' }, // inside, but someone else's
      { cidr: '10.1.65.0/24', type: 'prefix', description: undefined },
    ]);
    expect(podRanges(subnet, { clusterCidrs: ['10.1.0.0/16'] }).map((r) => r.range)).toEqual(['10.1.128.0/17', '10.1.4.0/24']);
    expect(podRanges(subnet, { clusterCidrs: ['10.1.192.0/18'] }).map((r) => [r.range, r.reservation.reservationId])).toEqual([['10.1.192.0/18', 'scr-subnet-a-0']]);
    expect(podRanges(subnet, { clusterCidrs: ['10.1.0.0/16'], prefixReservationDescription: 'vpc-cni' }).map((r) => r.range)).toEqual(['10.1.64.0/24']);
  });

  it('names the subnet and the reservation to create when there is none', () => {
    const ec2 = new FakeEc2();
    const subnet = ec2.addSubnet('subnet-b', ['10.2.0.0/20']);
    const message = noReservationMessage(subnet, ['10.0.0.0/8'], { nodeSyncMode: 'SyncFromCluster' });
    expect(message).toContain('subnet-b');
    expect(message).toContain('aws ec2 create-subnet-cidr-reservation --subnet-id subnet-b --reservation-type explicit --description podroute --cidr <a range inside 10.2.0.0/20>');
    expect(noReservationMessage(subnet, ['10.0.0.0/8'], { nodeSyncMode: 'SyncFromCloud' })).toContain('--reservation-type prefix');
    expect(noReservationMessage(subnet, ['100.64.0.0/16'], { nodeSyncMode: 'SyncFromCluster' })).toContain('do not overlap');
  });

  it('places a node in the range that already holds its pod CIDR', () => {
    const ec2 = new FakeEc2();
    const subnet = ec2.addSubnet('subnet-c', ['10.3.0.0/16'], [
      { cidr: '10.3.1.0/24', type: 'explicit' },
      { cidr: '10.3.2.0/24', type: 'explicit' },
    ]);
    const eni = ec2.addInstance('subnet-c');
    const nodes = new MemoryNodes();
    nodes.add('n', eni.instanceId, ['10.3.2.16/28']);
    const world = { interfaces: new Map([[eni.instanceId, eni]]), subnets: new Map([[subnet.subnetId, subnet]]) };
    const placement = placeNode(nodes.stored.get('n') ?? (undefined as never), world, { clusterCidrs: ['10.0.0.0/8'], nodeSyncMode: 'SyncFromCluster' });
    expect(placement.kind === 'placed' ? placement.ranges.map((r) => r.range) : placement.kind).toEqual(['10.3.2.0/24']);
  });
});

describe('prefixes mode: reconcile', () => {
  it('gives every node of three subnets a /28 and a /80 inside its own subnet’s reservations, reading EC2 once', async () => {
    const ec2 = new FakeEc2();
    const subnets = threeSubnets(ec2);
    const nodes = new MemoryNodes();
    for (let i = 0; i < 9; i++) nodes.add(`node-${i}`, ec2.addInstance(`subnet-${i % 3}`).instanceId);
    const { deps } = prefixDeps(ec2, nodes);

    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    expect(report.allocated).toHaveLength(9);
    for (let i = 0; i < 9; i++) {
      const [v4, v6] = nodes.podCidrs(`node-${i}`);
      const [r4, r6] = subnets[i % 3]?.reservations ?? [];
      expect(inside(r4?.cidr ?? '', v4 ?? '') && inside(r6?.cidr ?? '', v6 ?? '')).toBe(true);
      const eni = [...ec2.interfaces.values()][i];
      expect(eni?.prefixes).toEqual([v4, v6]);
      expect(nodes.networkUnavailable(`node-${i}`)).toBe('False');
    }
    // Issue 9: one batched interface read and one subnet read per run, whatever the number of nodes.
    expect(ec2.calls.filter((c) => c.startsWith('describe'))).toEqual(['describeInterfaces 9', 'describeSubnets 3']);

    // Converged: the next run changes nothing and still reads EC2 once.
    ec2.calls.length = 0;
    const writes = nodes.writes;
    const again = await reconcile(deps);
    expect([again.allocated, again.errors, nodes.writes - writes]).toEqual([[], [], 0]);
    expect(ec2.calls).toEqual(['describeInterfaces 9', 'describeSubnets 3']);
  });

  it('leaves a node in a subnet without a reservation NetworkUnavailable, with an Event and a metric naming the subnet', async () => {
    const ec2 = new FakeEc2();
    threeSubnets(ec2);
    ec2.addSubnet('subnet-bare', ['10.0.64.0/20', '2600:1f18:1234:9::/64']);
    const nodes = new MemoryNodes();
    nodes.add('bare', ec2.addInstance('subnet-bare').instanceId);
    nodes.add('fine', ec2.addInstance('subnet-1').instanceId);
    const { deps, log } = prefixDeps(ec2, nodes);

    const report = await reconcile(deps);
    expect(report.allocated).toEqual(['fine']);
    expect(nodes.podCidrs('bare')).toEqual([]);
    expect(nodes.networkUnavailable('bare')).toBe('True');
    expect(ec2.interfaces.get([...ec2.interfaces.keys()][0] ?? '')?.prefixes).toEqual([]);
    const event = nodes.events.find((e) => e.node === 'bare');
    expect(event?.reason).toBe('PodCidrNoReservation');
    expect(event?.message).toContain('subnet-bare');
    expect(event?.message).toContain('create-subnet-cidr-reservation --subnet-id subnet-bare');
    expect(log.lines).toContainEqual(expect.objectContaining({ SubnetId: 'subnet-bare', NodesWithoutReservation: 1 }));
  });

  it('ignores the VPC CNI’s prefixes on the same interface: neither adopted nor counted', async () => {
    const ec2 = new FakeEc2();
    threeSubnets(ec2);
    const cni = ['10.0.16.32/28', '2600:1f18:1234:1::/80']; // in the subnet, outside podroute's reservations
    const eni = ec2.addInstance('subnet-1', cni);
    const nodes = new MemoryNodes();
    nodes.add('node', eni.instanceId);
    const { deps } = prefixDeps(ec2, nodes);

    await reconcile(deps);
    const [v4, v6] = nodes.podCidrs('node');
    expect(inside('10.0.24.0/22', v4 ?? '')).toBe(true);
    expect(inside('2600:1f18:1234:1:8000::/65', v6 ?? '')).toBe(true);
    expect(ec2.interfaces.get(eni.instanceId)?.prefixes).toEqual([...cni, v4, v6]);
  });

  it('adopts the prefix a timed-out admission assigned (SyncFromCluster), without assigning another', async () => {
    const ec2 = new FakeEc2();
    threeSubnets(ec2);
    // The webhook assigned these and timed out before its patch reached the node.
    const eni = ec2.addInstance('subnet-2', ['10.0.40.48/28', '2600:1f18:1234:2:8000::/80']);
    const nodes = new MemoryNodes();
    nodes.add('late', eni.instanceId);
    const { deps, setOf } = prefixDeps(ec2, nodes);

    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    expect(nodes.podCidrs('late')).toEqual(['10.0.40.48/28', '2600:1f18:1234:2:8000::/80']);
    expect(nodes.networkUnavailable('late')).toBe('False');
    expect(ec2.count('assign')).toBe(0);
    expect(nodes.events).toEqual([]);
    expect((await (await setOf('10.0.40.0/22')).leases()).map((l) => [l.cidr, l.owner])).toEqual([['10.0.40.48/28', 'late']]);
  });

  it('lets EC2 pick from a prefix reservation and adopts what it picked (SyncFromCloud)', async () => {
    const ec2 = new FakeEc2();
    const subnets = threeSubnets(ec2, 'prefix');
    const eni = ec2.addInstance('subnet-0', ['10.0.1.16/28']); // the CNI's
    const nodes = new MemoryNodes();
    nodes.add('cloud', eni.instanceId);
    const { deps, setOf } = prefixDeps(ec2, nodes, { NODE_SYNC_MODE: 'SyncFromCloud' });

    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    expect(ec2.count('assignAnyPrefix')).toBe(2);
    expect(ec2.count('assignPrefix')).toBe(0);
    const [v4, v6] = nodes.podCidrs('cloud');
    expect(inside(subnets[0]?.reservations[0]?.cidr ?? '', v4 ?? '')).toBe(true);
    expect(inside(subnets[0]?.reservations[1]?.cidr ?? '', v6 ?? '')).toBe(true);
    expect(nodes.networkUnavailable('cloud')).toBe('False');
    expect((await (await setOf('10.0.8.0/22')).leases()).map((l) => [l.cidr, l.owner])).toEqual([[v4, 'cloud']]);
  });

  it('SyncFromCloud refuses a subnet with another owner’s prefix reservation: Event, NetworkUnavailable stays True, nothing assigned (review #3)', async () => {
    const ec2 = new FakeEc2();
    const subnet = ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [
      { cidr: '10.0.8.0/24', type: 'prefix' },
      { cidr: '10.0.9.0/24', type: 'prefix', description: 'vpc-cni' },
    ]);
    const eni = ec2.addInstance('subnet-a');
    const nodes = new MemoryNodes();
    nodes.add('n', eni.instanceId);
    const { deps, log } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16', NODE_SYNC_MODE: 'SyncFromCloud' });

    const report = await reconcile(deps);
    expect(report.allocated).toEqual([]);
    expect(ec2.count('assignAnyPrefix')).toBe(0);
    expect(eni.prefixes).toEqual([]);
    expect(nodes.podCidrs('n')).toEqual([]);
    expect(nodes.networkUnavailable('n')).toBe('True');
    const event = nodes.events.find((e) => e.node === 'n');
    expect(event?.reason).toBe('PodCidrSharedPrefixReservation');
    expect(event?.message).toContain(subnet.reservations[1]?.reservationId ?? '?');
    expect(log.lines).toContainEqual(expect.objectContaining({ SubnetId: 'subnet-a', NodesInSharedPrefixSubnet: 1 }));
  });

  it('SyncFromCloud never adopts a prefix merely found in its range (the CNI’s automatic pick): only what EC2 answered podroute (review #4)', async () => {
    const ec2 = new FakeEc2();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/24', type: 'prefix' }]);
    const eni = ec2.addInstance('subnet-a');
    const cni = await ec2.assignAnyPrefix(eni.networkInterfaceId, 4); // aws-node warming its pool on the same ENI
    const nodes = new MemoryNodes();
    nodes.add('n', eni.instanceId);
    const { deps, setOf } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16', NODE_SYNC_MODE: 'SyncFromCloud' });

    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    const [podCidr] = nodes.podCidrs('n');
    expect(podCidr).toBeDefined();
    expect(podCidr).not.toBe(cni);
    expect(eni.prefixes).toEqual([cni, podCidr]);
    expect((await (await setOf('10.0.8.0/24')).leases()).map((l) => [l.cidr, l.owner])).toEqual([[podCidr, 'n']]);
    // The next tick changes nothing: the node's lease names its prefix.
    await reconcile(deps);
    expect(nodes.podCidrs('n')).toEqual([podCidr]);
    expect(ec2.count('assignAnyPrefix')).toBe(2);
  });

  it('refuses SyncFromCloud against an explicit reservation (EC2 would not pick from it), assigning nothing', async () => {
    const ec2 = new FakeEc2();
    threeSubnets(ec2, 'explicit');
    const nodes = new MemoryNodes();
    nodes.add('cloud', ec2.addInstance('subnet-0').instanceId);
    const { deps } = prefixDeps(ec2, nodes, { NODE_SYNC_MODE: 'SyncFromCloud' });

    const report = await reconcile(deps);
    expect(report.errors).toEqual([expect.objectContaining({ node: 'cloud', step: 'node-sync', message: expect.stringContaining('prefix-type reservation') })]);
    expect(ec2.count('assign')).toBe(0);
    expect(nodes.podCidrs('cloud')).toEqual([]);
  });

  it('skips a podroute reservation smaller than a delegated prefix, tells which, and syncs the other subnets (review #6)', async () => {
    const ec2 = new FakeEc2();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/24', type: 'explicit' }]);
    const tiny = ec2.addSubnet('subnet-b', ['10.0.16.0/20'], [{ cidr: '10.0.24.0/29', type: 'explicit' }]);
    const nodes = new MemoryNodes();
    const { deps, log } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16' });
    nodes.add('good', ec2.addInstance('subnet-a').instanceId);
    nodes.add('other', ec2.addInstance('subnet-b').instanceId);

    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    expect(report.allocated).toEqual(['good']);
    expect(nodes.podCidrs('good')).toHaveLength(1);
    expect(inside('10.0.8.0/24', nodes.podCidrs('good')[0] ?? '')).toBe(true);
    expect(nodes.podCidrs('other')).toEqual([]);
    expect(nodes.networkUnavailable('other')).toBe('True');
    const reservationId = tiny.reservations[0]?.reservationId ?? '?';
    const event = nodes.events.find((e) => e.node === 'other');
    expect(event?.reason).toBe('PodCidrNoReservation');
    expect(event?.message).toContain('subnet-b');
    expect(event?.message).toContain(`reservation ${reservationId} (10.0.24.0/29) is skipped`);
    expect(log.lines).toContainEqual(expect.objectContaining({ SubnetId: 'subnet-b', ReservationId: reservationId, UndersizedReservations: 1 }));
  });

  it('a pod range whose set cannot be made fails only that range: no node turns into an unlisted instance (review #6)', async () => {
    const ec2 = new FakeEc2();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/24', type: 'explicit' }]);
    ec2.addSubnet('subnet-b', ['10.0.16.0/20'], [{ cidr: '10.0.24.0/24', type: 'explicit' }]);
    const nodes = new MemoryNodes();
    const { deps, ports } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16' });
    const sets = ports.reservationSets;
    ports.reservationSets = (range) => (range === '10.0.24.0/24' ? Promise.reject(new Error('table unreachable')) : (sets?.(range) ?? Promise.reject(new Error('no port'))));
    nodes.add('good', ec2.addInstance('subnet-a').instanceId);
    nodes.add('other', ec2.addInstance('subnet-b').instanceId);

    const report = await reconcile(deps);
    expect(report.allocated).toEqual(['good']);
    expect(report.errors.map((e) => e.message).join(' | ')).not.toContain('does not list');
    expect(report.errors).toContainEqual(expect.objectContaining({ node: 'other', message: 'table unreachable' }));
    expect(report.errors).toContainEqual(expect.objectContaining({ message: 'pod range 10.0.24.0/24: table unreachable' }));
  });

  it('a Node deleted while its instance runs: reclaim takes its prefix off the interface before its lease goes, and the next node gets a block EC2 accepts', async () => {
    const ec2 = new FakeEc2();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/26', type: 'explicit' }]); // four /28s
    const nodes = new MemoryNodes();
    const { deps, advance, setOf } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16' });
    const x = ec2.addInstance('subnet-a');
    nodes.add('keep', ec2.addInstance('subnet-a').instanceId);
    await reconcile(deps);
    nodes.add('x', x.instanceId);
    await reconcile(deps);
    const xBlock = nodes.podCidrs('x')[0] ?? '?';
    expect(x.prefixes).toEqual([xBlock]);
    const z1 = ec2.addInstance('subnet-a');
    const z2 = ec2.addInstance('subnet-a');
    nodes.add('z1', z1.instanceId);
    nodes.add('z2', z2.instanceId);
    await reconcile(deps); // the four blocks are taken: keep, x, z1, z2
    const z2Block = nodes.podCidrs('z2')[0] ?? '?';
    nodes.stored.delete('x'); // kubectl delete node x; the instance keeps running, its prefix stays delegated
    nodes.stored.delete('z2'); // z2 is terminated: its prefix goes with it
    z2.prefixes.length = 0;
    advance(3600_000);
    expect((await reconcile(deps)).reclaimed).toEqual([{ cidr: xBlock, owner: 'x' }, { cidr: z2Block, owner: 'z2' }]);
    // x's prefix came off its still-running interface first; z2's had gone with its instance.
    expect(x.prefixes).toEqual([]);
    expect(ec2.calls.filter((call) => call.startsWith('unassignPrefix '))).toEqual([`unassignPrefix ${x.networkInterfaceId} ${xBlock}`]);

    nodes.add('y', ec2.addInstance('subnet-a').instanceId);
    advance(60_000);
    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    expect([xBlock, z2Block]).toContain(nodes.podCidrs('y')[0]);
    expect(nodes.networkUnavailable('y')).toBe('False');
    const leases = await (await setOf('10.0.8.0/26')).leases();
    expect(leases).not.toContainEqual(expect.objectContaining({ owner: 'ec2:prefix-in-use' }));
  });

  it('a refused prefix that an earlier call for the node put on its own interface is adopted, not held for the cloud (a timed-out admission whose Lambda ran on)', async () => {
    /** The admission's late AssignPrivateIpAddresses lands between the run's read and its own call for the same block. */
    class LateAdmission extends FakeEc2 {
      landed = false;
      override async assignPrefix(networkInterfaceId: string, cidr: string): Promise<void> {
        if (!this.landed) {
          this.landed = true;
          await super.assignPrefix(networkInterfaceId, cidr);
        }
        return super.assignPrefix(networkInterfaceId, cidr);
      }
    }
    const ec2 = new LateAdmission();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/26', type: 'explicit' }]);
    const nodes = new MemoryNodes();
    const { deps, setOf } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16' });
    const eni = ec2.addInstance('subnet-a');
    nodes.add('n', eni.instanceId);

    const report = await reconcile(deps);
    expect(report.errors).toEqual([]);
    const [block] = nodes.podCidrs('n');
    expect(block).toBeDefined();
    // One prefix, the node's: no second block assigned beside a stray one.
    expect(eni.prefixes).toEqual([block]);
    expect(nodes.networkUnavailable('n')).toBe('False');
    const leases = await (await setOf('10.0.8.0/26')).leases();
    expect(leases.map((lease) => [lease.cidr, lease.owner])).toEqual([[block, 'n']]);
  });

  /**
   * The admission leased block X for node n and its AssignPrivateIpAddresses lands just before the
   * run's own call for X; `read` decides what the run's second look at the interface answers.
   */
  async function lateAdmission(read: 'lagging' | 'throttled') {
    class Late extends FakeEc2 {
      landed = false;
      rereads = 0;
      override async assignPrefix(networkInterfaceId: string, cidr: string): Promise<void> {
        if (!this.landed) {
          this.landed = true;
          await super.assignPrefix(networkInterfaceId, cidr);
        }
        return super.assignPrefix(networkInterfaceId, cidr);
      }
      override async describeInterfaces(instanceIds: readonly string[]): Promise<Map<string, NodeInterface>> {
        if (!this.landed) return super.describeInterfaces(instanceIds);
        this.rereads += 1;
        if (read === 'throttled') throw Object.assign(new Error('Request limit exceeded.'), { name: 'RequestLimitExceeded' });
        // Eventually consistent: the interface is listed without the prefix that just landed.
        const found = await super.describeInterfaces(instanceIds);
        for (const eni of found.values()) eni.prefixes = [];
        return found;
      }
    }
    const ec2 = new Late();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/26', type: 'explicit' }]);
    const nodes = new MemoryNodes();
    const { deps, setOf } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16' });
    const eni = ec2.addInstance('subnet-a');
    const x = await (await setOf('10.0.8.0/26')).allocateNext('n'); // the admission's lease
    nodes.add('n', eni.instanceId); // stored without the patch: the admission timed out
    return { ec2, nodes, deps, setOf, eni, x };
  }

  it.each(['lagging', 'throttled'] as const)(
    'a refused block the node already leased is never held for the cloud (%s second read); the next run adopts it',
    async (read) => {
      const { ec2, nodes, deps, setOf, eni, x } = await lateAdmission(read);
      const first = await reconcile(deps);
      expect(ec2.rereads).toBe(1);
      expect(first.errors).toHaveLength(1);
      expect(JSON.stringify(first.errors)).toContain(x);
      expect(eni.prefixes).toEqual([x]); // no second block beside it
      expect((await (await setOf('10.0.8.0/26')).leases()).map((lease) => lease.owner)).not.toContain('ec2:prefix-in-use');
      expect(nodes.podCidrs('n')).toEqual([]);

      ec2.landed = false; // the reads have caught up
      const second = await reconcile(deps);
      expect(second.errors).toEqual([]);
      expect(nodes.podCidrs('n')).toEqual([x]);
      expect(eni.prefixes).toEqual([x]);
      expect((await (await setOf('10.0.8.0/26')).leases()).map((lease) => [lease.cidr, lease.owner])).toEqual([[x, 'n']]);
    },
  );

  it('reclaim takes a vanished node’s prefix off the interface a node re-registered on under another name, then releases its block', async () => {
    const ec2 = new FakeEc2();
    ec2.addSubnet('subnet-a', ['10.0.0.0/20'], [{ cidr: '10.0.8.0/26', type: 'explicit' }]);
    const nodes = new MemoryNodes();
    const { deps, advance, setOf } = prefixDeps(ec2, nodes, { CLUSTER_CIDRS: '10.0.0.0/16' });
    const eni = ec2.addInstance('subnet-a');
    nodes.add('x', eni.instanceId);
    await reconcile(deps);
    const xBlock = nodes.podCidrs('x')[0] ?? '?';
    // The Node is re-registered under another name on the same instance: the interface is read, x's lease is not live.
    nodes.stored.delete('x');
    nodes.add('x-again', eni.instanceId);
    advance(3600_000);
    const report = await reconcile(deps);
    expect(report.reclaimed).toEqual([{ cidr: xBlock, owner: 'x' }]);
    expect(await (await setOf('10.0.8.0/26')).leases()).not.toContainEqual(expect.objectContaining({ cidr: xBlock }));
    expect(nodes.podCidrs('x-again')).not.toContain(xBlock);
  });

  it('reports a node whose instance EC2 does not list yet, and syncs the others', async () => {
    const ec2 = new FakeEc2();
    threeSubnets(ec2);
    const nodes = new MemoryNodes();
    nodes.add('early', 'i-0000000000000beef');
    nodes.add('fine', ec2.addInstance('subnet-0').instanceId);
    const { deps } = prefixDeps(ec2, nodes);

    const report = await reconcile(deps);
    expect(report.allocated).toEqual(['fine']);
    expect(report.errors).toEqual([expect.objectContaining({ node: 'early', step: 'node-sync', message: expect.stringContaining('does not list instance') })]);
  });

  it('reclaims the lease of a vanished node from its pod range’s set', async () => {
    const ec2 = new FakeEc2();
    threeSubnets(ec2);
    const nodes = new MemoryNodes();
    nodes.add('stay', ec2.addInstance('subnet-0').instanceId);
    const { deps, setOf, advance } = prefixDeps(ec2, nodes, { LEASE_GRACE_SECONDS: '300' });
    const set = await setOf('10.0.8.0/22');
    await set.occupy('10.0.11.240/28', 'gone');
    advance(301_000);

    const report = await reconcile(deps);
    expect(report.reclaimed).toEqual([{ cidr: '10.0.11.240/28', owner: 'gone' }]);
    expect((await set.leases()).map((l) => l.owner)).toEqual(['stay']);
  });
});

describe('prefixes mode: the webhook', () => {
  it('patches a joining node with blocks leased from its subnet’s reservations, reading EC2 once and writing nothing to it: the worker assigns them', async () => {
    const ec2 = new FakeEc2();
    const subnets = threeSubnets(ec2);
    const eni = ec2.addInstance('subnet-2');
    const nodes = new MemoryNodes();
    const { deps, setOf } = prefixDeps(ec2, nodes);
    const object = { metadata: { name: 'joiner' }, spec: { providerID: `aws:///us-east-1c/${eni.instanceId}` } };

    const response = await admit({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u1', operation: 'CREATE', object } } as never, deps);
    const patch = JSON.parse(Buffer.from(response.response.patch ?? '', 'base64').toString()) as Array<{ path: string; value: unknown }>;
    const podCidrs = patch.find((op) => op.path === '/spec/podCIDRs')?.value as string[];
    expect(inside(subnets[2]?.reservations[0]?.cidr ?? '', podCidrs[0] ?? '')).toBe(true);
    expect(inside(subnets[2]?.reservations[1]?.cidr ?? '', podCidrs[1] ?? '')).toBe(true);
    // No EC2 write during the admission: the calls are the two reads, and the interface holds nothing yet.
    expect(ec2.calls).toEqual(['describeInterfaces 1', 'describeSubnets 1']);
    expect(ec2.interfaces.get(eni.instanceId)?.prefixes).toEqual([]);
    // The blocks are the node's leases, and the worker is handed what was admitted.
    const leased = await Promise.all([subnets[2]?.reservations[0]?.cidr ?? '', subnets[2]?.reservations[1]?.cidr ?? ''].map(async (range) => (await (await setOf(range)).ownedLease('joiner'))?.cidr));
    expect(leased).toEqual(podCidrs);
    expect((deps.queue as RecordingQueue).messages).toEqual([syncNodeMessage('joiner', { instanceId: eni.instanceId, podCidrs })]);
  });
});
