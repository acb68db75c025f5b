/**
 * Steady state: a cluster already converged (N kubelet-sized nodes, their routes, leases and
 * conditions in place), then one reconcile: how many EC2, Kubernetes, DynamoDB and SQS calls it
 * makes, its wall time and the log bytes it writes. The goal is no writes at all and reads in
 * O(pages). Then what the cost model needs on top (bench/cost.ts): what a few joins cost (webhook and
 * worker time, DynamoDB writes, SQS requests, log bytes), and what the idle queue's pollers cost,
 * each counted in the sandbox.
 */
import { performance } from 'node:perf_hooks';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_SOURCE_CALLER, PRODUCTION_CALLERS, startSandbox } from '../infra/local/sandbox/index.ts';
import type { Sandbox } from '../infra/local/sandbox/index.ts';
import { kubeletNode } from '../infra/local/kube/kubelet-node.ts';
import { networkUnavailableOf, parseNode } from '../lib/nodes/node.ts';
import { mapSettled } from '../lib/util/concurrency.ts';
import { round } from './stats.ts';

export interface SteadyStateRun {
  nodes: number;
  /** Mean JSON bytes of a seeded Node: shaped as the kubelet registers it (infra/local/kube/kubelet-node.ts). */
  nodeBytes: number;
  routes: number;
  reconcileMs: number;
  ec2Calls: Record<string, number>;
  kubeCalls: Record<string, number>;
  dynamodbCalls: Record<string, number>;
  dynamodbWrites: number;
  /**
   * Read units to read every item of the CIDR table once, strongly consistent, as the local DynamoDB
   * counts them (a Scan with ReturnConsumedCapacity): the item bytes the reconcile's lease Queries read.
   */
  leaseReadUnits: number;
  /** SQS requests of the steady reconcile, per action. */
  sqsCalls: Record<string, number>;
  /** The same, as billed (a payload over 64 KB counts once per 64 KB chunk). */
  reconcileSqsRequests: number;
  messagesSent: number;
  /** Bytes of the log lines the steady reconcile wrote at production's level (info and up, metric lines included). */
  reconcileLogBytes: number;
  /** Distinct CloudWatch metrics (name and dimension values) the steady reconcile's metric lines publish. */
  reconcileMetrics: number;
  /** The worker's event source at rest, over a measured window: its pollers' receives. */
  idle: IdlePolling;
  /** What one more node joining costs on top (for the cost model), averaged over a few joins. */
  perJoin: PerJoin;
}

export interface IdlePolling {
  windowMs: number;
  /** Pollers the event source runs (its maximumConcurrency). */
  pollers: number;
  /** The long-poll wait of each receive in the sandbox. */
  waitTimeSeconds: number;
  receives: number;
  emptyReceives: number;
  /** receives / (pollers x window / wait): 1 when each poller asks once per wait. */
  receivesPerPollerPerWait: number;
}

