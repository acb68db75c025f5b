import {
  AssignIpv6AddressesCommand,
  AssignPrivateIpAddressesCommand,
  CreateSubnetCidrReservationCommand,
  DeleteSubnetCidrReservationCommand,
  DescribeInstancesCommand,
  DescribeSubnetsCommand,
  EC2Client,
  EC2ServiceException,
  GetSubnetCidrReservationsCommand,
} from '@aws-sdk/client-ec2';
import { afterAll, describe, expect, it } from 'vitest';
import { containsCidr, parseCidr, tryParseAddress } from '../../lib/cidr/cidr.ts';
import { ASSIGN_PREFIX_BUCKETS, INSTANCE_TYPE_LIMITS, minimumSeconds, startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator, Ec2EmulatorOptions } from '../../infra/local/ec2/index.ts';
import { TokenBuckets } from '../../infra/local/ec2/throttle.ts';
import { scaledThrottle } from '../../infra/local/sandbox/world.ts';

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' };
const started: Ec2Emulator[] = [];
async function emulator(options: Ec2EmulatorOptions = {}) {
  const ec2 = await startEc2Emulator({ throttle: false, ...options });
  started.push(ec2);
  return { ec2, client: new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 }) };
}
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

async function failure(promise: Promise<unknown>): Promise<EC2ServiceException> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(EC2ServiceException);
    return error as EC2ServiceException;
  }
  throw new Error('expected the call to fail');
}

const inside = (outer: string, inner: string | undefined) => containsCidr(parseCidr(outer), parseCidr(inner));
const addressOf = (text: string): bigint => tryParseAddress(text)?.value ?? -1n;

/** A dual-stack VPC with one subnet per zone (10.0.<16*i>.0/20, its own /64). */
function multiAz(ec2: Ec2Emulator, zones = ['us-east-1a', 'us-east-1b', 'us-east-1c']) {
  const vpc = ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  const subnets = zones.map((zone, i) =>
    ec2.state.addSubnet({
      vpcId: vpc.id,
      cidrBlock: `10.0.${16 * i}.0/20`,
      ipv6CidrBlock: `2600:1f18:1234:56${(i + 1).toString(16).padStart(2, '0')}::/64`,
      availabilityZone: zone,
      tags: { Name: `nodes-${zone}` },
    }),
  );
  return { vpc, subnets };
}

describe('EC2 emulator: DescribeSubnets', () => {
  it('describes several subnets in several zones, filtered by vpc-id, subnet-id and availability-zone, paged', async () => {
    const { ec2, client } = await emulator();
    const { vpc, subnets } = multiAz(ec2, ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d', 'us-east-1e', 'us-east-1f']);
    const other = ec2.state.addVpc({ cidrBlock: '172.16.0.0/16' });
    ec2.state.addSubnet({ vpcId: other.id, cidrBlock: '172.16.0.0/24', availabilityZone: 'us-east-1a' });

    const all = await client.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'vpc-id', Values: [vpc.id] }] }));
    expect(all.Subnets?.map((s) => s.AvailabilityZone)).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d', 'us-east-1e', 'us-east-1f']);
    const first = all.Subnets?.[0];
    expect(first).toMatchObject({
      SubnetId: subnets[0]?.id,
      VpcId: vpc.id,
      CidrBlock: '10.0.0.0/20',
      State: 'available',
      AvailabilityZoneId: 'use1-az1',
      AvailableIpAddressCount: 4096 - 5,
      Ipv6CidrBlockAssociationSet: [expect.objectContaining({ Ipv6CidrBlock: '2600:1f18:1234:5601::/64', Ipv6CidrBlockState: { State: 'associated' } })],
      Tags: [{ Key: 'Name', Value: 'nodes-us-east-1a' }],
    });

    const zoneB = await client.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'availability-zone', Values: ['us-east-1b'] }] }));
    expect(zoneB.Subnets?.map((s) => s.SubnetId)).toEqual([subnets[1]?.id]);
    const byId = await client.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'subnet-id', Values: [subnets[2]?.id ?? ''] }] }));
    expect(byId.Subnets?.map((s) => s.CidrBlock)).toEqual(['10.0.32.0/20']);
    const zoneA = await client.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'availability-zone', Values: ['us-east-1a'] }] }));
    expect(zoneA.Subnets).toHaveLength(2);

    const firstPage = await client.send(new DescribeSubnetsCommand({ MaxResults: 5 }));
    expect(firstPage.Subnets).toHaveLength(5);
    const secondPage = await client.send(new DescribeSubnetsCommand({ MaxResults: 5, NextToken: firstPage.NextToken }));
    expect(secondPage.Subnets).toHaveLength(2);
    expect(secondPage.NextToken).toBeUndefined();

    const missing = await failure(client.send(new DescribeSubnetsCommand({ SubnetIds: ['subnet-0000000000000dead'] })));
    expect(missing.name).toBe('InvalidSubnetID.NotFound');
  });
});

