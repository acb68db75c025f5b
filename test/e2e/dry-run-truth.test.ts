/**
 * The dry run is the truth: `podroute reconcile --dry-run`'s run (lib/cli/dry-run.ts, the deployed
 * wiring over read-only clients) and then the reconcile handler as deployed, on the same state of
 * the EC2 and Kubernetes emulators, dynalite (the lease table) and fauxqs (the queue). The dry run's
 * planned messages and withheld operations are what the function then sends and withholds, its node
 * sync plan is what the function's node sync does, the conditions and lease releases it plans are
 * the ones the function writes, and the dry run writes nothing anywhere.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createReconcileHandler } from '../../functions/reconcile.ts';
import { buildWiring } from '../../functions/wiring.ts';
import type { Wiring } from '../../functions/wiring.ts';
import type { LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { containsCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import { dryRunReconcile } from '../../lib/cli/dry-run.ts';
import { loadConfig } from '../../lib/config.ts';
import type { Config } from '../../lib/config.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { serializeWorkMessage, syncNodeMessage } from '../../lib/messages/work-message.ts';
import { formatFullMark, ROUTE_TABLE_FULL_TAG } from '../../lib/routes/table-full.ts';
import type { ReconcileReport } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { freshQueue, useLocalSqs } from '../support/local-sqs.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { CLUSTER, CLUSTER_TAG, credentials, freshCidrTable, lambdaContext } from '../support/world.ts';
import type { World } from '../support/world.ts';

let world: World;
let local: LocalDynamo;
useWorldAndDynamo((parts) => ({ world, local } = parts));
let sqs: LocalSqs;
useLocalSqs((started) => (sqs = started));

/** The deployed wiring of `env` over the emulators; every message the function sends is recorded. */
async function deployed(env: Record<string, string>): Promise<{ config: Config; wiring: Wiring; sent: WorkMessage[] }> {
  const queueUrl = await freshQueue(sqs, 'podroute-dry-run');
  const config = loadConfig({ CLUSTER_NAME: CLUSTER, CIDR_TABLE_NAME: await freshCidrTable(local.client()), QUEUE_URL: queueUrl, ...env });
  const base = await buildWiring(config, { ec2: world.ec2Client, sqs: sqs.createClient('function'), dynamodb: local.client() }, world.nodes, async () => 'unused', {
    log: memoryLogger(),
    now: world.clock.now,
  });
  const sent: WorkMessage[] = [];
  const queue = base.queue;
  const wiring: Wiring = {
    ...base,
    queue: {
      send: (messages, options) => {
        sent.push(...messages);
        return queue.send(messages, options);
      },
      ...(queue.backlog ? { backlog: queue.backlog.bind(queue) } : {}),
    },
  };
  return { config, wiring, sent };
}

