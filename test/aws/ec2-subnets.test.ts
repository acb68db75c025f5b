import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, describe, expect, it } from 'vitest';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { CachedSubnets, Ec2Subnets } from '../../lib/aws/ec2-subnets.ts';

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' };
const started: Ec2Emulator[] = [];
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

describe('Ec2Subnets against the emulator', () => {
  it('reads subnets with their IPv4 and IPv6 reservations: one DescribeSubnets, one GetSubnetCidrReservations per subnet', async () => {
    const ec2 = await startEc2Emulator({ throttle: false });
    started.push(ec2);
    const client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 });
    const vpc = ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
    const a = ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.0.0/20', ipv6CidrBlock: '2600:1f18:1234:5600::/64', availabilityZone: 'us-east-1a' });
    const b = ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.16.0/20', availabilityZone: 'us-east-1b' });
    const other = ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.32.0/20', availabilityZone: 'us-east-1c' });
    const r1 = ec2.state.createReservation({ subnetId: a.id, cidr: '10.0.8.0/22', type: 'explicit', description: 'podroute' });
    const r2 = ec2.state.createReservation({ subnetId: a.id, cidr: '2600:1f18:1234:5600:8000::/65', type: 'prefix' });
    ec2.state.createReservation({ subnetId: other.id, cidr: '10.0.40.0/22', type: 'prefix' });

    const found = await new Ec2Subnets(client).describeSubnets([a.id, b.id, 'subnet-0000000000000dead']);
    expect([...found.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(found.get(a.id)).toEqual({
      subnetId: a.id,
      availabilityZone: 'us-east-1a',
      cidrs: ['10.0.0.0/20', '2600:1f18:1234:5600::/64'],
      reservations: [
        { reservationId: r1.id, cidr: '10.0.8.0/22', type: 'explicit', description: 'podroute' },
        { reservationId: r2.id, cidr: '2600:1f18:1234:5600:8000::/65', type: 'prefix', description: undefined },
      ],
    });
    expect(found.get(b.id)?.reservations).toEqual([]);
    expect([ec2.stats.count('DescribeSubnets'), ec2.stats.count('GetSubnetCidrReservations')]).toEqual([1, 2]);
  });
});

describe('CachedSubnets', () => {
  it('reads each subnet once per TTL, shares a read under way, and forgets failures and unknown ids', async () => {
    let clock = 0;
    const calls: string[][] = [];
    let fail = false;
    const subnet = (id: string) => ({ subnetId: id, availabilityZone: undefined, cidrs: [], reservations: [] });
    const inner = {
      describeSubnets: async (ids: readonly string[]) => {
        calls.push([...ids]);
        await Promise.resolve();
        if (fail) throw new Error('throttled');
        return new Map(ids.filter((id) => id !== 'subnet-unknown').map((id) => [id, subnet(id)]));
      },
    };
    const cached = new CachedSubnets(inner, 1000, () => clock);

    const [a, b] = await Promise.all([cached.describeSubnets(['subnet-a', 'subnet-b']), cached.describeSubnets(['subnet-b', 'subnet-unknown'])]);
    expect([[...a.keys()], [...b.keys()]]).toEqual([['subnet-a', 'subnet-b'], ['subnet-b']]);
    expect(calls).toEqual([['subnet-a', 'subnet-b'], ['subnet-unknown']]);

    clock = 999;
    expect([...(await cached.describeSubnets(['subnet-a', 'subnet-unknown'])).keys()]).toEqual(['subnet-a']);
    expect(calls.slice(2)).toEqual([['subnet-unknown']]);

    clock = 1999;
    fail = true;
    await expect(cached.describeSubnets(['subnet-a'])).rejects.toThrow('throttled');
    fail = false;
    expect([...(await cached.describeSubnets(['subnet-a'])).keys()]).toEqual(['subnet-a']);
    expect(calls.slice(3)).toEqual([['subnet-a'], ['subnet-a']]);
  });
});