describe('EC2 emulator: subnet CIDR reservations', () => {
  it('creates prefix and explicit reservations, lists them by family, and deletes them', async () => {
    const { ec2, client } = await emulator();
    const { subnets } = multiAz(ec2);
    const subnetId = subnets[0]?.id ?? '';
    const v4 = await client.send(new CreateSubnetCidrReservationCommand({ SubnetId: subnetId, Cidr: '10.0.8.0/21', ReservationType: 'prefix', Description: 'podroute' }));
    expect(v4.SubnetCidrReservation).toMatchObject({ SubnetId: subnetId, Cidr: '10.0.8.0/21', ReservationType: 'prefix', OwnerId: '123456789012', Description: 'podroute' });
    expect(v4.SubnetCidrReservation?.SubnetCidrReservationId).toMatch(/^scr-[0-9a-f]{17}$/);
    await client.send(new CreateSubnetCidrReservationCommand({ SubnetId: subnetId, Cidr: '10.0.4.0/24', ReservationType: 'explicit' }));
    await client.send(new CreateSubnetCidrReservationCommand({ SubnetId: subnetId, Cidr: '2600:1f18:1234:5601:8000::/65', ReservationType: 'prefix' }));

    const listed = await client.send(new GetSubnetCidrReservationsCommand({ SubnetId: subnetId }));
    expect(listed.SubnetIpv4CidrReservations?.map((r) => [r.Cidr, r.ReservationType])).toEqual([
      ['10.0.8.0/21', 'prefix'],
      ['10.0.4.0/24', 'explicit'],
    ]);
    expect(listed.SubnetIpv6CidrReservations?.map((r) => r.Cidr)).toEqual(['2600:1f18:1234:5601:8000::/65']);
    const prefixOnly = await client.send(new GetSubnetCidrReservationsCommand({ SubnetId: subnetId, Filters: [{ Name: 'reservationType', Values: ['prefix'] }] }));
    expect(prefixOnly.SubnetIpv4CidrReservations?.map((r) => r.Cidr)).toEqual(['10.0.8.0/21']);
    const elsewhere = await client.send(new GetSubnetCidrReservationsCommand({ SubnetId: subnets[1]?.id }));
    expect(elsewhere.SubnetIpv4CidrReservations).toEqual([]);

    const deleted = await client.send(new DeleteSubnetCidrReservationCommand({ SubnetCidrReservationId: v4.SubnetCidrReservation?.SubnetCidrReservationId }));
    expect(deleted.DeletedSubnetCidrReservation?.Cidr).toBe('10.0.8.0/21');
    const after = await client.send(new GetSubnetCidrReservationsCommand({ SubnetId: subnetId }));
    expect(after.SubnetIpv4CidrReservations?.map((r) => r.Cidr)).toEqual(['10.0.4.0/24']);
    const again = await failure(client.send(new DeleteSubnetCidrReservationCommand({ SubnetCidrReservationId: v4.SubnetCidrReservation?.SubnetCidrReservationId })));
    expect(again.name).toBe('InvalidSubnetCidrReservationID.NotFound');
  });

  it.each([
    ['outside the subnet', '10.0.16.0/24', 'prefix', 'InvalidParameterValue'],
    ['overlapping another reservation', '10.0.8.0/24', 'explicit', 'InvalidParameterValue'],
    ['containing another reservation', '10.0.0.0/20', 'prefix', 'InvalidParameterValue'],
    ['not a CIDR', '10.0.8.1', 'prefix', 'InvalidParameterValue'],
    ['with host bits set', '10.0.4.1/24', 'prefix', 'InvalidParameterValue'],
    ['IPv6 outside the subnet /64', '2600:1f18:1234:5602::/80', 'prefix', 'InvalidParameterValue'],
    ['of an unknown type', '10.0.12.0/24', 'automatic', 'InvalidParameterValue'],
  ])('refuses a reservation %s, and keeps the others', async (_what, cidr, type, code) => {
    const { ec2, client } = await emulator();
    const { subnets } = multiAz(ec2);
    const SubnetId = subnets[0]?.id ?? '';
    await client.send(new CreateSubnetCidrReservationCommand({ SubnetId, Cidr: '10.0.8.0/22', ReservationType: 'prefix' }));
    const error = await failure(client.send(new CreateSubnetCidrReservationCommand({ SubnetId, Cidr: cidr, ReservationType: type as 'prefix' })));
    expect(error.name).toBe(code);
    expect([...ec2.state.reservations.values()].map((r) => r.cidr)).toEqual(['10.0.8.0/22']);
  });

  it('refuses a reservation in an unknown subnet', async () => {
    const { client } = await emulator();
    const error = await failure(client.send(new CreateSubnetCidrReservationCommand({ SubnetId: 'subnet-0000000000000dead', Cidr: '10.0.0.0/24', ReservationType: 'prefix' })));
    expect(error.name).toBe('InvalidSubnetID.NotFound');
  });
});

