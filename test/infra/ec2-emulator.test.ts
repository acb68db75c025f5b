import {
  CreateTagsCommand,
  DeleteTagsCommand,
  AssignIpv6AddressesCommand,
  AssignPrivateIpAddressesCommand,
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  EC2ServiceException,
  ModifyInstanceAttributeCommand,
  ModifyNetworkInterfaceAttributeCommand,
  ReplaceRouteCommand,
  UnassignIpv6AddressesCommand,
  UnassignPrivateIpAddressesCommand,
} from '@aws-sdk/client-ec2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { blockAt, containsCidr, formatCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator, Ec2EmulatorOptions } from '../../infra/local/ec2/index.ts';

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' };
const clientFor = (ec2: Ec2Emulator) => new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 });

const started: Ec2Emulator[] = [];
async function emulator(options: Ec2EmulatorOptions = {}) {
  const ec2 = await startEc2Emulator({ throttle: false, ...options });
  started.push(ec2);
  return { ec2, client: clientFor(ec2) };
}
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

/** The SDK error a call rejects with (fails the test when it resolves). */
async function failure(promise: Promise<unknown>): Promise<EC2ServiceException> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(EC2ServiceException);
    return error as EC2ServiceException;
  }
  throw new Error('expected the call to fail');
}

const eniOf = (ec2: Ec2Emulator, instanceId: string): string => {
  const eni = ec2.state.primaryInterface(instanceId);
  if (!eni) throw new Error(`no primary ENI for ${instanceId}`);
  return eni.id;
};

