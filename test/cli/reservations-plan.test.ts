/**
 * The pure planner behind `podroute reservations`: which prefix-type subnet CIDR reservation each
 * subnet gets, and why a subnet gets none.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Cidr, addressBits, containsAddress, containsCidr, formatCidr, lastAddress, parseCidr } from '../../lib/cidr/cidr.ts';
import { type Subnet, parseSubnets } from '../../lib/dataplane/prefixes/describe-subnets.ts';
import { planReservations } from '../../lib/dataplane/prefixes/reservation-plan.ts';

const subnet = (id: string, v4: string | null, v6: string[] = [], available: number | null = null): Subnet => ({
  subnetId: id,
  vpcId: 'vpc-1',
  availabilityZone: 'us-east-1a',
  ipv4: v4 === null ? null : parseCidr(v4),
  ipv6: v6.map((cidr) => parseCidr(cidr)),
  availableIpAddressCount: available,
});

const plan = (subnets: Subnet[], clusterCidrs: string[], podShare?: number) =>
  planReservations({ subnets, clusterCidrs: clusterCidrs.map((cidr) => parseCidr(cidr)), ...(podShare === undefined ? {} : { podShare }) });

describe('planReservations picks one block per subnet and family', () => {
  it.each([
    // A /24 inside the cluster CIDR: both halves hold addresses AWS keeps (the first four, the
    // last), so a share of 0.5 yields the highest quarter that holds none: .128/26.
    ['half a /24 inside the cluster CIDR', '10.0.1.0/24', '10.0.0.0/16', 0.5, '10.0.1.128/26', 4, 0.25],
    ['a share of exactly a quarter', '10.0.1.0/24', '10.0.0.0/16', 0.25, '10.0.1.128/26', 4, 0.25],
    ['a share between powers of two rounds down', '10.0.1.0/24', '10.0.0.0/16', 0.2, '10.0.1.192/27', 2, 0.125],
    ['a large subnet', '10.0.0.0/19', '10.0.0.0/16', 0.5, '10.0.16.0/21', 128, 0.25],
    ['a cluster CIDR smaller than the subnet: the cluster CIDR itself', '10.0.0.0/16', '10.0.128.0/20', 0.5, '10.0.128.0/20', 256, 1 / 16],
    ['the cluster CIDR covers only the top half: its highest block short of the last', '10.0.1.0/24', '10.0.1.128/25', 0.5, '10.0.1.128/26', 4, 0.25],
    ['the smallest reservation: one /28', '10.0.1.0/26', '10.0.0.0/16', 0.25, '10.0.1.32/28', 1, 0.25],
    ['IPv6: a /64 inside the cluster /56', '2600:1f18:4a3:6b00::/64', '2600:1f18:4a3:6b00::/56', 0.5, '2600:1f18:4a3:6b00:8000::/66', 16384, 0.25],
    ['IPv6: a cluster /80 inside the subnet', '2600:1f18:4a3:6b00::/64', '2600:1f18:4a3:6b00:1::/80', 0.5, '2600:1f18:4a3:6b00:1::/80', 1, 2 ** -16],
  ])('%s', (_name, subnetCidr, clusterCidr, share, want, prefixes, wantShare) => {
    const family = parseCidr(subnetCidr).family;
    const s = family === 4 ? subnet('subnet-a', subnetCidr) : subnet('subnet-a', '10.9.0.0/24', [subnetCidr]);
    const result = plan([s], [clusterCidr], share);
    expect(result.reservations).toEqual([
      { subnetId: 'subnet-a', availabilityZone: 'us-east-1a', family, subnetCidr, cidr: want, prefixes, share: wantShare },
    ]);
    expect(result.warnings).toEqual([]);
  });

  it('orders by subnet id, IPv4 before IPv6, and skips nothing', () => {
    const subnets = [
      subnet('subnet-b', '10.0.32.0/19', ['2600:1f18:4a3:6b01::/64']),
      subnet('subnet-a', '10.0.0.0/19', ['2600:1f18:4a3:6b00::/64']),
    ];
    const result = plan(subnets, ['2600:1f18:4a3:6b00::/56', '10.0.0.0/16']);
    expect(result.reservations.map((r) => [r.subnetId, r.cidr])).toEqual([
      ['subnet-a', '10.0.16.0/21'],
      ['subnet-a', '2600:1f18:4a3:6b00:8000::/66'],
      ['subnet-b', '10.0.48.0/21'],
      ['subnet-b', '2600:1f18:4a3:6b01:8000::/66'],
    ]);
  });

  it('plans only the families of the cluster CIDRs', () => {
    const result = plan([subnet('subnet-a', '10.0.0.0/19', ['2600:1f18:4a3:6b00::/64'])], ['10.0.0.0/16']);
    expect(result.reservations.map((r) => r.family)).toEqual([4]);
  });
});

describe('planReservations refuses a subnet that cannot hold a reservation, naming it and why', () => {
  it.each([
    ['no overlap with the cluster CIDR', subnet('subnet-x', '10.1.0.0/24'), ['10.0.0.0/16'], 0.5, /^subnet subnet-x cannot hold a \/28 reservation: 10\.1\.0\.0\/24 does not overlap the cluster CIDR 10\.0\.0\.0\/16$/],
    ['subnet ∩ cluster smaller than a /28', subnet('subnet-x', '10.0.0.0/24'), ['10.0.0.64/29'], 0.5, /10\.0\.0\.0\/24 ∩ cluster CIDR is 10\.0\.0\.64\/29, smaller than one \/28 prefix$/],
    ['a share too small for one /28', subnet('subnet-x', '10.0.0.0/24'), ['10.0.0.0/16'], 0.05, /a pod share of 0\.05 of 10\.0\.0\.0\/24 is less than one \/28 prefix$/],
    ['the smallest subnet (a /28) cannot spare half', subnet('subnet-x', '10.0.0.0/28'), ['10.0.0.0/16'], 0.5, /a pod share of 0\.5 of 10\.0\.0\.0\/28 is less than one \/28 prefix$/],
    ['the only block holds the subnet\'s last address', subnet('subnet-x', '10.0.0.0/24'), ['10.0.0.240/28'], 0.5, /no \/28 inside 10\.0\.0\.240\/28 avoids the subnet's first four and last addresses/],
    ['the only block holds the subnet\'s first addresses', subnet('subnet-x', '10.0.0.0/24'), ['10.0.0.0/28'], 0.5, /no \/28 inside 10\.0\.0\.0\/28 avoids/],
    ['a dual-stack cluster and a subnet without IPv6', subnet('subnet-x', '10.0.0.0/24'), ['10.0.0.0/16', 'fd00::/56'], 0.5, /^subnet subnet-x has no associated IPv6 CIDR block, so it cannot hold pods of cluster CIDR fd00::\/56$/],
    ['an IPv6-only subnet and an IPv4 cluster', subnet('subnet-x', null, ['fd00::/64']), ['10.0.0.0/16'], 0.5, /^subnet subnet-x has no IPv4 CIDR block/],
  ])('%s', (_name, s, clusterCidrs, share, message) => {
    let thrown: unknown;
    try {
      plan([s], clusterCidrs, share);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ name: 'ReservationPlanError', subnetId: 'subnet-x' });
    expect((thrown as Error).message).toMatch(message);
  });

  it('names the first failing subnet and counts the others', () => {
    const subnets = [subnet('subnet-c', '10.2.0.0/24'), subnet('subnet-a', '10.0.0.0/24'), subnet('subnet-b', '10.1.0.0/24'), subnet('subnet-d', '10.3.0.0/24')];
    expect(() => plan(subnets, ['10.0.0.0/16'])).toThrow(/^subnet subnet-b cannot hold .* \(and 2 more problems\)$/);
  });

  it.each([[0], [1], [-0.5], [1.5], [Number.NaN]])('refuses a pod share of %s', (share) => {
    expect(() => plan([subnet('subnet-a', '10.0.0.0/24')], ['10.0.0.0/16'], share)).toThrow(/pod share must be a number above 0 and below 1/);
  });

  it('refuses an empty subnet list', () => {
    expect(() => plan([], ['10.0.0.0/16'])).toThrow(/no subnets/);
  });
});

describe('planReservations warns when in-use addresses must sit inside a reservation', () => {
  it('warns from AvailableIpAddressCount when more addresses are in use than fit outside the block', () => {
    // A /24 has 251 usable addresses; 50 free means 201 in use; outside the /26 fit 251 - 64 = 187.
    const result = plan([subnet('subnet-a', '10.0.1.0/24', [], 50)], ['10.0.0.0/16']);
    expect(result.reservations.map((r) => r.cidr)).toEqual(['10.0.1.128/26']);
    expect(result.warnings).toEqual([
      'subnet subnet-a: 201 of its addresses are in use and only 187 lie outside 10.0.1.128/26, so at least 14 in-use addresses sit inside the reservation; prefixes holding them cannot be delegated until those addresses are freed',
    ]);
  });

  it('does not warn when the in-use addresses fit outside', () => {
    expect(plan([subnet('subnet-a', '10.0.1.0/24', [], 64)], ['10.0.0.0/16']).warnings).toEqual([]);
  });
});

describe('planReservations: properties', () => {
  const bits = (c: Cidr) => addressBits(c.family);
  it('every reservation lies in subnet ∩ cluster, holds a /28, at most the share, and none of the five kept addresses', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 28 }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 8, max: 28 }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        (subnetPrefix, subnetSeed, clusterPrefix, share) => {
          const subnetCidr = parseCidr(`10.${(subnetSeed >> 8) & 0xff}.${subnetSeed & 0xff}.0/${subnetPrefix}`);
          const cluster = parseCidr(`${formatCidr(subnetCidr).split('/')[0]}/${clusterPrefix}`);
          let result;
          try {
            result = plan([subnet('subnet-p', formatCidr(subnetCidr))], [formatCidr(cluster)], share);
          } catch (error) {
            expect(error).toMatchObject({ name: 'ReservationPlanError' });
            return;
          }
          const [reservation] = result.reservations;
          const block = parseCidr(reservation?.cidr);
          expect(containsCidr(subnetCidr, block)).toBe(true);
          expect(containsCidr(cluster, block)).toBe(true);
          expect(block.prefix).toBeLessThanOrEqual(28);
          expect(2 ** (bits(block) - block.prefix)).toBeLessThanOrEqual(share * 2 ** (bits(subnetCidr) - subnetCidr.prefix));
          for (const kept of [0n, 1n, 2n, 3n].map((i) => subnetCidr.network + i).concat([lastAddress(subnetCidr)])) {
            expect(containsAddress(block, 4, kept)).toBe(false);
          }
        },
      ),
    );
  });
});

describe('parseSubnets reads aws ec2 describe-subnets JSON', () => {
  const raw = (overrides: Record<string, unknown> = {}) => ({
    SubnetId: 'subnet-a',
    VpcId: 'vpc-1',
    AvailabilityZone: 'us-east-1a',
    AvailabilityZoneId: 'use1-az6',
    CidrBlock: '10.0.0.0/19',
    AvailableIpAddressCount: 8000,
    Ipv6CidrBlockAssociationSet: [
      { AssociationId: 'a1', Ipv6CidrBlock: '2600:1f18:4a3:6b0f::/64', Ipv6CidrBlockState: { State: 'disassociated' } },
      { AssociationId: 'a2', Ipv6CidrBlock: '2600:1f18:4a3:6b00::/64', Ipv6CidrBlockState: { State: 'associated' } },
      { AssociationId: 'a3', Ipv6CidrBlock: '2600:1f18:4a3:6b0e::/64', Ipv6CidrBlockState: { State: 'associating' } },
    ],
    ...overrides,
  });

  it('keeps only associated IPv6 blocks', () => {
    const [s] = parseSubnets({ Subnets: [raw()] });
    expect(s?.ipv6.map(formatCidr)).toEqual(['2600:1f18:4a3:6b00::/64']);
    expect(s?.ipv4 && formatCidr(s.ipv4)).toBe('10.0.0.0/19');
    expect(s?.availableIpAddressCount).toBe(8000);
  });

  it('reads an IPv6-only subnet (no CidrBlock) and falls back to the zone id', () => {
    const [s] = parseSubnets({ Subnets: [raw({ CidrBlock: undefined, AvailabilityZone: null, Ipv6Native: true })] });
    expect(s?.ipv4).toBeNull();
    expect(s?.availabilityZone).toBe('use1-az6');
  });

  it.each([
    [{ RouteTables: [] }, /^not an EC2 DescribeSubnets result: Subnets: /],
    [[], /^not an EC2 DescribeSubnets result: \(top level\): want an object \{"Subnets": \[\.\.\.\]\}$/],
    [{ Subnets: [raw({ SubnetId: '' })] }, /Subnets\.0\.SubnetId: SubnetId must not be empty/],
    [{ Subnets: [raw({ CidrBlock: '10.0.0.0/33' })] }, /^subnet subnet-a: CidrBlock "10\.0\.0\.0\/33" is not an IPv4 CIDR$/],
    [{ Subnets: [raw({ CidrBlock: 'fd00::/64' })] }, /^subnet subnet-a: CidrBlock "fd00::\/64" is not an IPv4 CIDR$/],
    [{ Subnets: [raw({ Ipv6CidrBlockAssociationSet: [{ Ipv6CidrBlock: '10.0.0.0/24', Ipv6CidrBlockState: { State: 'associated' } }] })] }, /Ipv6CidrBlock "10\.0\.0\.0\/24" is not an IPv6 CIDR/],
    [{ Subnets: [raw(), raw()] }, /Subnets\.1: subnet subnet-a is listed twice/],
  ])('refuses %j', (value, message) => {
    expect(() => parseSubnets(value)).toThrow(message);
  });
});
