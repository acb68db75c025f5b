/**
 * lib/config.ts: every value that passes here works in every run; every value that would fail
 * later (or half-work) is refused at cold start with the variable and its bound in the message.
 */
import { describe, expect, it } from 'vitest';
import { clusterCidrsProblem, loadConfig } from '../lib/config.ts';
import { InvalidInputError } from '../lib/errors.ts';
import { planRoutes } from '../lib/routes/index.ts';

const BASE = { CLUSTER_NAME: 'alpha', CLUSTER_CIDRS: '10.244.0.0/16' };
const load = (env: Record<string, string>) => loadConfig({ ...BASE, ...env });

describe('loadConfig: numeric variables and their bounds', () => {
  it.each<[string, Record<string, string>, (c: ReturnType<typeof loadConfig>) => unknown, unknown]>([
    ['defaults (routes mode)', {}, (c) => [c.nodeMaskSize, c.maxDeleteShare, c.minDeletesForGuard, c.leaseGraceSeconds, c.maxReceiveCount], [{ 4: 24, 6: 64 }, 0.5, 5, 600, 3]],
    ['defaults (prefixes mode): the ENI prefix sizes', { MODE: 'prefixes' }, (c) => c.nodeMaskSize, { 4: 28, 6: 80 }],
    ['PREFIX_RESERVATION_DESCRIPTION defaults to podroute', {}, (c) => c.prefixReservationDescription, 'podroute'],
    ['PREFIX_RESERVATION_DESCRIPTION', { PREFIX_RESERVATION_DESCRIPTION: 'pods-team-a' }, (c) => c.prefixReservationDescription, 'pods-team-a'],
    // Prefixes mode allocates /80s from pod ranges inside /64 subnets, so a VPC-wide /56 is fine.
    ['prefixes mode: an IPv6 cluster CIDR wider than /64', { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/8,2600:1f18:1234:5600::/56' }, (c) => c.clusterCidrs, ['10.0.0.0/8', '2600:1f18:1234:5600::/56']],
    ['NODE_MASK_SIZE_IPV4=17 (one bit longer than the cluster)', { NODE_MASK_SIZE_IPV4: '17' }, (c) => c.nodeMaskSize[4], 17],
    ['NODE_MASK_SIZE_IPV4=32', { NODE_MASK_SIZE_IPV4: '32' }, (c) => c.nodeMaskSize[4], 32],
    ['NODE_MASK_SIZE_IPV6=64 for a /48', { CLUSTER_CIDRS: '10.244.0.0/16,fd00:10::/48', NODE_MASK_SIZE_IPV6: '64' }, (c) => c.nodeMaskSize[6], 64],
    ['an IPv6 mask of a v4-only cluster is only checked within its family', { NODE_MASK_SIZE_IPV6: '120' }, (c) => c.nodeMaskSize[6], 120],
    ['MAX_DELETE_SHARE=1', { MAX_DELETE_SHARE: '1' }, (c) => c.maxDeleteShare, 1],
    ['MAX_DELETE_SHARE=0.01', { MAX_DELETE_SHARE: '0.01' }, (c) => c.maxDeleteShare, 0.01],
    ['MIN_DELETES_FOR_GUARD=0', { MIN_DELETES_FOR_GUARD: '0' }, (c) => c.minDeletesForGuard, 0],
    ['LEASE_GRACE_SECONDS=300 (the floor)', { LEASE_GRACE_SECONDS: '300' }, (c) => c.leaseGraceSeconds, 300],
    ['LEASE_GRACE_SECONDS=604800 (a week)', { LEASE_GRACE_SECONDS: '604800' }, (c) => c.leaseGraceSeconds, 604_800],
    ['MAX_RECEIVE_COUNT=1', { MAX_RECEIVE_COUNT: '1' }, (c) => c.maxReceiveCount, 1],
    ['MAX_RECEIVE_COUNT=1000 (SQS maximum)', { MAX_RECEIVE_COUNT: '1000' }, (c) => c.maxReceiveCount, 1000],
    ['ROUTE_QUOTA defaults to the VPC quota default, 500', {}, (c) => c.routeQuota, 500],
    ['ROUTE_QUOTA=1000 (the quota ceiling)', { ROUTE_QUOTA: '1000' }, (c) => c.routeQuota, 1000],
    ['an empty value is the default', { LEASE_GRACE_SECONDS: '' }, (c) => c.leaseGraceSeconds, 600],
    ['MIGRATION_MASK_SIZES defaults to none', {}, (c) => c.migrationMaskSizes, { 4: [], 6: [] }],
    ['MIGRATION_MASK_SIZES per family', { MIGRATION_MASK_SIZES: 'ipv4:23, ipv4:25,ipv6:80,ipv4:23' }, (c) => c.migrationMaskSizes, { 4: [23, 25], 6: [80] }],
  ])('accepts %s', (_name, env, pick, expected) => {
    expect(pick(load(env))).toEqual(expected);
  });

  it.each<[Record<string, string>, string]>([
    [{ MIN_DELETES_FOR_GUARD: '2.5' }, 'MIN_DELETES_FOR_GUARD must be a whole number from 0 to 1000, got 2.5'],
    [{ MIN_DELETES_FOR_GUARD: '-1' }, 'MIN_DELETES_FOR_GUARD must be a whole number from 0 to 1000, got -1'],
    // Above the largest route table (1,000 routes, the quota's ceiling) the guard could never trip.
    [{ MIN_DELETES_FOR_GUARD: '1001' }, 'MIN_DELETES_FOR_GUARD must be a whole number from 0 to 1000, got 1001'],
    [{ MIN_DELETES_FOR_GUARD: '9007199254740991' }, 'MIN_DELETES_FOR_GUARD must be a whole number from 0 to 1000, got 9007199254740991'],
    [{ MIGRATION_MASK_SIZES: '23' }, 'MIGRATION_MASK_SIZES entries must be ipv4:<1-32> or ipv6:<1-128> (e.g. ipv4:23,ipv6:80), got "23"'],
    [{ MIGRATION_MASK_SIZES: 'ipv4:33' }, 'MIGRATION_MASK_SIZES entries must be ipv4:<1-32> or ipv6:<1-128> (e.g. ipv4:23,ipv6:80), got "ipv4:33"'],
    [{ MIGRATION_MASK_SIZES: 'ipv6:0' }, 'MIGRATION_MASK_SIZES entries must be ipv4:<1-32> or ipv6:<1-128> (e.g. ipv4:23,ipv6:80), got "ipv6:0"'],
    [{ MIGRATION_MASK_SIZES: `ipv4:${'9'.repeat(10_000)}` }, `got "ipv4:${'9'.repeat(35)}..."`],
    [{ MODE: 'prefixes', MIGRATION_MASK_SIZES: 'ipv4:27' }, 'MIGRATION_MASK_SIZES is for routes mode only'],
    [{ MIN_DELETES_FOR_GUARD: 'five' }, 'MIN_DELETES_FOR_GUARD must be written in plain decimal digits, got "five"'],
    [{ MAX_DELETE_SHARE: '0' }, 'MAX_DELETE_SHARE must be a number > 0 and <= 1, got 0'],
    [{ MAX_DELETE_SHARE: '1.5' }, 'MAX_DELETE_SHARE must be a number > 0 and <= 1, got 1.5'],
    [{ MAX_DELETE_SHARE: 'Infinity' }, 'MAX_DELETE_SHARE must be written in plain decimal digits (a fraction as 0.5), got "Infinity"'],
    [{ LEASE_GRACE_SECONDS: '0' }, 'LEASE_GRACE_SECONDS must be a whole number from 300 to 604800, got 0'],
    [{ LEASE_GRACE_SECONDS: '299' }, 'LEASE_GRACE_SECONDS must be a whole number from 300 to 604800, got 299'],
    [{ LEASE_GRACE_SECONDS: '600.5' }, 'LEASE_GRACE_SECONDS must be a whole number from 300 to 604800, got 600.5'],
    [{ LEASE_GRACE_SECONDS: '604801' }, 'LEASE_GRACE_SECONDS must be a whole number from 300 to 604800, got 604801'],
    [{ MAX_RECEIVE_COUNT: '0' }, 'MAX_RECEIVE_COUNT must be a whole number from 1 to 1000, got 0'],
    [{ MAX_RECEIVE_COUNT: '1001' }, 'MAX_RECEIVE_COUNT must be a whole number from 1 to 1000, got 1001'],
    [{ MAX_RECEIVE_COUNT: '2.5' }, 'MAX_RECEIVE_COUNT must be a whole number from 1 to 1000, got 2.5'],
    [{ ROUTE_QUOTA: '0' }, 'ROUTE_QUOTA must be a whole number from 1 to 1000, got 0'],
    [{ ROUTE_QUOTA: '1001' }, 'ROUTE_QUOTA must be a whole number from 1 to 1000, got 1001'],
    [{ ROUTE_QUOTA: '50%' }, 'ROUTE_QUOTA must be written in plain decimal digits, got "50%"'],
    [{ NODE_MASK_SIZE_IPV4: '24.5' }, 'NODE_MASK_SIZE_IPV4 must be a whole number from 1 to 32, got 24.5'],
    [{ NODE_MASK_SIZE_IPV4: '33' }, 'NODE_MASK_SIZE_IPV4 must be a whole number from 1 to 32, got 33'],
    [{ NODE_MASK_SIZE_IPV6: '129' }, 'NODE_MASK_SIZE_IPV6 must be a whole number from 1 to 128, got 129'],
    [{ NODE_MASK_SIZE_IPV4: '16' }, 'NODE_MASK_SIZE_IPV4=16 must be longer than the cluster CIDR 10.244.0.0/16 (/16)'],
    [{ NODE_MASK_SIZE_IPV4: '12' }, 'NODE_MASK_SIZE_IPV4=12 must be longer than the cluster CIDR 10.244.0.0/16 (/16)'],
    [{ CLUSTER_CIDRS: 'fd00:10::/56', NODE_MASK_SIZE_IPV6: '56' }, 'NODE_MASK_SIZE_IPV6=56 must be longer than the cluster CIDR fd00:10::/56 (/56)'],
    [{ CLUSTER_CIDRS: 'fd00:10::/48', NODE_MASK_SIZE_IPV6: '65' }, 'NODE_MASK_SIZE_IPV6=65 may be at most 16 bits longer than the cluster CIDR fd00:10::/48: at most /64'],
    [{ CLUSTER_CIDRS: 'fd00:10::/64' }, 'NODE_MASK_SIZE_IPV6=64 must be longer than the cluster CIDR fd00:10::/64 (/64)'],
    [{ MODE: 'prefixes', NODE_MASK_SIZE_IPV4: '24' }, 'MODE=prefixes needs NODE_MASK_SIZE_IPV4=28 and NODE_MASK_SIZE_IPV6=80'],
  ])('refuses %j', (env, message) => {
    expect(() => load(env)).toThrow(InvalidInputError);
    expect(() => load(env)).toThrow(message);
  });

  // Number() reads hexadecimal, binary, octal and exponents ("0x12C" is 300): only plain decimal
  // notation is a value here, so what an operator reads in the environment is what runs.
  it.each<[Record<string, string>, string]>([
    [{ LEASE_GRACE_SECONDS: '0x12C' }, 'LEASE_GRACE_SECONDS must be written in plain decimal digits, got "0x12C"'],
    [{ MAX_RECEIVE_COUNT: '1e0' }, 'MAX_RECEIVE_COUNT must be written in plain decimal digits, got "1e0"'],
    [{ MAX_RECEIVE_COUNT: '0b101' }, 'MAX_RECEIVE_COUNT must be written in plain decimal digits, got "0b101"'],
    [{ NODE_MASK_SIZE_IPV4: '0o30' }, 'NODE_MASK_SIZE_IPV4 must be written in plain decimal digits, got "0o30"'],
    [{ MIN_DELETES_FOR_GUARD: '+5' }, 'MIN_DELETES_FOR_GUARD must be written in plain decimal digits, got "+5"'],
    [{ MIN_DELETES_FOR_GUARD: '1_000' }, 'MIN_DELETES_FOR_GUARD must be written in plain decimal digits, got "1_000"'],
    [{ MAX_DELETE_SHARE: '5e-1' }, 'MAX_DELETE_SHARE must be written in plain decimal digits (a fraction as 0.5), got "5e-1"'],
    [{ MAX_DELETE_SHARE: '.5' }, 'MAX_DELETE_SHARE must be written in plain decimal digits (a fraction as 0.5), got ".5"'],
    [{ MAX_DELETE_SHARE: '0.' }, 'MAX_DELETE_SHARE must be written in plain decimal digits (a fraction as 0.5), got "0."'],
    [{ MAX_DELETE_SHARE: '0x1' }, 'MAX_DELETE_SHARE must be written in plain decimal digits (a fraction as 0.5), got "0x1"'],
  ])('refuses a number not in plain decimal notation: %j', (env, message) => {
    expect(() => load(env)).toThrow(InvalidInputError);
    expect(() => load(env)).toThrow(message);
  });

  it.each<[Record<string, string>, (c: ReturnType<typeof loadConfig>) => unknown, unknown]>([
    [{ LEASE_GRACE_SECONDS: '0300' }, (c) => c.leaseGraceSeconds, 300],
    [{ LEASE_GRACE_SECONDS: ' 900 ' }, (c) => c.leaseGraceSeconds, 900],
    [{ MAX_DELETE_SHARE: '0.25' }, (c) => c.maxDeleteShare, 0.25],
    [{ MAX_DELETE_SHARE: '1.0' }, (c) => c.maxDeleteShare, 1],
  ])('accepts plain decimal notation: %j', (env, pick, expected) => {
    expect(pick(load(env))).toEqual(expected);
  });

  // What used to pass here and then throw in every reconcile: the planner's own checks must
  // accept every value the config accepts.
  it.each([0, 1, 5, 1000])('MIN_DELETES_FOR_GUARD=%i that loads, plans', (value) => {
    const config = load({ MIN_DELETES_FOR_GUARD: String(value) });
    expect(planRoutes({ nodes: [], routeTables: [], clusterCidrs: config.clusterCidrs, maxDeleteShare: config.maxDeleteShare, minDeletesForGuard: config.minDeletesForGuard }).create).toEqual([]);
  });
});

describe('cluster CIDRs that are not a network podroute may route', () => {
  it.each<[string, string]>([
    ['10.244.0.1/16', '10.244.0.1/16 has host bits set: write 10.244.0.0/16'],
    ['10.244.3.7/24', '10.244.3.7/24 has host bits set: write 10.244.3.0/24'],
    ['fd00:10::1/48', 'fd00:10::1/48 has host bits set: write fd00:10::/48'],
    // RFC 3927 / RFC 4291: link-local addresses are never routed (and 169.254.169.254 is the instance metadata service).
    ['169.254.0.0/16', '169.254.0.0/16 overlaps the link-local range 169.254.0.0/16'],
    ['169.254.8.0/24', '169.254.8.0/24 overlaps the link-local range 169.254.0.0/16'],
    ['169.0.0.0/8', '169.0.0.0/8 overlaps the link-local range 169.254.0.0/16'],
    ['fe80::/10', 'fe80::/10 overlaps the link-local range fe80::/10'],
    ['fe80:0:0:1::/64', 'fe80:0:0:1::/64 overlaps the link-local range fe80::/10'],
    // RFC 5771 / RFC 4291: multicast groups are no unicast pod addresses.
    ['224.0.0.0/8', '224.0.0.0/8 overlaps the multicast range 224.0.0.0/4'],
    ['239.1.0.0/16', '239.1.0.0/16 overlaps the multicast range 224.0.0.0/4'],
    ['ff02::/16', 'ff02::/16 overlaps the multicast range ff00::/8'],
    // RFC 1122 section 3.2.1.3 / RFC 4291: loopback addresses never leave a host.
    ['127.0.0.0/8', '127.0.0.0/8 overlaps the loopback range 127.0.0.0/8'],
    ['127.10.0.0/16', '127.10.0.0/16 overlaps the loopback range 127.0.0.0/8'],
    ['::1/128', '::1/128 overlaps the loopback range ::1/128'],
    ['10.244.0.0/16,fe80::/64', 'fe80::/64 overlaps the link-local range fe80::/10'],
  ])('%s is refused', (cidrs, problem) => {
    expect(clusterCidrsProblem(cidrs.split(','))).toBe(problem);
    expect(() => load({ CLUSTER_CIDRS: cidrs })).toThrow(`CLUSTER_CIDRS ${problem}`);
  });
});

describe('an error never echoes a long value', () => {
  const long = 'x'.repeat(10_240);
  it.each<[string, Record<string, string>]>([
    ['CLUSTER_CIDRS', { CLUSTER_CIDRS: long }],
    ['CLUSTER_CIDRS (a long CIDR-looking value)', { CLUSTER_CIDRS: `10.0.0.0/${'1'.repeat(10_240)}` }],
    ['ROUTE_TABLE_IDS', { ROUTE_TABLE_IDS: long }],
    ['ROUTE_TABLE_IDS (many bad ids)', { ROUTE_TABLE_IDS: Array.from({ length: 1000 }, (_, i) => `rtb-${i}`).join(',') }],
    ['LEASE_GRACE_SECONDS', { LEASE_GRACE_SECONDS: long }],
    ['LEASE_GRACE_SECONDS (digits)', { LEASE_GRACE_SECONDS: '9'.repeat(10_240) }],
    ['NODE_SELECTOR', { NODE_SELECTOR: `a=${long}` }],
    ['CLUSTER_NAME', { CLUSTER_NAME: long }],
    ['MODE', { MODE: long }],
  ])('%s', (_name, env) => {
    let message = '';
    try {
      load(env);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      message = error instanceof Error ? error.message : '';
    }
    expect(message).toMatch(/^invalid podroute configuration: /);
    expect(message.length).toBeLessThan(600);
  });
});

describe('cluster CIDRs that are too broad', () => {
  it.each<[string, string | null]>([
    ['10.244.0.0/16', null],
    ['10.0.0.0/8', null],
    ['100.64.0.0/10', null],
    ['10.244.0.0/16,fd00:10::/48', null],
    ['fd00::/8', null],
    ['0.0.0.0/0', '0.0.0.0/0 is too broad: it holds an end of the address space, so the default route 0.0.0.0/0'],
    ['::/0', '::/0 is too broad: it holds an end of the address space, so the default route ::/0'],
    ['0.0.0.0/1', '0.0.0.0/1 is too broad: it holds an end of the address space'],
    ['128.0.0.0/1', '128.0.0.0/1 is too broad: it holds an end of the address space'],
    ['0.0.0.0/8', '0.0.0.0/8 is too broad: it holds an end of the address space'],
    ['240.0.0.0/4', '240.0.0.0/4 is too broad: it holds an end of the address space'],
    ['ff00::/8', 'ff00::/8 is too broad: it holds an end of the address space'],
    ['10.244.0.0/16,::/0', '::/0 is too broad'],
    ['8.0.0.0/7', '8.0.0.0/7 is too broad: a cluster CIDR must be /8 or longer'],
    ['2000::/3', '2000::/3 is too broad: a cluster CIDR must be /8 or longer'],
  ])('%s', (cidrs, problem) => {
    const list = cidrs.split(',');
    if (problem === null) {
      expect(clusterCidrsProblem(list)).toBeNull();
      // fd00::/8 needs a node mask at most 16 bits longer.
      expect(load({ CLUSTER_CIDRS: cidrs, ...(cidrs === 'fd00::/8' ? { NODE_MASK_SIZE_IPV6: '24' } : {}) }).clusterCidrs).toEqual(list);
    } else {
      expect(clusterCidrsProblem(list)).toContain(problem);
      expect(() => load({ CLUSTER_CIDRS: cidrs })).toThrow(`CLUSTER_CIDRS ${problem}`);
    }
  });
});

// EC2 route table ids are `rtb-` and 8 (before 2016) or 17 (since) lowercase hex characters
// (Amazon EC2 User Guide, "Resource IDs"). A typo is refused at cold start, not at the first call.
describe('ROUTE_TABLE_IDS', () => {
  it.each<[string, string[]]>([
    ['rtb-0123456789abcdef0', ['rtb-0123456789abcdef0']],
    ['rtb-1a2b3c4d', ['rtb-1a2b3c4d']],
    ['rtb-1a2b3c4d, rtb-0123456789abcdef0', ['rtb-1a2b3c4d', 'rtb-0123456789abcdef0']],
    ['', []],
  ])('accepts %j', (text, ids) => {
    expect(load({ ROUTE_TABLE_IDS: text }).routeTableIds).toEqual(ids);
  });

  it.each<[string, string]>([
    ['rtb-123', '"rtb-123"'],
    ['rtb-0123456789abcdef', '"rtb-0123456789abcdef"'],
    ['rtb-0123456789abcdef00', '"rtb-0123456789abcdef00"'],
    ['rtb-0123456789ABCDEF0', '"rtb-0123456789ABCDEF0"'],
    ['rtb-0123456789abcdefg', '"rtb-0123456789abcdefg"'],
    ['subnet-0123456789abcdef0', '"subnet-0123456789abcdef0"'],
    ['rtb-1a2b3c4d,main', '"main"'],
    ['0123456789abcdef0', '"0123456789abcdef0"'],
  ])('refuses %j', (text, shown) => {
    expect(() => load({ ROUTE_TABLE_IDS: text })).toThrow(InvalidInputError);
    expect(() => load({ ROUTE_TABLE_IDS: text })).toThrow(`ROUTE_TABLE_IDS must be EC2 route table ids (rtb- and 8 or 17 hex characters), got ${shown}`);
  });
});

describe('the two webhook secrets', () => {
  it('WEBHOOK_SIGNING_SECRET_ID naming the URL token\'s secret is refused: the signing key is a secret of its own', () => {
    expect(() => load({ WEBHOOK_SECRET_ID: 'podroute/webhook', WEBHOOK_SIGNING_SECRET_ID: 'podroute/webhook' })).toThrow(
      'WEBHOOK_SIGNING_SECRET_ID must name another secret than WEBHOOK_SECRET_ID',
    );
  });

  it('two different secrets load', () => {
    expect(load({ WEBHOOK_SECRET_ID: 'podroute/webhook', WEBHOOK_SIGNING_SECRET_ID: 'podroute/signing' }).webhookSecret).toMatchObject({ id: 'podroute/webhook', signingKeyId: 'podroute/signing' });
  });
});