export interface PerJoin {
  workerInvocations: number;
  workerMs: number;
  webhookMs: number;
  dynamodbWrites: number;
  /** SQS requests as billed (sends, receives that returned messages, deletes, visibility changes), empty receives left out: the idle pollers make those anyway. */
  sqsRequests: number;
  /** Log bytes the webhook and the worker wrote at production's level. */
  logBytes: number;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
/** Idle long-poll waits measured. */
const IDLE_WAITS = 10;
const JOINS = 5;

export async function steadyStateOnce(nodes: number): Promise<SteadyStateRun> {
  // Building the cluster is not what is measured: no throttling, a table quota that fits it (AWS
  // caps a table at 1,000 routes; 5,000 nodes in routes mode is a scaling probe of reconcile itself).
  const sandbox = await startSandbox({ nodes: 0, routeTables: 1, routeLimit: nodes + 20, throttle: false, tickMs: 0 });
  try {
    // The converged cluster is written straight into the stand-ins (what joins and the worker would
    // have left): per node an instance, a lease, a kubelet-shaped Node with its pod CIDR and
    // NetworkUnavailable=False, and its route. Only the reconcile after that is measured.
    const [set] = sandbox.wirings.reconcile.cidrSets;
    const [tableId] = sandbox.routeTableIds;
    if (!set || !tableId) throw new Error('the sandbox has no CIDR set or route table');
    let nodeBytes = 0;
    await mapSettled(
      Array.from({ length: nodes }, (_, i) => `ip-10-2-${Math.floor(i / 250)}-${i % 250}.ec2.internal`),
      20,
      async (name, i) => {
        const instance = sandbox.ec2.state.addInstance({ sourceDestCheck: false });
        const podCidr = await set.allocateNext(name);
        sandbox.ec2.state.addRoute({ routeTableId: tableId, destinationCidr: podCidr, instanceId: instance.id });
        const node = kubeletNode({
          name,
          instanceId: instance.id,
          zone: instance.availabilityZone,
          privateIp: instance.privateIpAddress,
          privateDnsName: instance.privateDnsName,
          podCidrs: [podCidr],
          networkUnavailable: 'False',
          index: i,
        });
        nodeBytes += Buffer.byteLength(JSON.stringify(node));
        await sandbox.kube.state.addNode(node, { admit: false });
        return i;
      },
    );
    await sandbox.tick(); // a first reconcile over the seeded state (it should find nothing to do)

    sandbox.db.stats.reset();
    sandbox.ec2.stats.reset();
    sandbox.kube.stats.reset();
    sandbox.queue.sqs.stats.reset();
    const reconcileLog = sandbox.logLines.length;
    const started = performance.now();
    const result = await sandbox.tick();
    const reconcileMs = performance.now() - started;
    const steady = {
      ec2Calls: { ...sandbox.ec2.stats.calls },
      kubeCalls: sandbox.kube.stats.all(),
      dynamodbCalls: { ...sandbox.db.stats.calls },
      // Only the reconcile's own client: the idle pollers' receives are counted below.
      sqsCalls: sandbox.queue.sqs.stats.total(['reconcile']).calls,
      reconcileSqsRequests: sandbox.queue.sqs.stats.total(['reconcile']).billedRequests,
      reconcileLogBytes: logBytes(sandbox.logLines.slice(reconcileLog)),
      reconcileMetrics: metricStreams(sandbox.logLines.slice(reconcileLog)),
    };

    const leaseReadUnits = await tableReadUnits(sandbox);
    const perJoin = await measureJoins(sandbox);
    const idle = await measureIdle(sandbox);
    return {
      nodes,
      nodeBytes: nodes > 0 ? Math.round(nodeBytes / nodes) : 0,
      routes: nodes,
      reconcileMs: Math.round(reconcileMs),
      ...steady,
      dynamodbWrites: Object.entries(steady.dynamodbCalls).filter(([name]) => WRITES.has(name)).reduce((sum, [, n]) => sum + n, 0),
      messagesSent: result.messagesSent,
      leaseReadUnits,
      idle,
      perJoin,
    };
  } finally {
    await sandbox.stop();
  }
}

/**
 * A few joins through the webhook, each node made ready by the webhook and the worker alone (no
 * reconcile runs meanwhile): webhook time, worker invocations and their time, DynamoDB writes, SQS
 * requests and log bytes, per join.
 */
async function measureJoins(sandbox: Sandbox): Promise<PerJoin> {
  sandbox.db.stats.reset();
  sandbox.queue.sqs.stats.reset();
  const batchesBefore = sandbox.queue.eventSource.stats.batches;
  const logBefore = sandbox.logLines.length;
  let webhookMs = 0;
  const names = Array.from({ length: JOINS }, (_, i) => `ip-10-9-0-${i}.ec2.internal`);
  // One at a time, each settled before the next: production's few joins a day arrive alone, so
  // their messages do not share a worker invocation as back-to-back joins' would.
  for (const name of names) {
    const t = performance.now();
    await sandbox.joinNode(name);
    webhookMs += performance.now() - t;
    await joined(sandbox, [name], 60_000);
  }
  const lines = sandbox.logLines.slice(logBefore);
  const done = lines.filter((line) => line.event === 'message.done');
  const workerMs = done.reduce((sum, line) => sum + (typeof line.ms === 'number' ? line.ms : 0), 0);
  const invocations = sandbox.queue.eventSource.stats.batches - batchesBefore;
  const writes = Object.entries(sandbox.db.stats.calls).filter(([name]) => WRITES.has(name)).reduce((sum, [, n]) => sum + n, 0);
  const sqs = sandbox.queue.sqs.stats.total(PRODUCTION_CALLERS);
  return {
    workerInvocations: round(invocations / JOINS, 1),
    // Per invocation, as the cost model bills it (its messages' handling times summed).
    workerMs: round(invocations > 0 ? workerMs / invocations : 0, 1),
    webhookMs: round(webhookMs / JOINS, 1),
    dynamodbWrites: round(writes / JOINS, 1),
    sqsRequests: round((sqs.billedRequests - sqs.emptyReceives) / JOINS, 1),
    logBytes: Math.round(logBytes(lines) / JOINS),
  };
}

/**
 * Waits until the joined nodes are ready (the worker writes NetworkUnavailable=False once their
 * routes exist) and the queue is empty, watching through the sandbox's own client. Only the joined
 * nodes are looked at: counting the whole cluster every few ms would take the CPU the measured
 * worker runs on.
 */
async function joined(sandbox: Sandbox, names: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ready = names.every((name) => {
      const node = sandbox.kube.state.getNode(name);
      return node !== undefined && networkUnavailableOf(parseNode(node)) === 'False';
    });
    const queue = ready ? await sandbox.queue.depth() : undefined;
    if (queue && queue.visible + queue.inFlight + queue.delayed + queue.running === 0) return;
    if (performance.now() > deadline) throw new Error(`joins not done within ${timeoutMs} ms: ${ready ? JSON.stringify(queue) : 'nodes not ready'}`);
    await sleep(50);
  }
}