describe('EC2 emulator: route tables', () => {
  let ec2: Ec2Emulator;
  let client: EC2Client;
  beforeAll(async () => ({ ec2, client } = await emulator()));

  it('describes a table with its local routes, tags and realistic ids', async () => {
    const table = ec2.state.addRouteTable({ tags: { 'kubernetes.io/cluster/demo': 'owned', Name: 'a & <b>' } });
    expect(table.id).toMatch(/^rtb-[0-9a-f]{17}$/);
    const out = await client.send(new DescribeRouteTablesCommand({ RouteTableIds: [table.id] }));
    expect(out.RouteTables).toHaveLength(1);
    const described = out.RouteTables?.[0];
    expect(described?.RouteTableId).toBe(table.id);
    expect(described?.VpcId).toMatch(/^vpc-[0-9a-f]{17}$/);
    expect(described?.Tags).toEqual([
      { Key: 'kubernetes.io/cluster/demo', Value: 'owned' },
      { Key: 'Name', Value: 'a & <b>' },
    ]);
    expect(described?.Routes).toEqual([
      { DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local', State: 'active', Origin: 'CreateRouteTable' },
      { DestinationIpv6CidrBlock: '2600:1f18:1234:5600::/56', GatewayId: 'local', State: 'active', Origin: 'CreateRouteTable' },
    ]);
    expect(out.$metadata.requestId).toMatch(/\S/);
  });

  it('creates, replaces and deletes IPv4 and IPv6 routes to an interface or an instance', async () => {
    const table = ec2.state.addRouteTable();
    const a = ec2.state.addInstance();
    const b = ec2.state.addInstance({ availabilityZone: 'us-east-1b' });
    await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24', NetworkInterfaceId: eniOf(ec2, a.id) }));
    await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationIpv6CidrBlock: 'fd00:10::/80', InstanceId: a.id }));
    const routes = async () =>
      (await client.send(new DescribeRouteTablesCommand({ RouteTableIds: [table.id] }))).RouteTables?.[0]?.Routes?.filter((r) => r.Origin === 'CreateRoute');
    expect(await routes()).toEqual([
      { DestinationCidrBlock: '100.64.0.0/24', NetworkInterfaceId: eniOf(ec2, a.id), InstanceId: a.id, InstanceOwnerId: '123456789012', State: 'active', Origin: 'CreateRoute' },
      { DestinationIpv6CidrBlock: 'fd00:10::/80', NetworkInterfaceId: eniOf(ec2, a.id), InstanceId: a.id, InstanceOwnerId: '123456789012', State: 'active', Origin: 'CreateRoute' },
    ]);
    await client.send(new ReplaceRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24', NetworkInterfaceId: eniOf(ec2, b.id) }));
    await client.send(new ReplaceRouteCommand({ RouteTableId: table.id, DestinationIpv6CidrBlock: 'fd00:10::/80', InstanceId: b.id }));
    expect((await routes())?.map((r) => r.InstanceId)).toEqual([b.id, b.id]);
    await client.send(new DeleteRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24' }));
    await client.send(new DeleteRouteCommand({ RouteTableId: table.id, DestinationIpv6CidrBlock: 'fd00:10::/80' }));
    expect(await routes()).toEqual([]);
    expect(ec2.state.routes(table.id)).toHaveLength(2);
  });

  it('reports a route to a terminated instance as a blackhole', async () => {
    const table = ec2.state.addRouteTable();
    const node = ec2.state.addInstance();
    const eni = eniOf(ec2, node.id);
    await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.9.0/24', InstanceId: node.id }));
    ec2.state.terminateInstance(node.id);
    const route = (await client.send(new DescribeRouteTablesCommand({ RouteTableIds: [table.id] }))).RouteTables?.[0]?.Routes?.find(
      (r) => r.DestinationCidrBlock === '100.64.9.0/24',
    );
    expect(route).toEqual({ DestinationCidrBlock: '100.64.9.0/24', NetworkInterfaceId: eni, State: 'blackhole', Origin: 'CreateRoute' });
    const instance = (await client.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }))).Reservations?.[0]?.Instances?.[0];
    expect(instance?.State).toEqual({ Code: 48, Name: 'terminated' });
    expect(instance?.NetworkInterfaces).toEqual([]);
  });

  it.each([
    ['RouteAlreadyExists', { DestinationCidrBlock: '100.64.1.0/24' }, 'dup'],
    ['InvalidRouteTableID.NotFound', { DestinationCidrBlock: '100.64.2.0/24', RouteTableId: 'rtb-0000000000000ffff' }, 'eni'],
    ['InvalidInstanceID.NotFound', { DestinationCidrBlock: '100.64.3.0/24', InstanceId: 'i-0000000000000ffff' }, 'none'],
    ['InvalidNetworkInterfaceID.NotFound', { DestinationCidrBlock: '100.64.4.0/24', NetworkInterfaceId: 'eni-0000000000000ffff' }, 'none'],
    ['InvalidParameterValue', { DestinationCidrBlock: '100.64.5.0/33' }, 'eni'],
    ['InvalidParameterValue', { DestinationCidrBlock: 'fd00::/64' }, 'eni'],
    ['InvalidParameterValue', { DestinationIpv6CidrBlock: '100.64.6.0/24' }, 'eni'],
  ] as const)('CreateRoute fails with %s (%j)', async (code, input, target) => {
    const table = ec2.state.addRouteTable();
    const node = ec2.state.addInstance();
    const eni = eniOf(ec2, node.id);
    if (target === 'dup') {
      await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.1.0/24', NetworkInterfaceId: eni }));
    }
    const error = await failure(
      client.send(new CreateRouteCommand({ RouteTableId: table.id, ...(target === 'none' ? {} : { NetworkInterfaceId: eni }), ...input })),
    );
    expect(error.name).toBe(code);
    expect(error.$metadata.httpStatusCode).toBe(400);
    expect(error.$fault).toBe('client');
  });

  // Which target fields a route to an attached interface comes back with. `both`: real EC2 as
  // observed (hashicorp/terraform-provider-aws#14197 and #1426: a route made with one of the two
  // reads back with the other too); the EC2 API reference (Route) does not say. `as-created`: only
  // the field given, the emulator's switch for an EC2 that answers so.
  it.each([
    ['both', 'NetworkInterfaceId', { eni: true, instance: true }],
    ['both', 'InstanceId', { eni: true, instance: true }],
    ['as-created', 'NetworkInterfaceId', { eni: true, instance: false }],
    ['as-created', 'InstanceId', { eni: false, instance: true }],
  ] as const)('routeTargetFields %s: a route made with %s is described with %j', async (fields, param, shown) => {
    const { ec2: own, client: ownClient } = await emulator({ routeTargetFields: fields });
    const table = own.state.addRouteTable();
    const node = own.state.addInstance();
    const eni = eniOf(own, node.id);
    const target = param === 'InstanceId' ? { InstanceId: node.id } : { NetworkInterfaceId: eni };
    await ownClient.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.7.0/24', ...target }));
    const described = async () =>
      (await ownClient.send(new DescribeRouteTablesCommand({ RouteTableIds: [table.id] }))).RouteTables?.[0]?.Routes?.find((r) => r.Origin === 'CreateRoute');
    expect(await described()).toEqual({
      DestinationCidrBlock: '100.64.7.0/24',
      ...(shown.eni ? { NetworkInterfaceId: eni } : {}),
      ...(shown.instance ? { InstanceId: node.id, InstanceOwnerId: '123456789012' } : {}),
      State: 'active',
      Origin: 'CreateRoute',
    });
    // A blackhole names the interface that went away, whatever the switch says.
    own.state.terminateInstance(node.id);
    expect(await described()).toEqual({ DestinationCidrBlock: '100.64.7.0/24', NetworkInterfaceId: eni, State: 'blackhole', Origin: 'CreateRoute' });
  });

  // ReplaceRoute of a destination with no route: EC2 answers InvalidParameterValue, not the
  // InvalidRoute.NotFound that DeleteRoute answers (checked against AWS in getmoto/moto#6425; the EC2
  // API reference, ReplaceRoute, names no error code for it).
  it('DeleteRoute of a missing route is InvalidRoute.NotFound; ReplaceRoute of one is InvalidParameterValue', async () => {
    const table = ec2.state.addRouteTable();
    const node = ec2.state.addInstance();
    const del = await failure(client.send(new DeleteRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24' })));
    expect([del.name, del.$metadata.httpStatusCode]).toEqual(['InvalidRoute.NotFound', 400]);
    const rep = await failure(
      client.send(new ReplaceRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24', InstanceId: node.id })),
    );
    expect(rep.name).toBe('InvalidParameterValue');
  });

  it('holds a propagated route beside a static one to the same destination; route calls act on the static one only', async () => {
    // Amazon VPC User Guide, "How route priority works": a static and a propagated route to one
    // destination coexist, the static one wins.
    const table = ec2.state.addRouteTable();
    const node = ec2.state.addInstance();
    const vgw = 'vgw-0a1b2c3d4e5f60001';
    ec2.state.addPropagatedRoute({ routeTableId: table.id, destinationCidr: '100.64.5.0/24', gatewayId: vgw });
    const routes = async () => {
      const out = await client.send(new DescribeRouteTablesCommand({ RouteTableIds: [table.id] }));
      return { routes: out.RouteTables?.[0]?.Routes?.filter((r) => r.Origin !== 'CreateRouteTable'), vgws: out.RouteTables?.[0]?.PropagatingVgws };
    };
    const propagated = { DestinationCidrBlock: '100.64.5.0/24', GatewayId: vgw, State: 'active', Origin: 'EnableVgwRoutePropagation' };
    // No static route yet: ReplaceRoute and DeleteRoute find none; CreateRoute adds one beside the propagated route.
    const rep = await failure(client.send(new ReplaceRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.5.0/24', InstanceId: node.id })));
    expect(rep.name).toBe('InvalidParameterValue');
    const del = await failure(client.send(new DeleteRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.5.0/24' })));
    expect(del.name).toBe('InvalidRoute.NotFound');
    await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.5.0/24', InstanceId: node.id }));
    const staticRoute = { DestinationCidrBlock: '100.64.5.0/24', NetworkInterfaceId: eniOf(ec2, node.id), InstanceId: node.id, InstanceOwnerId: '123456789012', State: 'active', Origin: 'CreateRoute' };
    expect(await routes()).toEqual({ routes: [propagated, staticRoute], vgws: [{ GatewayId: vgw }] });
    const again = await failure(client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.5.0/24', InstanceId: node.id })));
    expect(again.name).toBe('RouteAlreadyExists');
    await client.send(new DeleteRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.5.0/24' }));
    expect(await routes()).toEqual({ routes: [propagated], vgws: [{ GatewayId: vgw }] });
  });

  it('refuses the route over the quota with RouteLimitExceeded, the local route not counted', async () => {
    const { ec2: small, client: smallClient } = await emulator({ routeLimit: 3 });
    const table = small.state.addRouteTable();
    const node = small.state.addInstance();
    for (let i = 0; i < 3; i++) {
      await smallClient.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: `100.64.${i}.0/24`, InstanceId: node.id }));
    }
    const error = await failure(smallClient.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.3.0/24', InstanceId: node.id })));
    expect([error.name, error.$metadata.httpStatusCode]).toEqual(['RouteLimitExceeded', 400]);
    await smallClient.send(new DeleteRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24' }));
    await smallClient.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.3.0/24', InstanceId: node.id }));
    expect(small.state.routes(table.id).filter((r) => r.origin === 'CreateRoute')).toHaveLength(3);
  });

  it('CreateTags and DeleteTags on route tables follow EC2: overwrite, reserved aws: keys, 50-tag limit, value-matched delete', async () => {
    const { ec2: e, client: c } = await emulator();
    const table = e.state.addRouteTable({ tags: { Name: 'main' } });
    const tagsOf = () => Object.fromEntries((e.state.table(table.id).tags).map((t) => [t.key, t.value]));
    await c.send(new CreateTagsCommand({ Resources: [table.id], Tags: [{ Key: 'podroute.io/route-table-full', Value: '50@2026-12-01T00:00:00.000Z' }] }));
    await c.send(new CreateTagsCommand({ Resources: [table.id], Tags: [{ Key: 'podroute.io/route-table-full', Value: '51@2026-12-01T00:10:00.000Z' }] }));
    expect(tagsOf()).toEqual({ Name: 'main', 'podroute.io/route-table-full': '51@2026-12-01T00:10:00.000Z' });

    const reserved = await failure(c.send(new CreateTagsCommand({ Resources: [table.id], Tags: [{ Key: 'aws:cloudformation:stack-name', Value: 'x' }] })));
    expect([reserved.name, reserved.$metadata.httpStatusCode]).toEqual(['InvalidParameterValue', 400]);
    const missing = await failure(c.send(new CreateTagsCommand({ Resources: ['rtb-0000000000000dead'], Tags: [{ Key: 'k', Value: 'v' }] })));
    expect(missing.name).toBe('InvalidRouteTableID.NotFound');
    const many = Array.from({ length: 49 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    const limit = await failure(c.send(new CreateTagsCommand({ Resources: [table.id], Tags: many })));
    expect(limit.name).toBe('TagLimitExceeded');
    expect(Object.keys(tagsOf())).toHaveLength(2);

    // A value given must match; no value deletes whatever the value; an absent key is no error.
    await c.send(new DeleteTagsCommand({ Resources: [table.id], Tags: [{ Key: 'podroute.io/route-table-full', Value: 'other' }] }));
    expect(Object.keys(tagsOf())).toContain('podroute.io/route-table-full');
    await c.send(new DeleteTagsCommand({ Resources: [table.id], Tags: [{ Key: 'podroute.io/route-table-full' }, { Key: 'absent' }] }));
    expect(tagsOf()).toEqual({ Name: 'main' });
    const tagged = await c.send(new DescribeRouteTablesCommand({ RouteTableIds: [table.id] }));
    expect(tagged.RouteTables?.[0]?.Tags).toEqual([{ Key: 'Name', Value: 'main' }]);
  });

  it('rejects a route limit above its ceiling, and below 1', async () => {
    await expect(startEc2Emulator({ routeLimit: 100_001 })).rejects.toThrow(/routeLimit/);
    await expect(startEc2Emulator({ routeLimit: 0 })).rejects.toThrow(/routeLimit/);
  });
});

describe('EC2 emulator: filters and pagination', () => {
  it('pages through more tables than MaxResults and filters by tag key, tag value, id and VPC', async () => {
    const { ec2, client } = await emulator();
    const mine: string[] = [];
    for (let i = 0; i < 12; i++) mine.push(ec2.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': i % 2 === 0 ? 'owned' : 'shared' } }).id);
    const other = ec2.state.addVpc({ cidrBlock: '172.16.0.0/16' });
    const foreign = ec2.state.addRouteTable({ vpcId: other.id, tags: { 'kubernetes.io/cluster/beta': 'owned' } }).id;

    const pages: number[] = [];
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const out = await client.send(
        new DescribeRouteTablesCommand({ Filters: [{ Name: 'tag-key', Values: ['kubernetes.io/cluster/alpha'] }], MaxResults: 5, ...(token ? { NextToken: token } : {}) }),
      );
      pages.push(out.RouteTables?.length ?? 0);
      ids.push(...(out.RouteTables ?? []).flatMap((t) => (t.RouteTableId ? [t.RouteTableId] : [])));
      token = out.NextToken;
    } while (token);
    expect(pages).toEqual([5, 5, 2]);
    expect(ids).toEqual(mine);

    const byValue = await client.send(new DescribeRouteTablesCommand({ Filters: [{ Name: 'tag:kubernetes.io/cluster/alpha', Values: ['shared'] }] }));
    expect(byValue.RouteTables?.map((t) => t.RouteTableId)).toEqual(mine.filter((_, i) => i % 2 === 1));
    const byVpc = await client.send(new DescribeRouteTablesCommand({ Filters: [{ Name: 'vpc-id', Values: [other.id] }] }));
    expect(byVpc.RouteTables?.map((t) => t.RouteTableId)).toEqual([foreign]);
    const byId = await client.send(new DescribeRouteTablesCommand({ Filters: [{ Name: 'route-table-id', Values: [mine[3] ?? '', foreign] }] }));
    expect(byId.RouteTables?.map((t) => t.RouteTableId)).toEqual([mine[3], foreign]);
    const wildcard = await client.send(new DescribeRouteTablesCommand({ Filters: [{ Name: 'tag-key', Values: ['kubernetes.io/cluster/*'] }] }));
    expect(wildcard.RouteTables).toHaveLength(13);
  });

  it.each([
    ['InvalidParameterValue', { Filters: [{ Name: 'no-such-filter', Values: ['x'] }] }],
    ['InvalidParameterValue', { MaxResults: 4 }],
    ['InvalidPaginationToken', { NextToken: 'bm90LWEtdG9rZW4' }],
    ['InvalidRouteTableID.NotFound', { RouteTableIds: ['rtb-0000000000000beef'] }],
  ])('DescribeRouteTables fails with %s', async (code, input) => {
    const { client } = await emulator();
    const error = await failure(client.send(new DescribeRouteTablesCommand(input)));
    expect(error.name).toBe(code);
  });
});

describe('EC2 emulator: instances, interfaces and prefixes', () => {
  let ec2: Ec2Emulator;
  let client: EC2Client;
  beforeAll(async () => ({ ec2, client } = await emulator()));

  it('describes an instance with its primary interface, placement and source/dest check', async () => {
    const node = ec2.state.addInstance({ availabilityZone: 'us-east-1c', privateDnsName: 'node-a.ec2.internal', tags: { Name: 'node-a' } });
    expect(node.id).toMatch(/^i-[0-9a-f]{17}$/);
    const out = await client.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }));
    const instance = out.Reservations?.[0]?.Instances?.[0];
    expect(instance).toMatchObject({
      InstanceId: node.id,
      PrivateDnsName: 'node-a.ec2.internal',
      SourceDestCheck: true,
      State: { Code: 16, Name: 'running' },
      Placement: { AvailabilityZone: 'us-east-1c' },
      Tags: [{ Key: 'Name', Value: 'node-a' }],
      SubnetId: node.subnetId,
      PrivateIpAddress: node.privateIpAddress,
    });
    expect(instance?.NetworkInterfaces).toHaveLength(1);
    expect(instance?.NetworkInterfaces?.[0]).toMatchObject({
      NetworkInterfaceId: eniOf(ec2, node.id),
      Attachment: { DeviceIndex: 0, Status: 'attached' },
      SourceDestCheck: true,
      Ipv4Prefixes: [],
      Ipv6Prefixes: [],
    });
    expect(instance?.NetworkInterfaces?.[0]?.NetworkInterfaceId).toMatch(/^eni-[0-9a-f]{17}$/);
    const filtered = await client.send(new DescribeInstancesCommand({ Filters: [{ Name: 'private-dns-name', Values: ['node-a.ec2.internal'] }] }));
    expect(filtered.Reservations?.flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId)).toEqual([node.id]);
  });

  it.each([
    ['InvalidInstanceID.NotFound', 'i-0000000000000dead'],
    ['InvalidInstanceID.Malformed', 'not-an-id'],
  ])('DescribeInstances fails with %s', async (code, id) => {
    const error = await failure(client.send(new DescribeInstancesCommand({ InstanceIds: [id] })));
    expect(error.name).toBe(code);
  });

  it('turns the source/dest check off through ModifyInstanceAttribute', async () => {
    const node = ec2.state.addInstance();
    await client.send(new ModifyInstanceAttributeCommand({ InstanceId: node.id, SourceDestCheck: { Value: false } }));
    const instance = (await client.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }))).Reservations?.[0]?.Instances?.[0];
    expect(instance?.SourceDestCheck).toBe(false);
    expect(instance?.NetworkInterfaces?.[0]?.SourceDestCheck).toBe(false);
    expect(ec2.state.sourceDestCheck(node.id)).toBe(false);
  });

  it('delegates IPv4 /28 and IPv6 /80 prefixes, given or counted, and shows them on the interface', async () => {
    const node = ec2.state.addInstance({ availabilityZone: 'us-east-1d' });
    const other = ec2.state.addInstance({ availabilityZone: 'us-east-1d' });
    const eni = eniOf(ec2, node.id);
    const subnet = ec2.state.subnets.get(node.subnetId);
    expect(subnet?.ipv6CidrBlock).toBeDefined();
    const fifth = formatCidr(blockAt(parseCidr(subnet?.cidrBlock), 28, 4n));
    const given = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: [fifth] }));
    expect(given.AssignedIpv4Prefixes).toEqual([{ Ipv4Prefix: fifth }]);
    const counted = await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 1 }));
    expect(counted.AssignedIpv4Prefixes?.[0]?.Ipv4Prefix).toSatisfy((p: unknown) => containsCidr(parseCidr(subnet?.cidrBlock), parseCidr(p)) && parseCidr(p).prefix === 28);
    expect(counted.AssignedIpv4Prefixes?.[0]?.Ipv4Prefix).not.toBe(fifth);
    const v6 = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6PrefixCount: 1 }));
    expect(v6.AssignedIpv6Prefixes).toHaveLength(1);
    expect(v6.AssignedIpv6Prefixes?.[0]).toMatch(/::\/80$/);

    const taken = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eniOf(ec2, other.id), Ipv4Prefixes: [fifth] })));
    expect(taken.name).toBe('InvalidParameterValue');
    const wrongSize = await failure(client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: [formatCidr(blockAt(parseCidr(subnet?.cidrBlock), 27, 4n))] })));
    expect(wrongSize.name).toBe('InvalidParameterValue');
    const missing = await failure(client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0000000000000dead', Ipv6PrefixCount: 1 })));
    expect(missing.name).toBe('InvalidNetworkInterfaceID.NotFound');

    const described = await client.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'attachment.instance-id', Values: [node.id] }] }));
    expect(described.NetworkInterfaces).toHaveLength(1);
    const iface = described.NetworkInterfaces?.[0];
    expect(iface?.Attachment).toMatchObject({ InstanceId: node.id, DeviceIndex: 0 });
    expect(iface?.Ipv4Prefixes?.map((p) => p.Ipv4Prefix)).toEqual([fifth, counted.AssignedIpv4Prefixes?.[0]?.Ipv4Prefix]);
    expect(iface?.Ipv6Prefixes?.map((p) => p.Ipv6Prefix)).toEqual(v6.AssignedIpv6Prefixes);
    const byId = await client.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [eni] }));
    expect(byId.NetworkInterfaces?.map((n) => n.NetworkInterfaceId)).toEqual([eni]);
  });

  it('unassigns named prefixes (Ipv4Prefix.N, Ipv6Prefix.N), refuses one the interface lacks, and has no prefix filter on DescribeNetworkInterfaces', async () => {
    const node = ec2.state.addInstance({ availabilityZone: 'us-east-1d' });
    const eni = eniOf(ec2, node.id);
    const v4 = (await client.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4PrefixCount: 2 }))).AssignedIpv4Prefixes?.map((p) => p.Ipv4Prefix ?? '') ?? [];
    const v6 = (await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6PrefixCount: 1 }))).AssignedIpv6Prefixes ?? [];
    const [first = '', second = ''] = v4;

    await client.send(new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: [first] }));
    const unassigned6 = await client.send(new UnassignIpv6AddressesCommand({ NetworkInterfaceId: eni, Ipv6Prefixes: v6 }));
    expect(unassigned6).toMatchObject({ NetworkInterfaceId: eni, UnassignedIpv6Prefixes: v6 });
    const iface = (await client.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [eni] }))).NetworkInterfaces?.[0];
    expect(iface?.Ipv4Prefixes?.map((p) => p.Ipv4Prefix)).toEqual([second]);
    expect(iface?.Ipv6Prefixes ?? []).toEqual([]);

    const again = await failure(client.send(new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, Ipv4Prefixes: [first, second] })));
    expect(again.name).toBe('InvalidParameterValue');
    expect(ec2.state.networkInterface(eni).ipv4Prefixes).toEqual([second]);
    const none = await failure(client.send(new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eni })));
    expect(none.name).toBe('MissingParameter');
    const gone = await failure(client.send(new UnassignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0000000000000dead', Ipv6Prefixes: v6 })));
    expect(gone.name).toBe('InvalidNetworkInterfaceID.NotFound');
    // EC2 API reference, DescribeNetworkInterfaces: its filter list names no prefix filter.
    const filtered = await failure(client.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'ipv4-prefix.ipv4-prefix', Values: [second] }] })));
    expect(filtered.name).toBe('InvalidParameterValue');
  });
});

