import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { clusterTagKey, isClusterTable, parseRouteTables } from '../../lib/routes/route-tables.ts';
import { thrownBy } from '../support/thrown.ts';

/** What `aws ec2 describe-route-tables --output json` prints for a typical cluster VPC table. */
const cliOutput = {
  RouteTables: [
    {
      Associations: [{ Main: false, RouteTableAssociationId: 'rtbassoc-0123456789abcdef0', RouteTableId: 'rtb-0123456789abcdef0', SubnetId: 'subnet-0123456789abcdef0', AssociationState: { State: 'associated' } }],
      PropagatingVgws: [],
      RouteTableId: 'rtb-0123456789abcdef0',
      Routes: [
        { DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local', Origin: 'CreateRouteTable', State: 'active' },
        { DestinationCidrBlock: '0.0.0.0/0', NatGatewayId: 'nat-0123456789abcdef0', Origin: 'CreateRoute', State: 'active' },
        { DestinationCidrBlock: '10.120.1.0/24', InstanceId: 'i-0123456789abcdef0', InstanceOwnerId: '123456789012', NetworkInterfaceId: 'eni-0123456789abcdef0', Origin: 'CreateRoute', State: 'active' },
        { DestinationCidrBlock: '10.120.2.7/24', InstanceId: 'i-0fedcba9876543210', NetworkInterfaceId: 'eni-0fedcba9876543210', Origin: 'CreateRoute', State: 'blackhole' },
        { DestinationCidrBlock: '10.120.3.0/24', NetworkInterfaceId: 'eni-0aaaaaaaaaaaaaaaa', Origin: 'CreateRoute', State: 'active' },
        { DestinationCidrBlock: '10.121.0.0/16', TransitGatewayId: 'tgw-0123456789abcdef0', Origin: 'CreateRoute', State: 'active' },
        { DestinationCidrBlock: '10.122.0.0/16', VpcPeeringConnectionId: 'pcx-0123456789abcdef0', Origin: 'CreateRoute', State: 'active' },
        { DestinationCidrBlock: '10.123.0.0/16', Origin: 'CreateRoute', State: 'blackhole' },
        { DestinationPrefixListId: 'pl-63a5400a', GatewayId: 'vpce-0123456789abcdef0', Origin: 'CreateRoute', State: 'active' },
        { DestinationIpv6CidrBlock: '2600:1F18:0:0:0:0:0:0/56', GatewayId: 'local', Origin: 'CreateRouteTable', State: 'active' },
        { DestinationIpv6CidrBlock: 'fd00:0:0:1::5/64', InstanceId: 'i-0123456789abcdef0', NetworkInterfaceId: 'eni-0123456789abcdef0', Origin: 'CreateRoute', State: 'active', FutureField: { x: 1 } },
        { DestinationIpv6CidrBlock: '::/0', EgressOnlyInternetGatewayId: 'eigw-0123456789abcdef0', Origin: 'CreateRoute', State: 'active' },
      ],
      Tags: [
        { Key: 'kubernetes.io/cluster/prod', Value: 'owned' },
        { Key: 'Name', Value: 'prod-private-a' },
      ],
      VpcId: 'vpc-0123456789abcdef0',
      OwnerId: '123456789012',
    },
  ],
};

const RTB = 'rtb-0123456789abcdef0';
const route = (destinationCidr: string, family: 4 | 6, target: string, extra: { instanceId?: string; networkInterfaceId?: string; gatewayId?: string; blackhole?: boolean } = {}) => ({
  routeTableId: RTB,
  destinationCidr,
  family,
  instanceId: extra.instanceId ?? null,
  networkInterfaceId: extra.networkInterfaceId ?? null,
  target,
  blackhole: extra.blackhole ?? false,
  ...(extra.gatewayId === undefined ? {} : { gatewayId: extra.gatewayId }),
});

describe('parseRouteTables', () => {
  it('normalises CLI output: canonical destinations, targets, blackholes; prefix lists skipped', () => {
    const [table, ...rest] = parseRouteTables(cliOutput);
    expect(rest).toEqual([]);
    expect(table).toStrictEqual({
      routeTableId: RTB,
      vpcId: 'vpc-0123456789abcdef0',
      tags: { 'kubernetes.io/cluster/prod': 'owned', Name: 'prod-private-a' },
      skippedRoutes: 1,
      routes: [
        route('10.0.0.0/16', 4, 'local', { gatewayId: 'local' }),
        route('0.0.0.0/0', 4, 'gateway', { gatewayId: 'nat-0123456789abcdef0' }),
        route('10.120.1.0/24', 4, 'instance', { instanceId: 'i-0123456789abcdef0', networkInterfaceId: 'eni-0123456789abcdef0' }),
        route('10.120.2.0/24', 4, 'instance', { instanceId: 'i-0fedcba9876543210', networkInterfaceId: 'eni-0fedcba9876543210', blackhole: true }),
        route('10.120.3.0/24', 4, 'interface', { networkInterfaceId: 'eni-0aaaaaaaaaaaaaaaa' }),
        route('10.121.0.0/16', 4, 'gateway', { gatewayId: 'tgw-0123456789abcdef0' }),
        route('10.122.0.0/16', 4, 'gateway', { gatewayId: 'pcx-0123456789abcdef0' }),
        route('10.123.0.0/16', 4, 'other', { blackhole: true }),
        route('2600:1f18::/56', 6, 'local', { gatewayId: 'local' }),
        route('fd00:0:0:1::/64', 6, 'instance', { instanceId: 'i-0123456789abcdef0', networkInterfaceId: 'eni-0123456789abcdef0' }),
        route('::/0', 6, 'gateway', { gatewayId: 'eigw-0123456789abcdef0' }),
      ],
    });
  });

  it('accepts the SDK shape (undefined fields), null fields and a table without Routes or Tags', () => {
    const tablesOut = parseRouteTables({
      $metadata: { httpStatusCode: 200 },
      RouteTables: [
        {
          RouteTableId: 'rtb-1',
          VpcId: undefined,
          Tags: undefined,
          Routes: [{ DestinationCidrBlock: '10.1.0.0/24', DestinationIpv6CidrBlock: undefined, InstanceId: 'i-0123456789abcdef0', GatewayId: null, State: 'active' }],
        },
        { RouteTableId: 'rtb-2' },
      ],
      NextToken: undefined,
    });
    expect(tablesOut).toStrictEqual([
      {
        routeTableId: 'rtb-1',
        vpcId: null,
        tags: {},
        skippedRoutes: 0,
        routes: [{ routeTableId: 'rtb-1', destinationCidr: '10.1.0.0/24', family: 4, instanceId: 'i-0123456789abcdef0', networkInterfaceId: null, target: 'instance', blackhole: false }],
      },
      { routeTableId: 'rtb-2', vpcId: null, tags: {}, skippedRoutes: 0, routes: [] },
    ]);
  });

  it.each([
    ['an IPv6 CIDR in DestinationCidrBlock', { DestinationCidrBlock: 'fd00::/64', InstanceId: 'i-0123456789abcdef0', State: 'active' }],
    ['an IPv4 CIDR in DestinationIpv6CidrBlock', { DestinationIpv6CidrBlock: '10.0.0.0/24', InstanceId: 'i-0123456789abcdef0', State: 'active' }],
    ['an unparseable destination', { DestinationCidrBlock: '10.0.0.0/40', InstanceId: 'i-0123456789abcdef0', State: 'blackhole' }],
    ['both destinations', { DestinationCidrBlock: '10.0.0.0/24', DestinationIpv6CidrBlock: 'fd00::/64', InstanceId: 'i-0123456789abcdef0', State: 'active' }],
    ['no destination at all', { GatewayId: 'igw-0123456789abcdef0', State: 'active' }],
  ])('skips a route with %s (never touched)', (_name, raw) => {
    const [table] = parseRouteTables({ RouteTables: [{ RouteTableId: 'rtb-1', Routes: [raw] }] });
    expect(table?.routes).toEqual([]);
    expect(table?.skippedRoutes).toBe(1);
  });

  it('keeps the first of repeated tag keys and treats __proto__ as a plain key', () => {
    const [table] = parseRouteTables({
      RouteTables: [{ RouteTableId: 'rtb-1', Tags: [{ Key: 'a', Value: '1' }, { Key: 'a', Value: '2' }, { Key: '__proto__', Value: 'x' }, { Key: 'novalue' }] }],
    });
    expect(table?.tags.a).toBe('1');
    expect(Object.hasOwn(table?.tags ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(table?.tags)).toBe(Object.prototype);
    expect(table?.tags.novalue).toBe('');
  });

  it.each([
    ['a string', 'RouteTables', 'not an EC2 DescribeRouteTables result: (top level): want an object {"RouteTables": [...]}'],
    ['null', null, 'not an EC2 DescribeRouteTables result: (top level): want an object {"RouteTables": [...]}'],
    ['an array', [], 'not an EC2 DescribeRouteTables result: (top level): want an object {"RouteTables": [...]}'],
    ['RouteTables missing', { Routes: [] }, 'not an EC2 DescribeRouteTables result: RouteTables: RouteTables must be an array of route tables'],
    ['RouteTables not an array', { RouteTables: { RouteTableId: 'rtb-1' } }, 'RouteTables: RouteTables must be an array of route tables'],
    ['a table without RouteTableId', { RouteTables: [{ Routes: [] }] }, 'RouteTables[0].RouteTableId: RouteTableId must be a string'],
    ['an empty RouteTableId', { RouteTables: [{ RouteTableId: '' }] }, 'RouteTables[0].RouteTableId: RouteTableId must not be empty'],
    [
      'a route with a bad State',
      { RouteTables: [{ RouteTableId: 'rtb-1' }, { RouteTableId: 'rtb-2', Routes: [{ DestinationCidrBlock: '10.0.0.0/24', State: 'active' }, { DestinationCidrBlock: '10.0.1.0/24', State: 'Active' }] }] },
      'RouteTables[1].Routes[1].State: State must be "active", "blackhole" or "filtered"',
    ],
    ['a route without State', { RouteTables: [{ RouteTableId: 'rtb-1', Routes: [{ DestinationCidrBlock: '10.0.0.0/24' }] }] }, 'RouteTables[0].Routes[0].State'],
    ['a non-string InstanceId', { RouteTables: [{ RouteTableId: 'rtb-1', Routes: [{ DestinationCidrBlock: '10.0.0.0/24', InstanceId: 7, State: 'active' }] }] }, 'RouteTables[0].Routes[0].InstanceId'],
    ['Tags not an array', { RouteTables: [{ RouteTableId: 'rtb-1', Tags: { Name: 'x' } }] }, 'RouteTables[0].Tags'],
  ])('rejects %s with InvalidInputError naming the path', (_name, value, message) => {
    const error = thrownBy(() => parseRouteTables(value));
    expect(error).toBeInstanceOf(InvalidInputError);
    const text = (error as Error).message;
    expect(text).toContain(message);
    expect(text.startsWith('not an EC2 DescribeRouteTables result: ')).toBe(true);
    expect(text).not.toContain('\n');
    expect((error as Error).cause).toBeDefined();
  });
});

describe('cluster tag', () => {
  const [tagged, shared, untagged, other] = parseRouteTables({
    RouteTables: [
      { RouteTableId: 'rtb-1', Tags: [{ Key: 'kubernetes.io/cluster/prod', Value: 'owned' }] },
      { RouteTableId: 'rtb-2', Tags: [{ Key: 'kubernetes.io/cluster/prod', Value: '' }] },
      { RouteTableId: 'rtb-3', Tags: [] },
      { RouteTableId: 'rtb-4', Tags: [{ Key: 'kubernetes.io/cluster/prod-2', Value: 'owned' }, { Key: 'prod', Value: 'x' }] },
    ],
  });

  it('clusterTagKey', () => {
    expect(clusterTagKey('prod')).toBe('kubernetes.io/cluster/prod');
  });

  it.each([
    ['tagged owned', tagged, true],
    ['tagged with an empty value', shared, true],
    ['untagged', untagged, false],
    ['another cluster, similar name', other, false],
  ])('%s -> %s', (_name, table, want) => {
    expect(table).toBeDefined();
    if (table) expect(isClusterTable(table, 'prod')).toBe(want);
  });
});