/** Everything the dry run could write: the CIDR table's items, the queue's counts, EC2 and Kubernetes writes. */
async function stateOf(config: Config): Promise<string> {
  const items = await local.client().send(new ScanCommand({ TableName: config.cidrTableName }));
  const queue = await sqs.createClient('probe').send(
    new GetQueueAttributesCommand({ QueueUrl: config.queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  const rows = (items.Items ?? []).map((item) => JSON.stringify(item)).sort();
  return JSON.stringify({ rows, queue: queue.Attributes, ec2Writes: world.ec2Writes(), kubeWrites: world.kubeWrites() });
}

/** The dry run over clients of its own, then the reconcile handler over the deployed wiring, on the same state. */
async function dryRunThenFunction(config: Config, wiring: Wiring) {
  world.resetStats();
  const before = await stateOf(config);
  const clients = {
    ec2: new EC2Client({ endpoint: world.ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 }),
    sqs: sqs.createClient('dry-run'),
    dynamodb: local.client(),
  };
  const dry = await dryRunReconcile(config, clients, world.nodes, { now: world.clock.now });
  const after = await stateOf(config);
  const result = await createReconcileHandler(async () => wiring)({} as ScheduledEvent, lambdaContext('podroute-reconcile'));
  return { dry, before, after, result };
}

/** A route operation as `kind table destination`. */
const opKey = (kind: string, op: { routeTableId: string; destinationCidr: string }) => `${kind} ${op.routeTableId} ${op.destinationCidr}`;
const sentOps = (sent: readonly WorkMessage[]) => sent.flatMap((m) => (m.kind === 'create' || m.kind === 'replace' || m.kind === 'delete' ? [opKey(m.kind, m)] : []));

/** Each node's NetworkUnavailable status, as stored. */
const conditionsOf = (nodes: readonly string[]): Record<string, string | null> => Object.fromEntries(nodes.map((node) => [node, world.networkUnavailable(node)]));

const kinds = (dry: ReconcileReport, node: string) => dry.planned?.nodeSync.find((p) => p.node === node)?.actions.map((a) => a.kind);

describe('reconcile --dry-run against the function, routes mode', () => {
  async function routesWorld(backlog: number) {
    const { config, wiring, sent } = await deployed({ CLUSTER_CIDRS: '100.64.0.0/16' });
    const [set] = wiring.cidrSets;
    if (!set) throw new Error('no CIDR set');
    // A departed node's lease, older than the grace: a keyed 404 lets reclaim release it.
    await set.occupy('100.64.20.0/24', 'departed');
    world.clock.advance(config.leaseGraceSeconds * 1000 + 1);
    const open = world.addClusterTable();
    // A full table: its mark (younger than the re-probe interval) withholds every create to it.
    const full = world.ec2.state.addRouteTable({ tags: { [CLUSTER_TAG]: 'owned', [ROUTE_TABLE_FULL_TAG]: formatFullMark({ routeCount: 0, at: world.clock.now() }) } }).id;
    const ready = await world.addNode('ready', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'False' });
    await world.addNode('mover', { podCidrs: ['100.64.3.0/24'] });
    await world.addNode('fresh');
    for (const [node, cidr] of [['ready', '100.64.1.0/24'], ['mover', '100.64.3.0/24'], ['joining', '100.64.2.0/24']] as const) await set.occupy(cidr, node);
    await world.ec2.state.addRoute({ routeTableId: open, destinationCidr: '100.64.1.0/24', instanceId: ready.instanceId });
    // A young lease: its node is being admitted (not stored yet), its route is there already.
    await world.ec2.state.addRoute({ routeTableId: open, destinationCidr: '100.64.2.0/24', instanceId: world.ec2.state.addInstance().id });
    // Six routes nobody leases or holds: unconfirmed deletions, more than the guard lets go at once.
    for (let i = 10; i < 16; i++) await world.ec2.state.addRoute({ routeTableId: open, destinationCidr: `100.64.${i}.0/24`, instanceId: world.ec2.state.addInstance().id });
    const client = sqs.createClient('earlier-tick');
    for (let i = 0; i < backlog; i++) await client.send(new SendMessageCommand({ QueueUrl: config.queueUrl, MessageBody: serializeWorkMessage(syncNodeMessage(`earlier-${i}`)) }));
    return { config, wiring, sent, open, full, set };
  }

  it.each([
    ['an empty queue', 0, ['lease-young', 'route-table-full', 'mass-deletion-guard']],
    ['a backlog of an earlier tick', 20, ['lease-young', 'route-table-full', 'mass-deletion-guard', 'backlog']],
  ])('with %s: the dry run plans what the function sends and withholds, and writes nothing', async (_what, backlog, reasons) => {
    const { config, wiring, sent, open, set } = await routesWorld(backlog);

    const conditionsBefore = conditionsOf(['ready', 'mover', 'fresh']);
    const { dry, before, after, result } = await dryRunThenFunction(config, wiring);
    expect(after).toBe(before);
    expect(dry.errors).toEqual([]);
    // The conditions it plans to write are the ones the function changed; the leases it plans to release, the ones released.
    const changed = Object.entries(conditionsOf(['ready', 'mover', 'fresh'])).filter(([node, value]) => conditionsBefore[node] !== value);
    expect(dry.planned?.conditions.map((c) => [c.node, c.networkUnavailable ? 'True' : 'False']).sort()).toEqual(changed.sort());
    expect(changed.map(([node]) => node)).toContain('mover');
    expect(dry.planned?.reclaim).toEqual([{ cidr: '100.64.20.0/24', owner: 'departed' }]);
    expect(result.reclaimed).toBe(1);
    expect((await set.leases()).map((l) => l.owner)).not.toContain('departed');
    // What the dry run plans to send is what the function sent, message for message.
    expect(dry.planned?.messages).toEqual(sent);
    expect(sent.filter((m) => m.kind === 'sync-node')).toEqual([syncNodeMessage('fresh')]);
    expect(sentOps(sent)).toEqual(backlog > 0 ? [] : [opKey('create', { routeTableId: open, destinationCidr: '100.64.3.0/24' })]);
    // What it withholds, the function did not send; and every operation it planned was sent or withheld.
    expect([...new Set(dry.withheld.map((w) => w.why))].sort()).toEqual([...reasons].sort());
    const withheld = dry.withheld.map((w) => opKey(w.kind, w));
    expect(withheld.filter((key) => sentOps(sent).includes(key))).toEqual([]);
    const planned = [...dry.plan.create.map((op) => opKey('create', op)), ...dry.plan.replace.map((op) => opKey('replace', op)), ...dry.plan.delete.map((op) => opKey('delete', op))];
    expect(planned.filter((key) => !withheld.includes(key) && !sentOps(sent).includes(key))).toEqual([]);
    expect({ unsafe: dry.plan.unsafe ?? null, deferred: dry.messagesDeferred, create: dry.plan.create.length, delete: dry.plan.delete.length }).toEqual({
      unsafe: result.unsafe,
      deferred: result.messagesDeferred,
      create: result.create,
      delete: result.delete,
    });
    // Node sync: the decider's actions for the new node, which the function then applied.
    expect(kinds(dry, 'fresh')).toEqual(['allocate', 'addAlias', 'patchPodCidrs', 'setNetworkUnavailable']);
    expect([result.allocated, world.podCidrs('fresh').length]).toEqual([1, 1]);
  });
});

describe('reconcile --dry-run against the function, node sync branches', () => {
  /** The dry run, then the function; the dry run's allocated nodes, errors, conditions and messages are the function's. */
  async function compare(config: Config, wiring: Wiring, sent: readonly WorkMessage[], nodes: readonly string[]) {
    const conditionsBefore = conditionsOf(nodes);
    const { dry, before, after, result } = await dryRunThenFunction(config, wiring);
    expect(after).toBe(before);
    const changed = Object.entries(conditionsOf(nodes)).filter(([node, value]) => conditionsBefore[node] !== value);
    expect(dry.planned?.conditions.map((c) => [c.node, c.networkUnavailable ? 'True' : 'False']).sort()).toEqual(changed.sort());
    expect(dry.planned?.messages).toEqual(sent);
    expect([dry.allocated.length, dry.errors.length]).toEqual([result.allocated, result.errors]);
    return dry;
  }

  it('SyncFromCloud: a node the tables already route to is synced from its route, and the dry run counts it as the function does', async () => {
    const { config, wiring, sent } = await deployed({ CLUSTER_CIDRS: '100.64.0.0/16', NODE_SYNC_MODE: 'SyncFromCloud' });
    const table = world.addClusterTable();
    const cloudy = await world.addNode('cloudy');
    await world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.5.0/24', instanceId: cloudy.instanceId });

    const dry = await compare(config, wiring, sent, ['cloudy']);
    expect(kinds(dry, 'cloudy')).toEqual(['occupy', 'patchPodCidrs', 'setNetworkUnavailable']);
    expect([dry.allocated, dry.errors]).toEqual([['cloudy'], []]);
    expect(world.podCidrs('cloudy')).toEqual(['100.64.5.0/24']);
  });

  it('FULL: a new node in a cluster CIDR without a free block fails its node sync in the dry run as in the function', async () => {
    const { config, wiring, sent } = await deployed({ CLUSTER_CIDRS: '100.64.0.0/23' });
    const [set] = wiring.cidrSets;
    if (!set) throw new Error('no CIDR set');
    const table = world.addClusterTable();
    for (const [name, cidr] of [['a', '100.64.0.0/24'], ['b', '100.64.1.0/24']] as const) {
      const node = await world.addNode(name, { podCidrs: [cidr], networkUnavailable: 'False' });
      await set.occupy(cidr, name);
      await world.ec2.state.addRoute({ routeTableId: table, destinationCidr: cidr, instanceId: node.instanceId });
    }
    await world.addNode('late');

    const dry = await compare(config, wiring, sent, ['a', 'b', 'late']);
    expect(dry.allocated).toEqual([]);
    expect(dry.errors).toEqual([{ node: 'late', step: 'node-sync', message: 'no free /24 block left in cluster CIDR 100.64.0.0/23 (2 in all)' }]);
    expect(dry.planned?.conditions).toEqual([{ node: 'late', networkUnavailable: true }]);
    expect(world.podCidrs('late')).toEqual([]);
  });
});

describe('reconcile --dry-run against the function, prefixes mode', () => {
  it('plans the node syncs the function then does (and the refusal of a subnet without a pod range), and writes nothing', async () => {
    const { config, wiring, sent } = await deployed({ MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16' });
    const vpc = world.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16' });
    const served = world.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-east-1a' });
    const reservation = world.ec2.state.createReservation({ subnetId: served.id, cidr: '10.0.8.0/22', type: 'explicit', description: 'podroute' }).cidr;
    const bare = world.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.16.0/20', availabilityZone: 'us-east-1b' });
    for (const name of ['p1', 'p2']) await world.addNode(name, { instance: world.ec2.state.addInstance({ subnetId: served.id }) });
    await world.addNode('p3', { instance: world.ec2.state.addInstance({ subnetId: bare.id }) });

    const { dry, before, after, result } = await dryRunThenFunction(config, wiring);
    expect(after).toBe(before);
    expect(dry.errors).toEqual([]);
    expect(dry.planned?.nodeSync.map((p) => [p.node, p.outcome, p.actions.map((a) => a.kind)])).toEqual([
      ['p1', 'sync', ['allocate', 'addAlias', 'patchPodCidrs', 'setNetworkUnavailable']],
      ['p2', 'sync', ['allocate', 'addAlias', 'patchPodCidrs', 'setNetworkUnavailable']],
      ['p3', 'no-reservation', []],
    ]);
    expect(dry.planned?.messages).toEqual(sent);
    expect(sent).toEqual([]);
    // The function synced exactly the nodes the dry run planned to, each a block of its pod range.
    expect([result.allocated, result.errors]).toEqual([2, 0]);
    for (const name of ['p1', 'p2']) expect(world.podCidrs(name).map((cidr) => containsCidr(parseCidr(reservation), parseCidr(cidr)))).toEqual([true]);
    expect(world.podCidrs('p3')).toEqual([]);
    expect(world.networkUnavailable('p3')).toBe('True');
  });
});