describe('EC2 emulator: protocol', () => {
  it('answers an unknown action with InvalidAction and an unsigned request with AuthFailure', async () => {
    const { ec2 } = await emulator();
    const unknown = await fetch(ec2.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request, Signature=00' },
      body: 'Action=RunInstances&Version=2016-11-15',
    });
    expect(unknown.status).toBe(400);
    const body = await unknown.text();
    expect(body).toContain('<Code>InvalidAction</Code>');
    expect(body).toMatch(/<RequestID>[^<]+<\/RequestID>/);
    const unsigned = await fetch(ec2.url, { method: 'POST', body: 'Action=DescribeRouteTables&Version=2016-11-15' });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.text()).toContain('<Code>AuthFailure</Code>');
  });

  it('answers successes in the 2016-11-15 namespace with a requestId', async () => {
    const { ec2 } = await emulator();
    const res = await fetch(ec2.url, {
      method: 'POST',
      headers: { authorization: 'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/ec2/aws4_request, Signature=00' },
      body: new URLSearchParams({ Action: 'DescribeRouteTables', Version: '2016-11-15' }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^<\?xml[^>]*>\s*<DescribeRouteTablesResponse xmlns="http:\/\/ec2\.amazonaws\.com\/doc\/2016-11-15\/"><requestId>/);
  });
});

