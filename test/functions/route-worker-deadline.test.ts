/**
 * Work past the worker's deadline is aborted, not abandoned (functions/route-worker.ts,
 * lib/util/abort-scope.ts): a Lambda sandbox frozen at the end of an invocation resumes its pending
 * callbacks when reused, so an SDK retry asleep at the deadline would send its write later. Here a
 * CreateRoute is throttled and the SDK sleeps 20 s before its retry; the handler's budget (3 s, far
 * more than the few local calls before the CreateRoute take) ends long before. The call must end at
 * the deadline and never reach EC2 again.
 */
import { CreateRouteCommand, EC2Client } from '@aws-sdk/client-ec2';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import type { Wiring } from '../../functions/wiring.ts';
import { Ec2RouteTables } from '../../lib/aws/ec2-route-tables.ts';
import { loadConfig } from '../../lib/config.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import type { RouteTables } from '../../lib/usecases/ports.ts';
import { abortable } from '../../lib/util/abort-scope.ts';
import { lambdaContext as localLambdaContext } from '../../infra/local/lambda-context.ts';
import { CLUSTER, RecordingQueue, credentials, sqsEvent, sqsRecord, startWorld, type World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

describe('route-worker handler: the deadline aborts what is still running', () => {
  let world: World;
  beforeEach(async () => {
    // One CreateRoute token, and the emulator's clock stands still: every later CreateRoute is throttled.
    world = await startWorld({ ec2: { throttle: { actions: { CreateRoute: { capacity: 1, refillPerSecond: 1 } } } } });
  });
  afterEach(async () => {
    await world.close();
  });

  it('a CreateRoute whose SDK retry sleeps past the deadline is aborted and never reaches EC2 again', async () => {
    const table = world.addClusterTable();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    // Spend the token.
    await world.ec2Client.send(new CreateRouteCommand({ RouteTableId: table, DestinationCidrBlock: '192.168.0.0/24', NetworkInterfaceId: a.eniId }));

    // As the wiring makes its clients (functions/wiring.ts): every call carries the batch's signal.
    const client = abortable(new EC2Client({ endpoint: world.ec2.url, region: 'us-east-1', credentials, retryStrategy: new ConfiguredRetryStrategy(3, () => 20_000) }));
    const adapter = new Ec2RouteTables(client, { clusterName: CLUSTER });
    const inflight: Array<Promise<unknown>> = [];
    const routeTables: RouteTables = {
      listRouteTables: () => adapter.listRouteTables(),
      createRoute: (spec) => {
        const call = adapter.createRoute(spec);
        inflight.push(call);
        return call;
      },
      replaceRoute: (spec) => adapter.replaceRoute(spec),
      deleteRoute: (spec) => adapter.deleteRoute(spec),
      describeRoute: (id, cidr) => adapter.describeRoute(id, cidr),
    };
    const config = loadConfig({ CLUSTER_NAME: CLUSTER, CLUSTER_CIDRS: '100.64.0.0/16', MAX_RECEIVE_COUNT: '5' });
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
    const handler = createRouteWorkerHandler(async () => wiring);
    const message: WorkMessage = { v: 1, kind: 'create', routeTableId: table, destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: a.instanceId };

    // 4.5 s left: the handler answers after 3 s, keeping a third back.
    const response = await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message), 1)), localLambdaContext('podroute-route-worker', { timeoutSeconds: 4.5 }));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(inflight).toHaveLength(1);
    const attemptsAtDeadline = world.ec2.stats.count('CreateRoute');

    // The call has ended (aborted, retryable: the queue delivers the message again) ...
    const [outcome] = await Promise.allSettled(inflight);
    expect(outcome?.status).toBe('rejected');
    expect(outcome?.status === 'rejected' ? outcome.reason : undefined).toMatchObject({ retryable: true, kind: 'aborted' });
    // ... without another attempt: EC2 saw the token's call and the one throttled attempt, nothing after.
    expect(world.ec2.stats.count('CreateRoute')).toBe(attemptsAtDeadline);
    expect(attemptsAtDeadline).toBe(2);
    expect(world.route(table, '100.64.1.0/24')).toBeUndefined();
    // Nothing is reported after the deadline: no node was told.
    expect(world.eventReasons('node-a')).toEqual([]);
  }, 60_000);
});
