/**
 * Prefixes mode over the EC2 emulator (real SDK, real HTTP) and dynalite, wired by buildWiring:
 * several subnets in several zones, each with podroute's reservations; EC2 calls counted.
 */
import { describe, expect, it } from 'vitest';
import { SUBNET_CACHE_TTL_MS } from '../../lib/aws/ec2-subnets.ts';
import { containsCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const inside = (outer: string, inner: string | undefined) => inner !== undefined && containsCidr(parseCidr(outer), parseCidr(inner));
const ENV = { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16,2600:1f18:1234:5600::/56' };

/** Three /20 subnets (us-east-1a..c) with an explicit IPv4 and IPv6 reservation for pods each. */
function subnets(w: World) {
  const vpc = w.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  return [0, 1, 2].map((i) => {
    const subnet = w.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: `10.0.${i * 16}.0/20`, ipv6CidrBlock: `2600:1f18:1234:560${i}::/64`, availabilityZone: `us-east-1${'abc'[i]}` });
    const v4 = w.ec2.state.createReservation({ subnetId: subnet.id, cidr: `10.0.${i * 16 + 8}.0/22`, type: 'explicit', description: 'podroute' }).cidr;
    const v6 = w.ec2.state.createReservation({ subnetId: subnet.id, cidr: `2600:1f18:1234:560${i}:8000::/65`, type: 'explicit', description: 'podroute' }).cidr;
    return { id: subnet.id, v4, v6 };
  });
}

describe('prefixes mode over the EC2 emulator', () => {
  it('converges 12 nodes of three zones into their subnets’ reservations with one DescribeInstances per run', async () => {
    const zones = subnets(world);
    const names = Array.from({ length: 12 }, (_, i) => `node-${i}`);
    for (const [i, name] of names.entries()) await world.addNode(name, { instance: world.ec2.state.addInstance({ subnetId: zones[i % 3]?.id ?? '' }) });
    const w = await testWiring(world, local, ENV);
    world.resetStats();

    const report = await reconcile(w.reconcileDeps());
    expect(report.errors).toEqual([]);
    expect(report.allocated).toHaveLength(12);
    for (const [i, name] of names.entries()) {
      const [v4, v6] = world.podCidrs(name);
      const zone = zones[i % 3];
      expect([inside(zone?.v4 ?? '', v4), inside(zone?.v6 ?? '', v6)]).toEqual([true, true]);
      expect(world.networkUnavailable(name)).toBe('False');
    }
    expect(new Set(names.flatMap((name) => world.podCidrs(name))).size).toBe(24);
    // Issue 9: the EC2 reads of a run do not grow with the number of nodes.
    const reads = () => ['DescribeInstances', 'DescribeSubnets', 'GetSubnetCidrReservations'].map((a) => world.ec2.stats.count(a));
    expect(reads()).toEqual([1, 1, 3]);
    expect(world.ec2.stats.count('AssignPrivateIpAddresses') + world.ec2.stats.count('AssignIpv6Addresses')).toBe(24);

    world.resetStats();
    const again = await reconcile(w.reconcileDeps());
    expect([again.allocated, again.errors, world.ec2Writes(), world.kubeWrites()]).toEqual([[], [], 0, 0]);
    // Subnets and reservations are remembered for SUBNET_CACHE_TTL_MS, instances are read every run.
    expect(reads()).toEqual([1, 0, 0]);
    world.clock.advance(SUBNET_CACHE_TTL_MS);
    world.resetStats();
    await reconcile(w.reconcileDeps());
    expect(reads()).toEqual([1, 1, 3]);
  });

  it('adopts the prefixes a timed-out admission left on the interface (SyncFromCluster)', async () => {
    const zones = subnets(world);
    const instance = world.ec2.state.addInstance({ subnetId: zones[1]?.id ?? '' });
    const eni = world.ec2.state.primaryInterface(instance.id)?.id ?? '';
    world.ec2.state.assignPrefixes(eni, 4, { prefixes: ['10.0.24.64/28'], count: undefined });
    world.ec2.state.assignPrefixes(eni, 6, { prefixes: ['2600:1f18:1234:5601:8000::/80'], count: undefined });
    await world.addNode('late', { instance });
    const w = await testWiring(world, local, ENV);
    world.resetStats();

    const report = await reconcile(w.reconcileDeps());
    expect(report.errors).toEqual([]);
    expect(world.podCidrs('late')).toEqual(['10.0.24.64/28', '2600:1f18:1234:5601:8000::/80']);
    expect(world.networkUnavailable('late')).toBe('False');
    expect(world.ec2Writes()).toBe(0);
    expect(world.eventReasons('late')).toEqual([]);
  });

  it('keeps a node of a subnet without reservations unavailable, with an Event naming its subnet', async () => {
    subnets(world);
    const vpc = [...world.ec2.state.vpcs.values()][0];
    const bare = world.ec2.state.addSubnet({ vpcId: vpc?.id ?? '', cidrBlock: '10.0.64.0/20', ipv6CidrBlock: '2600:1f18:1234:5609::/64', availabilityZone: 'us-east-1d' });
    await world.addNode('bare', { instance: world.ec2.state.addInstance({ subnetId: bare.id }) });
    const w = await testWiring(world, local, ENV);

    const report = await reconcile(w.reconcileDeps());
    expect(report.allocated).toEqual([]);
    expect(world.podCidrs('bare')).toEqual([]);
    expect(world.networkUnavailable('bare')).toBe('True');
    expect(world.eventReasons('bare')).toEqual(['PodCidrNoReservation']);
    expect(world.ec2Writes()).toBe(0);
  });
});