describe('EC2 emulator: throttling and faults', () => {
  let clock = 0;
  afterEach(() => {
    clock = 0;
  });

  it('gives each action its token bucket: exact burst, then RequestLimitExceeded (503), then refill as the clock moves', async () => {
    const { ec2, client } = await emulator({
      now: () => clock,
      throttle: { mutating: { capacity: 4, refillPerSecond: 2 }, nonMutating: { capacity: 6, refillPerSecond: 3 } },
    });
    const table = ec2.state.addRouteTable();
    const node = ec2.state.addInstance();
    const create = (i: number) => client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: `100.64.${i}.0/24`, InstanceId: node.id }));
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(await create(i).then(() => 'ok', (e: Error) => e.name));
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'RequestLimitExceeded', 'RequestLimitExceeded']);
    const throttled = await failure(create(99));
    expect(throttled.$metadata.httpStatusCode).toBe(503);
    expect(ec2.stats.throttled).toBe(3);
    expect(ec2.stats.count('CreateRoute')).toBe(7);

    // Describe calls have their own, larger bucket, untouched by the CreateRoute burst.
    const describes: string[] = [];
    for (let i = 0; i < 7; i++) describes.push(await client.send(new DescribeRouteTablesCommand({})).then(() => 'ok', (e: Error) => e.name));
    expect(describes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'RequestLimitExceeded']);

    clock += 1000; // 2 CreateRoute tokens come back
    const after: string[] = [];
    for (let i = 10; i < 13; i++) after.push(await create(i).then(() => 'ok', (e: Error) => e.name));
    expect(after).toEqual(['ok', 'ok', 'RequestLimitExceeded']);
    clock += 500; // one more
    expect(await create(20).then(() => 'ok', (e: Error) => e.name)).toBe('ok');
    clock += 60_000; // never more than the capacity
    const refilled: string[] = [];
    for (let i = 30; i < 35; i++) refilled.push(await create(i).then(() => 'ok', (e: Error) => e.name));
    expect(refilled).toEqual(['ok', 'ok', 'ok', 'ok', 'RequestLimitExceeded']);
  });

  it('defaults to EC2 bucket sizes: 50 mutating calls in a burst', async () => {
    const { ec2, client } = await emulator({ now: () => clock, throttle: {} });
    const table = ec2.state.addRouteTable();
    let ok = 0;
    for (let i = 0; i < 51; i++) {
      const result = await client
        .send(new ReplaceRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.0.0/24', InstanceId: 'i-0000000000000dead' }))
        .then(() => 'ok', (e: Error) => e.name);
      if (result !== 'RequestLimitExceeded') ok += 1;
    }
    expect(ok).toBe(50);
    expect(ec2.stats.throttled).toBe(1);
  });

  it('injects faults with an injected random source and counts them', async () => {
    const rolls = [0.1, 0.0, 0.9, 0.2, 0.99, 0.05, 0.7];
    const { ec2, client } = await emulator({
      faults: { share: 0.5, kinds: ['InternalError', 'ServiceUnavailable'], random: () => rolls.shift() ?? 1 },
    });
    const results: (string | number | undefined)[][] = [];
    for (let i = 0; i < 4; i++) {
      results.push(
        await client.send(new DescribeRouteTablesCommand({})).then(
          () => ['ok'],
          (e: EC2ServiceException) => [e.name, e.$metadata.httpStatusCode],
        ),
      );
    }
    // rolls: 0.1 < 0.5 fault, kind roll 0.0 -> InternalError; 0.9 ok; 0.2 fault, kind 0.99 -> ServiceUnavailable;
    // 0.05 fault, kind 0.7 -> ServiceUnavailable.
    expect(results).toEqual([['InternalError', 500], ['ok'], ['ServiceUnavailable', 503], ['ServiceUnavailable', 503]]);
    expect(ec2.stats.faults).toBe(3);
    expect(ec2.stats.faultsByKind).toEqual({ InternalError: 1, ServiceUnavailable: 2 });
  });
});

