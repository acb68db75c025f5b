/**
 * Observe mode (WRITES=off) as deployed: the handlers over `buildWiring` against the EC2 and
 * Kubernetes emulators, dynalite (the lease table) and fauxqs (the queue). Reconcile, an admission,
 * a worker delivery and a cloud event write nothing anywhere, and the drift reconcile reports is
 * what the dry run of the same state decides.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, EventBridgeEvent, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createCloudEventsHandler } from '../../functions/cloud-events.ts';
import { createNodeWebhookHandler } from '../../functions/node-webhook.ts';
import { createReconcileHandler } from '../../functions/reconcile.ts';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { buildWiring } from '../../functions/wiring.ts';
import type { LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { dryRunReconcile } from '../../lib/cli/dry-run.ts';
import { loadConfig } from '../../lib/config.ts';
import type { Config } from '../../lib/config.ts';
import { memoryLogger } from '../../lib/log.ts';
import { serializeWorkMessage, syncNodeMessage } from '../../lib/messages/work-message.ts';
import { driftOf } from '../../lib/usecases/observe.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { freshQueue, useLocalSqs } from '../support/local-sqs.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { CLUSTER, credentials, freshCidrTable, httpEvent, lambdaContext, sqsEvent, sqsRecord } from '../support/world.ts';
import type { World } from '../support/world.ts';

const WEBHOOK_SECRET = 'observe-webhook-secret-5d1e2c3b4a';

let world: World;
let local: LocalDynamo;
useWorldAndDynamo((parts) => ({ world, local } = parts));
let sqs: LocalSqs;
useLocalSqs((started) => (sqs = started));

const clientsOf = () => ({
  ec2: new EC2Client({ endpoint: world.ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 }),
  sqs: sqs.createClient('function'),
  dynamodb: local.client(),
});

/** Everything a run could write: the CIDR table's items, the queue's counts, EC2 and Kubernetes writes. */
async function stateOf(config: Config): Promise<string> {
  const items = await local.client().send(new ScanCommand({ TableName: config.cidrTableName }));
  const queue = await sqs.createClient('probe').send(
    new GetQueueAttributesCommand({ QueueUrl: config.queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }),
  );
  const rows = (items.Items ?? []).map((item) => JSON.stringify(item)).sort();
  return JSON.stringify({ rows, queue: queue.Attributes, ec2Writes: world.ec2Writes(), kubeWrites: world.kubeWrites() });
}