describe('EC2 emulator: automatic addresses', () => {
  it('hands instance addresses out across the whole subnet, not from its bottom', async () => {
    const { ec2, client } = await emulator();
    const { subnets } = multiAz(ec2);
    const subnetId = subnets[1]?.id ?? '';
    const ids = Array.from({ length: 30 }, () => ec2.state.addInstance({ subnetId }).id);
    const out = await client.send(new DescribeInstancesCommand({ InstanceIds: ids }));
    const addresses = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => i.PrivateIpAddress ?? '');
    expect(addresses).toHaveLength(30);
    expect(new Set(addresses).size).toBe(30);
    for (const a of addresses) expect(inside('10.0.16.0/20', `${a}/32`)).toBe(true);
    // From the bottom, 30 addresses would be 10.0.16.4 .. 10.0.16.33.
    const values = addresses.map(addressOf).sort((a, b) => (a < b ? -1 : 1));
    expect((values.at(-1) ?? 0n) - (values[0] ?? 0n)).toBeGreaterThan(1000n);
  });

  it('never hands out the subnet five or an address inside a reservation, and says when none is left', async () => {
    const { ec2 } = await emulator();
    const vpc = ec2.state.addVpc({ cidrBlock: '10.9.0.0/16' });
    const subnet = ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.9.0.0/27' });
    ec2.state.createReservation({ subnetId: subnet.id, cidr: '10.9.0.16/28', type: 'explicit' });
    // .0-.3 and .31 are the subnet's; .16-.31 are reserved: .4-.15 are the 12 EC2 may hand out.
    const addresses = Array.from({ length: 12 }, () => ec2.state.addInstance({ subnetId: subnet.id }).privateIpAddress);
    expect(addresses.map((a) => Number(addressOf(a) - addressOf('10.9.0.0'))).sort((a, b) => a - b)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(() => ec2.state.addInstance({ subnetId: subnet.id })).toThrow(/full/);
  });
});