describe('EC2 emulator: instances with several network interfaces', () => {
  let ec2: Ec2Emulator;
  let client: EC2Client;
  beforeAll(async () => ({ ec2, client } = await emulator()));

  const describeOne = async (instanceId: string) => (await client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }))).Reservations?.[0]?.Instances?.[0];

  it('describes the primary and each secondary interface with its own id, device index, address and source/dest check', async () => {
    const node = ec2.state.addInstance({ secondaryEnis: 2 });
    const instance = await describeOne(node.id);
    const enis = instance?.NetworkInterfaces ?? [];
    expect(enis.map((e) => e.Attachment?.DeviceIndex).sort()).toEqual([0, 1, 2]);
    expect(new Set(enis.map((e) => e.NetworkInterfaceId)).size).toBe(3);
    expect(new Set(enis.map((e) => e.PrivateIpAddress)).size).toBe(3);
    const subnet = ec2.state.subnets.get(node.subnetId);
    for (const eni of enis) {
      expect(eni).toMatchObject({ SubnetId: node.subnetId, SourceDestCheck: true, Attachment: { Status: 'attached' } });
      expect(eni.NetworkInterfaceId).toMatch(/^eni-[0-9a-f]{17}$/);
      expect(containsCidr(parseCidr(subnet?.cidrBlock), parseCidr(`${eni.PrivateIpAddress}/32`))).toBe(true);
    }
    expect(enis.find((e) => e.Attachment?.DeviceIndex === 0)?.NetworkInterfaceId).toBe(eniOf(ec2, node.id));
    expect(enis.find((e) => e.Attachment?.DeviceIndex === 0)?.PrivateIpAddress).toBe(node.privateIpAddress);
    const byInstance = await client.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'attachment.instance-id', Values: [node.id] }] }));
    expect(byInstance.NetworkInterfaces).toHaveLength(3);
  });

  it('turns one interface\'s source/dest check off with ModifyNetworkInterfaceAttribute, leaving the others on', async () => {
    const node = ec2.state.addInstance({ secondaryEnis: 2 });
    const primary = eniOf(ec2, node.id);
    await client.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: primary, SourceDestCheck: { Value: false } }));
    const enis = (await describeOne(node.id))?.NetworkInterfaces ?? [];
    expect(enis.map((e) => [e.Attachment?.DeviceIndex, e.SourceDestCheck]).sort()).toEqual([
      [0, false],
      [1, true],
      [2, true],
    ]);
    expect(ec2.state.sourceDestCheck(node.id)).toBe(false);
    await client.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: primary, SourceDestCheck: { Value: true } }));
    expect(ec2.state.sourceDestCheck(node.id)).toBe(true);
  });

  it.each([
    ['InvalidNetworkInterfaceID.NotFound', { NetworkInterfaceId: 'eni-0000000000000dead', SourceDestCheck: { Value: false } }],
    ['InvalidNetworkInterfaceID.Malformed', { NetworkInterfaceId: 'not-an-eni', SourceDestCheck: { Value: false } }],
    ['MissingParameter', { NetworkInterfaceId: '', SourceDestCheck: { Value: false } }],
  ] as const)('ModifyNetworkInterfaceAttribute fails with %s', async (code, input) => {
    const error = await failure(client.send(new ModifyNetworkInterfaceAttributeCommand(input)));
    expect(error.name).toBe(code);
    expect(error.$metadata.httpStatusCode).toBe(400);
  });

  it('refuses two attributes in one ModifyNetworkInterfaceAttribute and changes nothing', async () => {
    const node = ec2.state.addInstance();
    const error = await failure(
      client.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: eniOf(ec2, node.id), SourceDestCheck: { Value: false }, Description: { Value: 'x' } })),
    );
    expect(error.name).toBe('InvalidParameterCombination');
    expect(ec2.state.sourceDestCheck(node.id)).toBe(true);
  });

  it('refuses the instance-level source/dest check on an instance with several interfaces, as EC2 does, and changes nothing', async () => {
    const node = ec2.state.addInstance({ secondaryEnis: 1 });
    const error = await failure(client.send(new ModifyInstanceAttributeCommand({ InstanceId: node.id, SourceDestCheck: { Value: false } })));
    expect(error.name).toBe('InvalidInstanceID');
    expect(error.$metadata.httpStatusCode).toBe(400);
    expect(error.message).toBe(`There are multiple interfaces attached to instance '${node.id}'. Please specify an interface ID for the operation instead.`);
    expect(((await describeOne(node.id))?.NetworkInterfaces ?? []).map((e) => e.SourceDestCheck)).toEqual([true, true]);
  });

  it.each(['CreateRoute', 'ReplaceRoute'] as const)('%s with the InstanceId of an instance with several interfaces fails with InvalidInstanceID', async (action) => {
    const table = ec2.state.addRouteTable();
    const single = ec2.state.addInstance();
    const multi = ec2.state.addInstance({ secondaryEnis: 1 });
    if (action === 'ReplaceRoute') ec2.state.addRoute({ routeTableId: table.id, destinationCidr: '100.64.7.0/24', instanceId: single.id });
    const input = { RouteTableId: table.id, DestinationCidrBlock: '100.64.7.0/24', InstanceId: multi.id };
    const error = await failure(client.send(action === 'CreateRoute' ? new CreateRouteCommand(input) : new ReplaceRouteCommand(input)));
    expect(error.name).toBe('InvalidInstanceID');
    expect(error.message).toMatch(/multiple interfaces attached/);
    const routes = ec2.state.routes(table.id).filter((r) => r.origin === 'CreateRoute');
    expect(routes.map((r) => r.instanceId)).toEqual(action === 'CreateRoute' ? [] : [single.id]);
    // The interface id is the way: the route then names the instance too.
    await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.8.0/24', NetworkInterfaceId: eniOf(ec2, multi.id) }));
    expect(ec2.state.routes(table.id).find((r) => r.destinationCidrBlock === '100.64.8.0/24')).toMatchObject({ instanceId: multi.id, networkInterfaceId: eniOf(ec2, multi.id), state: 'active' });
  });
});

