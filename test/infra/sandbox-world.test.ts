import { describe, expect, it, afterAll } from 'vitest';
import { containsCidr, parseCidr, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { buildWorld, instanceCapacity } from '../../infra/local/sandbox/world.ts';
import { startSandbox } from '../../infra/local/sandbox/index.ts';

const started: Ec2Emulator[] = [];
async function state() {
  const ec2 = await startEc2Emulator({ throttle: false });
  started.push(ec2);
  return ec2.state;
}
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

const inside = (outer: string | undefined, inner: string | undefined) => containsCidr(parseCidr(outer), parseCidr(inner));

describe('sandbox world', () => {
  it('prefixes mode with K subnets: K zones, a prefix reservation per family inside each subnet and the cluster CIDRs', async () => {
    const ec2 = await state();
    const world = buildWorld(ec2, { mode: 'prefixes', dualStack: true, subnets: 3, routeTables: 2, clusterName: 'demo' });
    expect(world.subnets.map((s) => [s.cidrBlock, s.ipv6CidrBlock, s.availabilityZone])).toEqual([
      ['10.0.0.0/18', '2600:1f18:1234:5600::/64', 'us-east-1a'],
      ['10.0.64.0/18', '2600:1f18:1234:5601::/64', 'us-east-1b'],
      ['10.0.128.0/18', '2600:1f18:1234:5602::/64', 'us-east-1c'],
    ]);
    for (const subnet of world.subnets) {
      const reservations = ec2.reservationsOf(subnet.id);
      expect(reservations.map((r) => [r.family, r.type])).toEqual([
        [4, 'prefix'],
        [6, 'prefix'],
      ]);
      for (const r of reservations) {
        expect(inside(r.family === 4 ? subnet.cidrBlock : subnet.ipv6CidrBlock, r.cidr)).toBe(true);
        expect(inside(r.family === 4 ? world.cluster.v4 : world.cluster.v6, r.cidr)).toBe(true);
      }
    }
    expect(world.routeTableIds).toHaveLength(2);
  });

  it('keeps instance addresses out of the reservations and feeds counted prefixes from them', async () => {
    const ec2 = await state();
    const world = buildWorld(ec2, { mode: 'prefixes', dualStack: false, subnets: 2, routeTables: 1, clusterName: 'demo' });
    for (const subnet of world.subnets) {
      const reservation = ec2.reservationsOf(subnet.id, 4)[0]?.cidr;
      for (let i = 0; i < 40; i++) {
        const instance = ec2.addInstance({ subnetId: subnet.id });
        expect(inside(reservation, `${instance.privateIpAddress}/32`)).toBe(false);
        expect(inside(subnet.cidrBlock, `${instance.privateIpAddress}/32`)).toBe(true);
        const eni = instance.networkInterfaceIds[0] ?? '';
        const [prefix] = ec2.assignPrefixes(eni, 4, { prefixes: [], count: 1 });
        expect(inside(reservation, prefix)).toBe(true);
      }
    }
  });

  it('the one-subnet prefixes world keeps its pod range in an explicit reservation; routes mode has no reservation', async () => {
    const prefixes = await state();
    const one = buildWorld(prefixes, { mode: 'prefixes', dualStack: false, routeTables: 1, clusterName: 'demo' });
    expect(one.subnets).toHaveLength(1);
    expect(prefixes.reservationsOf(one.subnets[0]?.id ?? '').map((r) => [r.cidr, r.type])).toEqual([['10.0.128.0/17', 'explicit']]);
    expect(one.cluster.v4).toBe('10.0.128.0/17');
    const routes = await state();
    const world = buildWorld(routes, { mode: 'routes', dualStack: true, routeTables: 1, clusterName: 'demo' });
    expect(world.subnets.map((s) => s.cidrBlock)).toEqual(['10.0.0.0/18']);
    expect(routes.reservations.size).toBe(0);
    expect(world.cluster.v4).toBe('100.64.0.0/10');
  });

  it.each([[0], [17], [2.5]])('refuses %j subnets', async (subnets) => {
    const ec2 = await state();
    expect(() => buildWorld(ec2, { mode: 'prefixes', dualStack: false, subnets, routeTables: 1, clusterName: 'demo' })).toThrow(RangeError);
  });

  it('refuses subnets in routes mode', async () => {
    const ec2 = await state();
    expect(() => buildWorld(ec2, { mode: 'routes', dualStack: false, subnets: 2, routeTables: 1, clusterName: 'demo' })).toThrow(RangeError);
  });

  it('counts the instance addresses of the node subnets', () => {
    expect(instanceCapacity('routes', undefined)).toBe(16_379);
    expect(instanceCapacity('prefixes', 3)).toBe(3 * (8192 - 4));
    expect(instanceCapacity('prefixes', 16)).toBe(16 * (2048 - 4));
  });
});

describe('sandbox in prefixes mode with subnets', () => {
  it('spreads the nodes over the subnets and their zones', async () => {
    const sandbox = await startSandbox({ mode: 'prefixes', subnets: 3, nodes: 6, tickMs: 0, throttle: false });
    try {
      const zones = ['node-001', 'node-002', 'node-003', 'node-004', 'node-005', 'node-006'].map((name) => {
        const instance = sandbox.ec2.state.instances.get(sandbox.instanceOf(name) ?? '');
        return instance?.availabilityZone;
      });
      expect(zones).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1a', 'us-east-1b', 'us-east-1c']);
      expect(sandbox.config.clusterCidrs).toEqual(['10.0.0.0/16']);
      const report = await sandbox.snapshot();
      expect(report.podCidrsOutsideSubnet).toEqual(expect.any(Number));
      for (const instance of sandbox.ec2.state.instances.values()) {
        const subnet = sandbox.ec2.state.subnets.get(instance.subnetId);
        const reservation = tryParseCidr(sandbox.ec2.state.reservationsOf(instance.subnetId, 4)[0]?.cidr);
        expect(subnet).toBeDefined();
        expect(reservation && containsCidr(reservation, parseCidr(`${instance.privateIpAddress}/32`))).toBe(false);
      }
    } finally {
      await sandbox.stop();
    }
  }, 60_000);
});
