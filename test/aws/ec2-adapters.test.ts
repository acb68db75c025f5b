import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator, Ec2EmulatorOptions } from '../../infra/local/ec2/index.ts';
import { Ec2EniPrefixes, assertPrefixMask } from '../../lib/aws/ec2-prefixes.ts';
import { Ec2Error, Ec2NotFoundError, RouteConflictError, RouteTableFullError } from '../../lib/aws/ec2-errors.ts';
import { allPages } from '../../lib/aws/ec2-paging.ts';
import { Ec2RouteTables } from '../../lib/aws/ec2-route-tables.ts';
import { Ec2RouteTargets } from '../../lib/aws/ec2-route-targets.ts';
import { PodrouteError } from '../../lib/errors.ts';

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' };
const started: Ec2Emulator[] = [];
async function world(options: Ec2EmulatorOptions = {}) {
  const ec2 = await startEc2Emulator({ throttle: false, ...options });
  started.push(ec2);
  const client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 });
  return { ec2, client };
}
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

const eniOf = (ec2: Ec2Emulator, instanceId: string): string => {
  const eni = ec2.state.primaryInterface(instanceId);
  if (!eni) throw new Error(`no primary ENI for ${instanceId}`);
  return eni.id;
};

describe('Ec2RouteTables against the emulator', () => {
  let ec2: Ec2Emulator;
  let client: EC2Client;
  let tables: Ec2RouteTables;
  let targets: Ec2RouteTargets;
  let tableId: string;
  beforeAll(async () => {
    ({ ec2, client } = await world());
    tables = new Ec2RouteTables(client, { clusterName: 'alpha', pageSize: 5 });
    targets = new Ec2RouteTargets(client);
    tableId = ec2.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': 'owned' } }).id;
  });

  it('lists every tagged table over several pages and no other', async () => {
    const { ec2: many, client: manyClient } = await world();
    const mine = Array.from({ length: 13 }, () => many.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': 'shared' } }).id);
    many.state.addRouteTable({ tags: { 'kubernetes.io/cluster/beta': 'owned' } });
    many.state.addRouteTable();
    const adapter = new Ec2RouteTables(manyClient, { clusterName: 'alpha', pageSize: 5 });
    const listed = await adapter.listRouteTables();
    expect(listed.map((t) => t.routeTableId)).toEqual(mine);
    // In podroute's terms (lib/routes/route-tables.ts), translated by the adapter.
    expect(listed[0]?.routes[0]).toMatchObject({ target: 'local', gatewayId: 'local', blackhole: false });
    expect(listed[0]?.tags).toEqual({ 'kubernetes.io/cluster/alpha': 'shared' });
    expect(many.stats.count('DescribeRouteTables')).toBe(3);

    const explicit = new Ec2RouteTables(manyClient, { clusterName: 'alpha', routeTableIds: [mine[4] ?? '', mine[1] ?? ''] });
    expect((await explicit.listRouteTables()).map((t) => t.routeTableId).sort()).toEqual([mine[1], mine[4]].sort());
  });

  // The worker's IAM allows route writes only on tables tagged kubernetes.io/cluster/<name>
  // (serverless.yml), so ROUTE_TABLE_IDS must name tagged tables: anything else fails at once, by name.
  it('refuses listed route tables that lack the cluster tag or do not exist, naming every one, not retryable', async () => {
    const { ec2: own, client: ownClient } = await world();
    const tagged = own.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': 'owned' } }).id;
    const otherCluster = own.state.addRouteTable({ tags: { 'kubernetes.io/cluster/beta': 'owned' } }).id;
    const bare = own.state.addRouteTable().id;
    const adapter = new Ec2RouteTables(ownClient, { clusterName: 'alpha', routeTableIds: [tagged, otherCluster, 'rtb-0000000000000dead', bare] });
    const error = await adapter.listRouteTables().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RouteTableConfigError', retryable: false, missing: ['rtb-0000000000000dead'], untagged: [otherCluster, bare] });
    expect((error as Error).message).toBe(
      `ROUTE_TABLE_IDS: rtb-0000000000000dead does not exist; ${otherCluster}, ${bare} lack the tag kubernetes.io/cluster/alpha ` +
        '(add it, any value: the worker may only write routes in tables that carry it)',
    );

    // Once tagged (any value, even empty), the same table is listed.
    own.state.routeTables.get(bare)?.tags.push({ key: 'kubernetes.io/cluster/alpha', value: '' });
    const fixed = new Ec2RouteTables(ownClient, { clusterName: 'alpha', routeTableIds: [tagged, bare] });
    expect((await fixed.listRouteTables()).map((t) => t.routeTableId).sort()).toEqual([tagged, bare].sort());
  });

  it('needs a cluster name even with listed tables (their tag is checked)', () => {
    expect(() => new Ec2RouteTables(client, { clusterName: '', routeTableIds: ['rtb-1'] })).toThrow(/cluster name is required/);
  });

  it.each([
    ['IPv4', '100.64.1.0/24', 4],
    ['IPv6', 'fd00:1::/80', 6],
  ] as const)('creates, re-reads, replaces and deletes an %s route', async (_family, cidr, family) => {
    const a = ec2.state.addInstance();
    const b = ec2.state.addInstance();
    expect(await tables.createRoute({ routeTableId: tableId, destinationCidr: cidr, networkInterfaceId: eniOf(ec2, a.id) })).toBe('created');
    const route = await tables.describeRoute(tableId, cidr);
    expect(route).toMatchObject({ routeTableId: tableId, destinationCidr: cidr, family, networkInterfaceId: eniOf(ec2, a.id), instanceId: a.id, target: 'instance', blackhole: false });
    await tables.replaceRoute({ routeTableId: tableId, destinationCidr: cidr, networkInterfaceId: eniOf(ec2, b.id) });
    expect((await tables.describeRoute(tableId, cidr))?.instanceId).toBe(b.id);
    expect(await tables.deleteRoute({ routeTableId: tableId, destinationCidr: cidr })).toBe('deleted');
    expect(await tables.describeRoute(tableId, cidr)).toBeNull();
  });

  it('treats a create over the same target as done and over another target as a conflict', async () => {
    const a = ec2.state.addInstance();
    const b = ec2.state.addInstance();
    const spec = { routeTableId: tableId, destinationCidr: '100.64.2.0/24', networkInterfaceId: eniOf(ec2, a.id) };
    expect(await tables.createRoute(spec)).toBe('created');
    expect(await tables.createRoute(spec)).toBe('exists');
    const error = await tables.createRoute({ ...spec, networkInterfaceId: eniOf(ec2, b.id) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouteConflictError);
    expect(error).toMatchObject({ retryable: false, routeTableId: tableId, destinationCidr: '100.64.2.0/24', existing: { networkInterfaceId: eniOf(ec2, a.id), instanceId: a.id } });
    expect((error as Error).cause).toMatchObject({ name: 'RouteAlreadyExists' });
  });

  it('treats a create over a blackhole as a conflict to replace', async () => {
    const gone = ec2.state.addInstance();
    const eni = eniOf(ec2, gone.id);
    await tables.createRoute({ routeTableId: tableId, destinationCidr: '100.64.3.0/24', networkInterfaceId: eni });
    ec2.state.terminateInstance(gone.id);
    const fresh = ec2.state.addInstance();
    const error = await tables.createRoute({ routeTableId: tableId, destinationCidr: '100.64.3.0/24', networkInterfaceId: eniOf(ec2, fresh.id) }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RouteConflictError', existing: { networkInterfaceId: eni, state: 'blackhole' } });
  });

  it('deletes a missing route as success', async () => {
    expect(await tables.deleteRoute({ routeTableId: tableId, destinationCidr: '100.64.99.0/24' })).toBe('absent');
    expect(await tables.deleteRoute({ routeTableId: tableId, destinationCidr: 'fd00:99::/80' })).toBe('absent');
  });

  it('maps a missing table or interface to a non-retryable not-found error', async () => {
    const error = await tables
      .createRoute({ routeTableId: 'rtb-0000000000000dead', destinationCidr: '100.64.4.0/24', networkInterfaceId: 'eni-00000000000000001' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ec2NotFoundError);
    expect(error).toMatchObject({ code: 'InvalidRouteTableID.NotFound', retryable: false });
    const eni = await tables
      .createRoute({ routeTableId: tableId, destinationCidr: '100.64.4.0/24', networkInterfaceId: 'eni-0000000000000dead' })
      .catch((e: unknown) => e);
    expect(eni).toMatchObject({ name: 'Ec2NotFoundError', code: 'InvalidNetworkInterfaceID.NotFound', retryable: false });
  });

  it('marks a table full with a tag and clears the mark (CreateTags / DeleteTags)', async () => {
    const { ec2: e, client: c } = await world();
    const id = e.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': 'owned' } }).id;
    const adapter = new Ec2RouteTables(c, { clusterName: 'alpha' });
    await adapter.markRouteTableFull(id, { routeCount: 50, at: Date.UTC(2026, 11, 1, 14, 0) });
    const listed = await adapter.listRouteTables();
    expect(listed[0]?.tags).toEqual({ 'kubernetes.io/cluster/alpha': 'owned', 'podroute.io/route-table-full': '50@2026-12-01T14:00:00.000Z' });
    await adapter.clearRouteTableFull(id);
    await adapter.clearRouteTableFull(id);
    expect((await adapter.listRouteTables())[0]?.tags).toEqual({ 'kubernetes.io/cluster/alpha': 'owned' });
  });

  it('turns the table quota into a RouteTableFullError carrying the table', async () => {
    const { ec2: small, client: smallClient } = await world({ routeLimit: 2 });
    const id = small.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': 'owned' } }).id;
    const node = small.state.addInstance();
    const adapter = new Ec2RouteTables(smallClient, { clusterName: 'alpha' });
    const create = (cidr: string) => adapter.createRoute({ routeTableId: id, destinationCidr: cidr, networkInterfaceId: eniOf(small, node.id) });
    await create('100.64.0.0/24');
    await create('100.64.1.0/24');
    const error = await create('100.64.2.0/24').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouteTableFullError);
    expect(error).toMatchObject({ retryable: false, routeTableId: id, code: 'RouteLimitExceeded' });
  });

  it('turns throttling and server faults into retryable errors with their cause', async () => {
    let clock = 0;
    const { ec2: busy, client: busyClient } = await world({ now: () => clock, throttle: { nonMutating: { capacity: 1, refillPerSecond: 1 } } });
    busy.state.addRouteTable({ tags: { 'kubernetes.io/cluster/alpha': 'owned' } });
    const adapter = new Ec2RouteTables(busyClient, { clusterName: 'alpha' });
    await adapter.listRouteTables();
    const error = await adapter.listRouteTables().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ec2Error);
    expect(error).toMatchObject({ retryable: true, code: 'RequestLimitExceeded', kind: 'throttled' });
    expect((error as Error).cause).toMatchObject({ name: 'RequestLimitExceeded', $metadata: { httpStatusCode: 503 } });
    clock += 1000;
    expect(await adapter.listRouteTables()).toHaveLength(1);

    const { ec2: flaky, client: flakyClient } = await world({ faults: { share: 1, kinds: ['InternalError'], random: () => 0 } });
    flaky.state.addRouteTable();
    const failing = await new Ec2RouteTables(flakyClient, { clusterName: 'alpha' }).listRouteTables().catch((e: unknown) => e);
    expect(failing).toMatchObject({ retryable: true, code: 'InternalError', kind: 'server' });
    expect(failing).toBeInstanceOf(PodrouteError);
  });

  it('reads the node target and disables the source/dest check only when it is on', async () => {
    const node = ec2.state.addInstance();
    expect(await targets.nodeTarget(node.id)).toEqual({ instanceId: node.id, primaryEniId: eniOf(ec2, node.id), sourceDestCheck: true });
    const before = ec2.stats.count('ModifyNetworkInterfaceAttribute');
    expect(await targets.prepareRouteTarget(node.id)).toMatchObject({ sourceDestCheck: false, sourceDestCheckChanged: true });
    expect(ec2.stats.count('ModifyNetworkInterfaceAttribute')).toBe(before + 1);
    expect(ec2.state.sourceDestCheck(node.id)).toBe(false);
    expect(await targets.prepareRouteTarget(node.id)).toMatchObject({ sourceDestCheck: false, sourceDestCheckChanged: false });
    const already = ec2.state.addInstance({ sourceDestCheck: false });
    expect(await targets.prepareRouteTarget(already.id)).toMatchObject({ primaryEniId: eniOf(ec2, already.id), sourceDestCheckChanged: false });
    expect(ec2.stats.count('ModifyNetworkInterfaceAttribute')).toBe(before + 1);
    expect(ec2.stats.count('ModifyInstanceAttribute')).toBe(0);
  });

  it('prepares a node with secondary interfaces: the primary interface is the target and only its check goes off', async () => {
    const node = ec2.state.addInstance({ secondaryEnis: 2 });
    const primary = eniOf(ec2, node.id);
    const secondaries = (ec2.state.instances.get(node.id)?.networkInterfaceIds ?? []).filter((id) => id !== primary);
    expect(secondaries).toHaveLength(2);
    expect(await targets.prepareRouteTarget(node.id)).toEqual({ instanceId: node.id, primaryEniId: primary, sourceDestCheck: false, sourceDestCheckChanged: true });
    expect(ec2.state.networkInterfaces.get(primary)?.sourceDestCheck).toBe(false);
    for (const id of secondaries) expect(ec2.state.networkInterfaces.get(id)?.sourceDestCheck).toBe(true);
    expect(await tables.createRoute({ routeTableId: tableId, destinationCidr: '100.64.77.0/24', networkInterfaceId: primary })).toBe('created');
    expect(await tables.describeRoute(tableId, '100.64.77.0/24')).toMatchObject({ networkInterfaceId: primary, instanceId: node.id, target: 'instance', blackhole: false });
  });

  it('maps launch lag to a not-found error carrying the code, and succeeds once the instance is visible', async () => {
    let clock = 5_000_000;
    const { ec2: lagging, client: laggingClient } = await world({ now: () => clock, notFoundAfterLaunchMs: 1000 });
    const adapter = new Ec2RouteTargets(laggingClient);
    const node = lagging.state.addInstance({ secondaryEnis: 1 });
    const error = await adapter.prepareRouteTarget(node.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ec2NotFoundError);
    expect(error).toMatchObject({ code: 'InvalidInstanceID.NotFound', retryable: false });
    clock += 1000;
    expect(await adapter.prepareRouteTarget(node.id)).toMatchObject({ primaryEniId: eniOf(lagging, node.id), sourceDestCheckChanged: true });
  });

  it('reports an unknown or terminated instance as not found', async () => {
    await expect(targets.nodeTarget('i-0000000000000dead')).rejects.toMatchObject({ name: 'Ec2NotFoundError', code: 'InvalidInstanceID.NotFound' });
    const gone = ec2.state.addInstance();
    ec2.state.terminateInstance(gone.id);
    await expect(targets.nodeTarget(gone.id)).rejects.toMatchObject({ name: 'Ec2NotFoundError', retryable: false });
  });
});

describe('Ec2EniPrefixes against the emulator', () => {
  it('assigns exact IPv4 /28 and IPv6 /80 prefixes to an interface and reads them back', async () => {
    const { ec2, client } = await world();
    const prefixes = new Ec2EniPrefixes(client);
    const node = ec2.state.addInstance();
    const eni = eniOf(ec2, node.id);
    const before = await prefixes.describeInterfaces([node.id]);
    expect(before.get(node.id)).toEqual({ instanceId: node.id, networkInterfaceId: eni, subnetId: node.subnetId, prefixes: [] });
    await prefixes.assignPrefix(eni, '10.0.0.32/28');
    await prefixes.assignPrefix(eni, '2600:1f18:1234:5600:1::/80');
    expect((await prefixes.describeInterfaces([node.id])).get(node.id)?.prefixes).toEqual(['10.0.0.32/28', '2600:1f18:1234:5600:1::/80']);
    expect(ec2.stats.count('AssignPrivateIpAddresses')).toBe(1);
    expect(ec2.stats.count('AssignIpv6Addresses')).toBe(1);
    expect(ec2.state.primaryInterface(node.id)?.ipv4Prefixes).toEqual(['10.0.0.32/28']);
  });

  it('lets EC2 pick a prefix and answers the one it picked', async () => {
    const { ec2, client } = await world();
    const node = ec2.state.addInstance();
    const picked = await new Ec2EniPrefixes(client).assignAnyPrefix(eniOf(ec2, node.id), 4);
    expect(picked).toMatch(/\/28$/);
    expect(ec2.state.primaryInterface(node.id)?.ipv4Prefixes).toEqual([picked]);
  });

  // Issue 9: one DescribeInstances per 200 instances (an `instance-id` filter), not one per node.
  it('reads 450 instances in 3 DescribeInstances calls, leaving out unknown and terminated ones', async () => {
    const { ec2, client } = await world();
    const ids = Array.from({ length: 450 }, () => ec2.state.addInstance().id);
    const gone = ec2.state.addInstance();
    ec2.state.terminateInstance(gone.id);
    const found = await new Ec2EniPrefixes(client).describeInterfaces([...ids, 'i-0000000000000dead', gone.id]);
    expect([...found.keys()].sort()).toEqual([...ids].sort());
    expect(ec2.stats.count('DescribeInstances')).toBe(3);
  });

  it('rejects a prefix of the wrong size before calling EC2', async () => {
    const { ec2, client } = await world();
    const node = ec2.state.addInstance();
    await expect(new Ec2EniPrefixes(client).assignPrefix(eniOf(ec2, node.id), '10.0.0.0/24')).rejects.toMatchObject({ name: 'PrefixMaskError' });
    expect(ec2.stats.count('AssignPrivateIpAddresses')).toBe(0);
  });

  it('maps a prefix taken by another interface to a non-retryable error', async () => {
    const { ec2, client } = await world();
    const a = ec2.state.addInstance();
    const b = ec2.state.addInstance();
    const prefixes = new Ec2EniPrefixes(client);
    await prefixes.assignPrefix(eniOf(ec2, a.id), '10.0.0.48/28');
    await expect(prefixes.assignPrefix(eniOf(ec2, b.id), '10.0.0.48/28')).rejects.toMatchObject({ code: 'InvalidParameterValue', retryable: false });
  });
});

describe('assertPrefixMask', () => {
  it.each([
    [4, 28, true],
    [6, 80, true],
    [4, 24, false],
    [4, 80, false],
    [6, 64, false],
    [6, 28, false],
  ] as const)('family %i mask /%i accepted: %s', (family, mask, ok) => {
    if (ok) expect(() => assertPrefixMask(family, mask)).not.toThrow();
    else expect(() => assertPrefixMask(family, mask)).toThrow(expect.objectContaining({ name: 'PrefixMaskError' }));
  });

  it('names the size EC2 delegates', () => {
    expect(() => assertPrefixMask(6, 64)).toThrow(/\/80/);
    expect(() => assertPrefixMask(4, 24)).toThrow(/\/28/);
  });
});

describe('allPages (the one EC2 paging loop)', () => {
  it('joins every page in order, sending each page its token', async () => {
    const pages: Record<string, { items: number[]; nextToken: string | undefined }> = {
      '': { items: [1, 2], nextToken: 't1' },
      t1: { items: [], nextToken: 't2' },
      t2: { items: [3], nextToken: '' },
    };
    const sent: Array<string | undefined> = [];
    const items = await allPages('DescribeThings', async (token) => {
      sent.push(token);
      const page = pages[token ?? ''];
      if (!page) throw new Error(`unknown token ${String(token)}`);
      return page;
    });
    expect(items).toEqual([1, 2, 3]);
    expect(sent).toEqual([undefined, 't1', 't2']);
  });

  it('stops with a retryable error when EC2 answers a token it gave before', async () => {
    let calls = 0;
    const error = await allPages('DescribeThings', async () => {
      calls += 1;
      return { items: [calls], nextToken: 'again' };
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PodrouteError);
    expect(error).toMatchObject({ retryable: true, message: 'EC2 DescribeThings returned the same NextToken twice' });
    expect(calls).toBe(2);
  });

  it('maps a failed page to a PodrouteError naming the operation, with its cause', async () => {
    const cause = Object.assign(new Error('slow down'), { name: 'RequestLimitExceeded', $metadata: { httpStatusCode: 503 } });
    const error = await allPages('DescribeThings', async () => {
      throw cause;
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PodrouteError);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).message).toContain('DescribeThings');
    expect((error as Error).cause).toBe(cause);
  });
});
