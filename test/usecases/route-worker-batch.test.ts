/**
 * One route-table listing per SQS batch (issue 9): the handler (functions/route-worker.ts) lists the
 * cluster's tables once and every message of the batch decides on that listing, kept current with
 * the batch's own writes. What the listing cannot vouch for is re-read from EC2 before acting.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import type { Wiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { PodrouteError } from '../../lib/errors.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import type { RouteTables } from '../../lib/usecases/ports.ts';
import { RecordingQueue, lambdaContext, sqsEvent, sqsRecord, startWorld, type World, type WorldNode } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const CLUSTER_CIDRS = ['100.64.0.0/16'];

const body = (message: WorkMessage): string => JSON.stringify(message);
const create = (routeTableId: string, destinationCidr: string, node: WorldNode): string =>
  body({ v: 1, kind: 'create', routeTableId, destinationCidr, node: node.name, instanceId: node.instanceId });
const replace = (routeTableId: string, destinationCidr: string, node: WorldNode, reason: 'blackhole' | 'moved'): string =>
  body({ v: 1, kind: 'replace', routeTableId, destinationCidr, node: node.name, instanceId: node.instanceId, reason });

function handlerFor(world: World, routeTables: RouteTables = world.routeTables) {
  const config = loadConfig({ CLUSTER_NAME: 'alpha', CLUSTER_CIDRS: CLUSTER_CIDRS.join(','), MAX_RECEIVE_COUNT: '3' });
  const log = memoryLogger();
  const wiring: Wiring = {
    config,
    routeTables,
    routeTargets: world.routeTargets,
    prefixes: world.prefixes,
    nodes: world.nodes,
    queue: new RecordingQueue(),
    cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets),
    webhookSecret: async () => 'unused',
    log,
    now: world.clock.now,
  };
  return { handler: createRouteWorkerHandler(async () => wiring), log };
}

describe('route-worker handler: one listing per batch', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it('a batch of 10 create messages lists the route tables once and routes every node', async () => {
    const t1 = world.addClusterTable();
    const nodes: WorldNode[] = [];
    for (let i = 1; i <= 10; i++) nodes.push(await world.addNode(`node-${i}`, { podCidrs: [`100.64.${i}.0/24`], networkUnavailable: 'True' }));
    world.resetStats();
    const { handler } = handlerFor(world);

    const records = nodes.map((node, i) => sqsRecord(`m${i}`, create(t1, `100.64.${i + 1}.0/24`, node)));
    expect(await handler(sqsEvent(...records), lambdaContext())).toEqual({ batchItemFailures: [] });

    expect(world.ec2.stats.count('DescribeRouteTables')).toBe(1);
    expect(world.ec2.stats.count('CreateRoute')).toBe(10);
    expect(world.routeSummary(t1)).toEqual(nodes.map((node, i) => `100.64.${i + 1}.0/24 -> ${node.instanceId}`).sort());
    for (const node of nodes) expect(world.networkUnavailable(node.name)).toBe('False');
  });

  it('two messages of one batch that each make one of a node’s two routes settle its condition between them', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    world.resetStats();
    const { handler } = handlerFor(world);

    const result = await handler(sqsEvent(sqsRecord('m1', create(t1, '100.64.1.0/24', a)), sqsRecord('m2', create(t2, '100.64.1.0/24', a))), lambdaContext());
    expect(result).toEqual({ batchItemFailures: [] });
    expect(world.ec2.stats.count('DescribeRouteTables')).toBe(1);
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.routeSummary(t2)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(1);
  });

  it('each invocation lists afresh: the next batch sees what changed since', async () => {
    const t1 = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const { handler } = handlerFor(world);
    expect(await handler(sqsEvent(sqsRecord('m1', create(t1, '100.64.1.0/24', a))), lambdaContext())).toEqual({ batchItemFailures: [] });
    // Someone else points the route elsewhere between the batches.
    const other = world.ec2.state.addInstance();
    world.ec2.state.replaceRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', networkInterfaceId: world.ec2.state.primaryInterface(other.id)?.id ?? '' });
    world.resetStats();

    // Reconcile's replace of the moved route names the instance it found there.
    const moved = JSON.stringify({ v: 2, kind: 'replace', routeTableId: t1, destinationCidr: '100.64.1.0/24', node: a.name, instanceId: a.instanceId, reason: 'moved', expect: { instanceId: other.id } });
    expect(await handler(sqsEvent(sqsRecord('m2', moved)), lambdaContext())).toEqual({ batchItemFailures: [] });
    expect(world.ec2.stats.count('DescribeRouteTables')).toBeGreaterThanOrEqual(1);
    expect(world.ec2.stats.count('ReplaceRoute')).toBe(1);
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`]);
  });

  it('re-reads a route before replacing it: a listing that is stale never overwrites a gateway route', async () => {
    const t1 = world.addClusterTable();
    const gone = world.ec2.state.addInstance();
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', networkInterfaceId: world.ec2.state.primaryInterface(gone.id)?.id ?? '' });
    world.ec2.state.terminateInstance(gone.id);
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    // The batch's listing still shows the blackhole; since then, an operator routed the CIDR to a gateway.
    const stale = await world.routeTables.listRouteTables();
    const igw = world.ec2.state.addGateway();
    world.ec2.state.replaceRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', gatewayId: igw });
    const inner = world.routeTables;
    const routeTables: RouteTables = {
      listRouteTables: async () => stale,
      createRoute: (spec) => inner.createRoute(spec),
      replaceRoute: (spec) => inner.replaceRoute(spec),
      deleteRoute: (spec) => inner.deleteRoute(spec),
      describeRoute: (id, cidr) => inner.describeRoute(id, cidr),
    };
    world.resetStats();
    const { handler, log } = handlerFor(world, routeTables);

    expect(await handler(sqsEvent(sqsRecord('m1', replace(t1, '100.64.1.0/24', a, 'blackhole'))), lambdaContext())).toEqual({ batchItemFailures: [] });
    expect(world.ec2.stats.count('ReplaceRoute')).toBe(0);
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${igw}`]);
    expect(log.lines.find((l) => l.event === 'message.failed')).toMatchObject({ retryable: false, outcome: 'failed' });
  });

  it('a mixed batch lists once, and a batch of deletes lists once too (a delete acts only in a listed, tagged table, on the route it re-reads)', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    const b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'], networkUnavailable: 'True' });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', networkInterfaceId: a.eniId });
    let listings = 0;
    const inner = world.routeTables;
    const routeTables: RouteTables = {
      listRouteTables: () => {
        listings += 1;
        return inner.listRouteTables();
      },
      createRoute: (spec) => inner.createRoute(spec),
      replaceRoute: (spec) => inner.replaceRoute(spec),
      deleteRoute: (spec) => inner.deleteRoute(spec),
      describeRoute: (id, cidr) => inner.describeRoute(id, cidr),
    };
    const { handler } = handlerFor(world, routeTables);
    const del = (cidr: string) => body({ v: 1, kind: 'delete', routeTableId: t1, destinationCidr: cidr, reason: 'no-owner', expect: { instanceId: a.instanceId, blackhole: false } });

    const mixed = sqsEvent(
      sqsRecord('sync-a', body({ v: 1, kind: 'sync-node', node: 'node-a' })),
      sqsRecord('create-b1', create(t1, '100.64.2.0/24', b)),
      sqsRecord('create-b2', create(t2, '100.64.2.0/24', b)),
      sqsRecord('delete', del('100.64.9.0/24')),
    );
    expect(await handler(mixed, lambdaContext())).toEqual({ batchItemFailures: [] });
    expect(listings).toBe(1);
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`, `100.64.2.0/24 -> ${b.instanceId}`]);
    expect(world.routeSummary(t2)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`, `100.64.2.0/24 -> ${b.instanceId}`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(world.networkUnavailable('node-b')).toBe('False');

    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.8.0/24', networkInterfaceId: a.eniId });
    expect(await handler(sqsEvent(sqsRecord('d1', del('100.64.8.0/24')), sqsRecord('d2', del('100.64.7.0/24'))), lambdaContext())).toEqual({ batchItemFailures: [] });
    expect(listings).toBe(2);
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`, `100.64.2.0/24 -> ${b.instanceId}`]);
  });

  it('a throttled listing is tried once per batch: every message that needs it comes back, none reported', async () => {
    const t1 = world.addClusterTable();
    const nodes: WorldNode[] = [];
    for (let i = 1; i <= 3; i++) nodes.push(await world.addNode(`node-${i}`, { podCidrs: [`100.64.${i}.0/24`], networkUnavailable: 'True' }));
    let listings = 0;
    const inner = world.routeTables;
    const routeTables: RouteTables = {
      listRouteTables: async () => {
        listings += 1;
        throw new PodrouteError('EC2 DescribeRouteTables: RequestLimitExceeded (retryable)', { retryable: true });
      },
      createRoute: (spec) => inner.createRoute(spec),
      replaceRoute: (spec) => inner.replaceRoute(spec),
      deleteRoute: (spec) => inner.deleteRoute(spec),
      describeRoute: (id, cidr) => inner.describeRoute(id, cidr),
    };
    const { handler } = handlerFor(world, routeTables);
    const records = nodes.map((node, i) => sqsRecord(`m${i}`, create(t1, `100.64.${i + 1}.0/24`, node)));
    expect(await handler(sqsEvent(...records), lambdaContext())).toEqual({ batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) });
    expect(listings).toBe(1);
    expect(world.routeSummary(t1)).toEqual([]);
    for (const node of nodes) expect(world.eventReasons(node.name)).toEqual([]);
  });
});