describe('EC2 emulator: prefixes and subnets', () => {
  it('refuses an explicit prefix outside the interface subnet, also one of a sibling subnet', async () => {
    const { ec2, client } = await emulator();
    const { subnets } = multiAz(ec2);
    const node = ec2.state.addInstance({ subnetId: subnets[0]?.id ?? '' });
    const eni = node.networkInterfaceIds[0];
    const v4 = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: ['10.0.16.16/28'] })));
    expect(v4.name).toBe('InvalidParameterValue');
    const v6 = await failure(client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6Prefixes: ['2600:1f18:1234:5602::/80'] })));
    expect(v6.name).toBe('InvalidParameterValue');
    expect(ec2.state.networkInterfaces.get(eni ?? '')?.ipv4Prefixes).toEqual([]);
    const inSubnet = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: ['10.0.1.16/28'] }));
    expect(inSubnet.AssignedIpv4Prefixes).toEqual([{ Ipv4Prefix: '10.0.1.16/28' }]);
  });

  it('picks counted prefixes from the subnet prefix reservations of each family', async () => {
    const { ec2, client } = await emulator();
    const { subnets } = multiAz(ec2);
    const subnetId = subnets[2]?.id ?? '';
    ec2.state.createReservation({ subnetId, cidr: '10.0.40.0/24', type: 'prefix' });
    ec2.state.createReservation({ subnetId, cidr: '10.0.44.0/26', type: 'prefix' });
    ec2.state.createReservation({ subnetId, cidr: '2600:1f18:1234:5603:ffff::/80', type: 'explicit' });
    ec2.state.createReservation({ subnetId, cidr: '2600:1f18:1234:5603:4000::/66', type: 'prefix' });
    const picked: string[] = [];
    for (let i = 0; i < 6; i++) {
      const node = ec2.state.addInstance({ subnetId });
      const eni = node.networkInterfaceIds[0];
      const v4 = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 }));
      const v6 = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6PrefixCount: 1 }));
      const p4 = v4.AssignedIpv4Prefixes?.[0]?.Ipv4Prefix ?? '';
      expect(inside('10.0.40.0/24', p4) || inside('10.0.44.0/26', p4)).toBe(true);
      expect(inside('2600:1f18:1234:5603:4000::/66', v6.AssignedIpv6Prefixes?.[0])).toBe(true);
      picked.push(p4);
    }
    expect(new Set(picked).size).toBe(6);
  });

  it.each(['10.1.0.0', '10.1.0.1', '10.1.0.3', '10.1.0.63'])('refuses to give an instance %s, one of the subnet five (VPC User Guide, "Subnet CIDR blocks")', async (address) => {
    const { ec2 } = await emulator();
    const vpc = ec2.state.addVpc({ cidrBlock: '10.1.0.0/16' });
    const subnet = ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.1.0.0/26' });
    expect(() => ec2.state.addInstance({ subnetId: subnet.id, privateIpAddress: address })).toThrow(/one of the five addresses/);
    expect(ec2.state.addInstance({ subnetId: subnet.id, privateIpAddress: '10.1.0.4' }).privateIpAddress).toBe('10.1.0.4');
  });

  it('keeps counted prefixes out of explicit reservations and the subnet five, and says when no block is left', async () => {
    const { ec2, client } = await emulator();
    const vpc = ec2.state.addVpc({ cidrBlock: '10.1.0.0/16' });
    const subnet = ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.1.0.0/26' });
    ec2.state.createReservation({ subnetId: subnet.id, cidr: '10.1.0.32/27', type: 'explicit' });
    const node = ec2.state.addInstance({ subnetId: subnet.id, privateIpAddress: '10.1.0.4' });
    const eni = node.networkInterfaceIds[0];
    // 10.1.0.0/28 holds the subnet's first four and the node; the upper /27 is explicit: one /28 is left.
    const first = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 }));
    expect(first.AssignedIpv4Prefixes).toEqual([{ Ipv4Prefix: '10.1.0.16/28' }]);
    const none = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 })));
    expect(none.name).toBe('InsufficientCidrBlocks');
    // An explicit reservation is for explicit assignment: naming its prefix works.
    const named = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: ['10.1.0.32/28'] }));
    expect(named.AssignedIpv4Prefixes).toEqual([{ Ipv4Prefix: '10.1.0.32/28' }]);
    // ... but not one holding the subnet's last (broadcast) address.
    const last = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: ['10.1.0.48/28'] })));
    expect(last.name).toBe('InvalidParameterValue');
  });
});