/** Drift to show: a route to create, one to delete, a node to allocate and patch, a lease to adopt. */
async function driftingCluster(): Promise<{ config: Config }> {
  const queueUrl = await freshQueue(sqs, 'podroute-observe');
  const config = loadConfig({ CLUSTER_NAME: CLUSTER, CLUSTER_CIDRS: '100.64.0.0/16', CIDR_TABLE_NAME: await freshCidrTable(local.client()), QUEUE_URL: queueUrl });
  const setup = await buildWiring(config, clientsOf(), world.nodes, async () => 'unused', { log: memoryLogger(), now: world.clock.now });
  const [set] = setup.cidrSets;
  if (!set) throw new Error('no CIDR set');
  const table = world.addClusterTable();
  const ready = await world.addNode('ready', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
  await set.occupy('100.64.1.0/24', 'ready');
  await world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.1.0/24', instanceId: ready.instanceId });
  await world.addNode('unrouted', { podCidrs: ['100.64.2.0/24'] });
  await set.occupy('100.64.2.0/24', 'unrouted');
  await world.addNode('fresh');
  await world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.9.0/24', instanceId: world.ec2.state.addInstance().id });
  return { config };
}

/** The observe-mode wiring of the same cluster: the deployed one with WRITES=off. */
async function observing(config: Config) {
  const log = memoryLogger();
  const observe = loadConfig({ CLUSTER_NAME: CLUSTER, CLUSTER_CIDRS: config.clusterCidrs.join(','), CIDR_TABLE_NAME: config.cidrTableName, QUEUE_URL: config.queueUrl, WRITES: 'off' });
  const wiring = await buildWiring(observe, clientsOf(), world.nodes, async () => WEBHOOK_SECRET, { log, now: world.clock.now });
  return { wiring, log };
}

const metricOf = (lines: ReadonlyArray<Record<string, unknown>>, name: string): unknown[] => lines.filter((line) => name in line && '_aws' in line).map((line) => line[name]);

describe('observe mode (WRITES=off)', () => {
  it('reconcile writes nothing and reports as drift what the dry run decides', async () => {
    const { config } = await driftingCluster();
    world.resetStats();
    const before = await stateOf(config);
    const dry = await dryRunReconcile(config, clientsOf(), world.nodes, { now: world.clock.now });
    const { wiring, log } = await observing(config);

    const result = await createReconcileHandler(async () => wiring)({} as ScheduledEvent, lambdaContext('podroute-reconcile'));

    expect(await stateOf(config)).toBe(before);
    expect(result.messagesSent).toBe(0);
    const drift = driftOf(dry);
    // The cluster drifts in every way the metrics count: unrouted's route to create, the stray route
    // to delete, fresh's block to allocate; two nodes to patch (fresh's pod CIDR, unrouted marked
    // NetworkUnavailable until its route is made); three messages (the create, the delete, fresh's sync-node).
    expect(drift).toEqual({ routesCreate: 1, routesReplace: 0, routesDelete: 1, routesWithheld: 0, nodesPatch: 2, leasesWrite: 1, messages: 3 });
    const line = log.lines.find((l) => l.event === 'observe.drift');
    expect(line).toMatchObject({ ...drift });
    expect({
      create: metricOf(log.lines, 'DriftRoutesCreate'),
      replace: metricOf(log.lines, 'DriftRoutesReplace'),
      delete: metricOf(log.lines, 'DriftRoutesDelete'),
      nodes: metricOf(log.lines, 'DriftNodesPatch'),
      leases: metricOf(log.lines, 'DriftLeasesWrite'),
    }).toEqual({ create: [drift.routesCreate], replace: [drift.routesReplace], delete: [drift.routesDelete], nodes: [drift.nodesPatch], leases: [drift.leasesWrite] });
    // No write even reached a client to be refused there.
    expect(metricOf(log.lines, 'WritesRefused')).toEqual([]);
  });

  it('the webhook allows a joining node untouched: no patch, no lease, no message', async () => {
    const { config } = await driftingCluster();
    const { wiring, log } = await observing(config);
    world.resetStats();
    const before = await stateOf(config);
    const instance = world.ec2.state.addInstance();
    const uid = '7a1d0c2e-0000-4000-8000-0000000000a1';
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: '', version: 'v1', kind: 'Node' },
        resource: { group: '', version: 'v1', resource: 'nodes' },
        name: 'joining',
        operation: 'CREATE',
        userInfo: { username: 'system:node:joining', groups: ['system:nodes'] },
        object: world.nodeObject('joining', instance.id),
        oldObject: null,
      },
    });

    const answer = (await createNodeWebhookHandler(async () => wiring)(httpEvent({ body, token: WEBHOOK_SECRET }), lambdaContext('node-webhook'))) as APIGatewayProxyStructuredResultV2;

    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body ?? 'null')).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } });
    expect(await stateOf(config)).toBe(before);
    expect(log.lines.filter((l) => l.event === 'webhook.observed')).toMatchObject([{ correlationId: uid, node: 'joining', operation: 'CREATE' }]);
  });

  it('the worker acknowledges a queued message without acting on it, and a cloud event queues nothing', async () => {
    const { config } = await driftingCluster();
    const { wiring } = await observing(config);
    world.resetStats();
    const before = await stateOf(config);

    const batch = await createRouteWorkerHandler(async () => wiring)(sqsEvent(sqsRecord('m1', serializeWorkMessage(syncNodeMessage('unrouted')))), lambdaContext('route-worker'));
    const event = {
      version: '0', id: 'e1', 'detail-type': 'EC2 Instance State-change Notification', source: 'aws.ec2', account: '000000000000',
      time: new Date(world.clock.now()).toISOString(), region: 'us-east-1', resources: [], detail: { 'instance-id': 'i-0123456789abcdef0', state: 'terminated' },
    } as EventBridgeEvent<string, unknown>;
    const cloud = await createCloudEventsHandler(async () => wiring, [])(event, lambdaContext('cloud-events'));

    expect(batch).toEqual({ batchItemFailures: [] });
    expect(cloud).toEqual({ status: 'ignored:observe', messages: 0 });
    expect(await stateOf(config)).toBe(before);
  });
});