describe('EC2 emulator: eventual consistency after a launch', () => {
  it('answers NotFound for a fresh instance and its interfaces inside the window, and not after', async () => {
    let clock = 1_000_000;
    const { ec2, client } = await emulator({ now: () => clock, notFoundAfterLaunchMs: 3000 });
    const table = ec2.state.addRouteTable();
    const old = ec2.state.addInstance();
    clock += 3000;
    const fresh = ec2.state.addInstance({ secondaryEnis: 1 });
    const eni = eniOf(ec2, fresh.id);
    clock += 2999;

    const inside = async () => [
      await failure(client.send(new DescribeInstancesCommand({ InstanceIds: [fresh.id] }))).then((e) => e.name),
      await failure(client.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [eni] }))).then((e) => e.name),
      await failure(client.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: eni, SourceDestCheck: { Value: false } }))).then((e) => e.name),
      await failure(client.send(new ModifyInstanceAttributeCommand({ InstanceId: fresh.id, SourceDestCheck: { Value: false } }))).then((e) => e.name),
      await failure(client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.1.0/24', NetworkInterfaceId: eni }))).then((e) => e.name),
    ];
    expect(await inside()).toEqual([
      'InvalidInstanceID.NotFound',
      'InvalidNetworkInterfaceID.NotFound',
      'InvalidNetworkInterfaceID.NotFound',
      'InvalidInstanceID.NotFound',
      'InvalidNetworkInterfaceID.NotFound',
    ]);
    // An unfiltered describe does not show it yet; the older instance is there.
    const all = await client.send(new DescribeInstancesCommand({}));
    expect(all.Reservations?.flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId)).toEqual([old.id]);
    const enis = await client.send(new DescribeNetworkInterfacesCommand({}));
    expect(enis.NetworkInterfaces?.map((n) => n.NetworkInterfaceId)).toEqual([eniOf(ec2, old.id)]);
    expect(ec2.state.sourceDestCheck(fresh.id)).toBe(true);
    expect(ec2.state.routes(table.id).filter((r) => r.origin === 'CreateRoute')).toEqual([]);

    clock += 1;
    expect((await client.send(new DescribeInstancesCommand({ InstanceIds: [fresh.id] }))).Reservations?.[0]?.Instances?.[0]?.InstanceId).toBe(fresh.id);
    await client.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: eni, SourceDestCheck: { Value: false } }));
    await client.send(new CreateRouteCommand({ RouteTableId: table.id, DestinationCidrBlock: '100.64.1.0/24', NetworkInterfaceId: eni }));
    expect(ec2.state.sourceDestCheck(fresh.id)).toBe(false);
    expect(ec2.state.routes(table.id).filter((r) => r.origin === 'CreateRoute').map((r) => r.instanceId)).toEqual([fresh.id]);
  });

  it('is off by default and refuses a negative window', async () => {
    const { ec2, client } = await emulator();
    const node = ec2.state.addInstance();
    expect((await client.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }))).Reservations).toHaveLength(1);
    await expect(startEc2Emulator({ notFoundAfterLaunchMs: -1 })).rejects.toThrow(RangeError);
  });
});