/** The event source on an empty queue over IDLE_WAITS long-poll waits: its pollers' receives. */
async function measureIdle(sandbox: Sandbox): Promise<IdlePolling> {
  const { pollers, waitTimeSeconds } = sandbox.queue.eventSource;
  sandbox.queue.sqs.stats.reset();
  const started = performance.now();
  await sleep(IDLE_WAITS * waitTimeSeconds * 1000);
  const windowMs = performance.now() - started;
  const polled = sandbox.queue.sqs.stats.total([EVENT_SOURCE_CALLER]);
  const receives = polled.calls.ReceiveMessage ?? 0;
  return {
    windowMs: Math.round(windowMs),
    pollers,
    waitTimeSeconds,
    receives,
    emptyReceives: polled.emptyReceives,
    receivesPerPollerPerWait: round(receives / ((pollers * windowMs) / 1000 / waitTimeSeconds), 3),
  };
}

/**
 * DynamoDB's read units for the whole table, strongly consistent: each page's item bytes rounded up
 * to 4 KB (DynamoDB Developer Guide, "DynamoDB read and write operations": a Query or Scan sums the
 * sizes of the items it reads per request and rounds up to the next 4 KB), as Query pages of the
 * same items consume.
 */
async function tableReadUnits(sandbox: Sandbox): Promise<number> {
  const client = sandbox.db.client();
  let units = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: sandbox.db.tableName, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL', ...(start ? { ExclusiveStartKey: start as never } : {}) }),
    );
    units += page.ConsumedCapacity?.CapacityUnits ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return units;
}

/**
 * The metrics the lines' embedded-metric-format records publish: one per metric name and set of
 * dimension values (CloudWatch User Guide, "Metrics concepts": a metric is named by its namespace,
 * name and dimensions, and each unique combination is a separate metric).
 */
function metricStreams(lines: ReadonlyArray<Record<string, unknown>>): number {
  const seen = new Set<string>();
  for (const line of lines) {
    const aws = line._aws as { CloudWatchMetrics?: Array<{ Namespace?: string; Dimensions?: string[][]; Metrics?: Array<{ Name?: string }> }> } | undefined;
    for (const directive of aws?.CloudWatchMetrics ?? []) {
      for (const dimensions of directive.Dimensions ?? [[]]) {
        const values = dimensions.map((name) => `${name}=${String(line[name])}`).join(',');
        for (const metric of directive.Metrics ?? []) seen.add(`${directive.Namespace ?? ''}|${metric.Name ?? ''}|${values}`);
      }
    }
  }
  return seen.size;
}

/**
 * Bytes the lines take as CloudWatch Logs ingests them: each JSON line with its newline, at the
 * level production logs (info and up; metric lines, which carry no level, included).
 */
function logBytes(lines: ReadonlyArray<Record<string, unknown>>): number {
  return lines.filter((line) => line.level !== 'debug').reduce((sum, line) => sum + Buffer.byteLength(JSON.stringify(line)) + 1, 0);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await steadyStateOnce(Number(process.argv[2] ?? 1000))));
}
