/**
 * Steady state: a cluster already converged (N nodes, their routes, leases and conditions in
 * place), then one reconcile: how many EC2, Kubernetes and DynamoDB calls it makes, and its wall
 * time. The goal is no writes at all and reads in O(pages).
 */
import { performance } from 'node:perf_hooks';
import { startSandbox } from '../infra/local/sandbox/index.ts';
import { mapSettled } from '../lib/util/concurrency.ts';
import { round } from './stats.ts';

export interface SteadyStateRun {
  nodes: number;
  routes: number;
  reconcileMs: number;
  ec2Calls: Record<string, number>;
  kubeCalls: Record<string, number>;
  dynamodbCalls: Record<string, number>;
  dynamodbWrites: number;
  messagesSent: number;
  /** What one more node joining costs on top (for the cost model), averaged over a few joins. */
  perJoin: { workerInvocations: number; workerMs: number; webhookMs: number; dynamodbWrites: number };
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

export async function steadyStateOnce(nodes: number): Promise<SteadyStateRun> {
  // Building the cluster is not what is measured: no throttling, a table quota that fits it (AWS
  // caps a table at 1,000 routes; 5,000 nodes in routes mode is a scaling probe of reconcile itself).
  const sandbox = await startSandbox({ nodes: 0, routeTables: 1, routeLimit: nodes + 20, throttle: false, tickMs: 0 });
  try {
    // The converged cluster is written straight into the stand-ins (what joins and the worker would
    // have left): per node an instance, a lease, a Node with its pod CIDR and NetworkUnavailable=False,
    // and its route. Only the reconcile after that is measured.
    const [set] = sandbox.wirings.reconcile.cidrSets;
    const [tableId] = sandbox.routeTableIds;
    if (!set || !tableId) throw new Error('the sandbox has no CIDR set or route table');
    await mapSettled(
      Array.from({ length: nodes }, (_, i) => `ip-10-2-${Math.floor(i / 250)}-${i % 250}.ec2.internal`),
      20,
      async (name, i) => {
        const instance = sandbox.ec2.state.addInstance({ sourceDestCheck: false });
        const podCidr = await set.allocateNext(name);
        sandbox.ec2.state.addRoute({ routeTableId: tableId, destinationCidr: podCidr, instanceId: instance.id });
        await sandbox.kube.state.addNode(
          {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name, labels: { 'kubernetes.io/hostname': name } },
            spec: { providerID: `aws:///${instance.availabilityZone}/${instance.id}`, podCIDR: podCidr, podCIDRs: [podCidr] },
            status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'seeded', lastTransitionTime: new Date(0).toISOString() }] },
          },
          { admit: false },
        );
        return i;
      },
    );
    await sandbox.tick(); // a first reconcile over the seeded state (it should find nothing to do)

    sandbox.db.stats.reset();
    sandbox.ec2.stats.reset();
    sandbox.kube.stats.reset();
    const started = performance.now();
    const result = await sandbox.tick();
    const reconcileMs = performance.now() - started;
    const steady = {
      ec2Calls: { ...sandbox.ec2.stats.calls },
      kubeCalls: sandbox.kube.stats.all(),
      dynamodbCalls: { ...sandbox.db.stats.calls },
    };

    // A few more joins, measured: webhook time, worker invocations and their time, DynamoDB writes.
    const joins = 5;
    sandbox.db.stats.reset();
    const batchesBefore = sandbox.queue.eventSource.stats.batches;
    const logBefore = sandbox.logLines.length;
    let webhookMs = 0;
    for (let i = 0; i < joins; i++) {
      const t = performance.now();
      await sandbox.joinNode(`ip-10-9-0-${i}.ec2.internal`);
      webhookMs += performance.now() - t;
    }
    await sandbox.settle({ timeoutMs: 60_000, pollMs: 50 });
    const done = sandbox.logLines.slice(logBefore).filter((line) => line.event === 'message.done');
    const workerMs = done.reduce((sum, line) => sum + (typeof line.ms === 'number' ? line.ms : 0), 0);
    const invocations = sandbox.queue.eventSource.stats.batches - batchesBefore;
    const writes = Object.entries(sandbox.db.stats.calls).filter(([name]) => WRITES.has(name)).reduce((sum, [, n]) => sum + n, 0);
    return {
      nodes,
      routes: nodes,
      reconcileMs: Math.round(reconcileMs),
      ...steady,
      dynamodbWrites: Object.entries(steady.dynamodbCalls).filter(([name]) => WRITES.has(name)).reduce((sum, [, n]) => sum + n, 0),
      messagesSent: result.messagesSent,
      perJoin: {
        workerInvocations: round(invocations / joins, 1),
        workerMs: round(done.length > 0 ? workerMs / done.length : 0, 1),
        webhookMs: round(webhookMs / joins, 1),
        dynamodbWrites: round(writes / joins, 1),
      },
    };
  } finally {
    await sandbox.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await steadyStateOnce(Number(process.argv[2] ?? 1000))));
}