describe('EC2 emulator: per-interface limits of the instance type', () => {
  it('counts each prefix against the interface address limit: PrivateIpAddressLimitExceeded, nothing assigned', async () => {
    const { ec2, client } = await emulator();
    multiAz(ec2);
    expect(INSTANCE_TYPE_LIMITS['t3.nano']).toEqual({ interfaces: 2, ipv4PerInterface: 2, ipv6PerInterface: 2 });
    const nano = ec2.state.addInstance({ instanceType: 't3.nano' });
    const eni = nano.networkInterfaceIds[0];
    // IPv4: 2 per interface, the primary address is one.
    await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 }));
    const v4 = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 })));
    expect(v4.name).toBe('PrivateIpAddressLimitExceeded');
    // IPv6: 2 per interface; asking for three at once assigns none.
    const v6 = await failure(client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6PrefixCount: 3 })));
    expect(v6.name).toBe('PrivateIpAddressLimitExceeded');
    expect(ec2.state.networkInterfaces.get(eni ?? '')?.ipv6Prefixes).toEqual([]);
    await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6PrefixCount: 2 }));
    const described = await client.send(new DescribeInstancesCommand({ InstanceIds: [nano.id] }));
    expect(described.Reservations?.[0]?.Instances?.[0]?.InstanceType).toBe('t3.nano');
  });

  it('gives an unknown type the limits of m5.large (10 IPv4 per interface: 9 prefixes)', async () => {
    const { ec2, client } = await emulator();
    multiAz(ec2);
    const node = ec2.state.addInstance({ instanceType: 'x9.imaginary' });
    const eni = node.networkInterfaceIds[0];
    const nine = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 9 }));
    expect(nine.AssignedIpv4Prefixes).toHaveLength(9);
    const tenth = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 })));
    expect(tenth.name).toBe('PrivateIpAddressLimitExceeded');
  });
});

describe('EC2 emulator: the prefix calls buckets', () => {
  it('exports each prefix call bucket and a lower bound from it', () => {
    expect(ASSIGN_PREFIX_BUCKETS.AssignPrivateIpAddresses).toEqual({ capacity: 50, refillPerSecond: 5 });
    expect(ASSIGN_PREFIX_BUCKETS.AssignIpv6Addresses).toEqual({ capacity: 50, refillPerSecond: 5 });
    expect(minimumSeconds(ASSIGN_PREFIX_BUCKETS.AssignPrivateIpAddresses, 1000)).toBe(190);
    expect(minimumSeconds(ASSIGN_PREFIX_BUCKETS.AssignPrivateIpAddresses, 50)).toBe(0);
    expect(() => minimumSeconds(ASSIGN_PREFIX_BUCKETS.AssignIpv6Addresses, -1)).toThrow(RangeError);
  });

  it('throttles AssignPrivateIpAddresses and AssignIpv6Addresses each in its own bucket of that size', async () => {
    let clock = 0;
    const { ec2, client } = await emulator({ throttle: {}, now: () => clock });
    multiAz(ec2);
    const eni = ec2.state.addInstance({ instanceType: 'c5.metal' }).networkInterfaceIds[0];
    const assign4 = () => client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 }));
    for (let i = 0; i < 49; i++) await assign4();
    // The 50th token is spent on a call the address limit refuses; the 51st call finds the bucket empty.
    expect((await failure(assign4())).name).toBe('PrivateIpAddressLimitExceeded');
    expect((await failure(assign4())).name).toBe('RequestLimitExceeded');
    // AssignIpv6Addresses draws from its own, still full bucket.
    await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6PrefixCount: 1 }));
    clock += 1000; // 5 tokens back
    expect((await failure(assign4())).name).toBe('PrivateIpAddressLimitExceeded');
  });

  it('refills the prefix calls buckets as fast as the sandbox speeds the mutating category up', () => {
    let clock = 0;
    const buckets = new TokenBuckets(scaledThrottle(30), () => clock);
    for (let i = 0; i < 50; i++) expect(buckets.take('AssignPrivateIpAddresses')).toBe(true);
    expect(buckets.take('AssignPrivateIpAddresses')).toBe(false);
    clock += 100; // 5 x 30 tokens a second: 15 in 100 ms
    for (let i = 0; i < 15; i++) expect(buckets.take('AssignPrivateIpAddresses')).toBe(true);
    expect(buckets.take('AssignPrivateIpAddresses')).toBe(false);
  });
});
