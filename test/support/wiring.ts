/**
 * A handler Wiring over a test world: `buildWiring` with the world's EC2 client and Kubernetes
 * nodes, a fresh CIDR table in the local DynamoDB (its commands counted), a recording queue and a
 * memory logger. Everything shares the world's fake clock.
 */
import { buildWiring, useCaseDeps, type Wiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { ReconcileDeps } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from './dynalite.ts';
import { CLUSTER, RecordingQueue, countCommands, freshCidrTable, unusedSqsClient, type World } from './world.ts';

export const WEBHOOK_SECRET = 'test-webhook-secret-0f3c9a7e2b814d55';
/** The event signing key: another secret than the URL token. */
export const EVENT_SIGNING_KEY = 'test-signing-key-7b2e4d6f8a0c1e3b';

export interface TestWiring {
  wiring: Wiring;
  queue: RecordingQueue;
  log: ReturnType<typeof memoryLogger>;
  dynamo: ReturnType<typeof countCommands>;
  /** The reconcile use case's deps from the wiring. */
  reconcileDeps(): ReconcileDeps;
  /** The route worker's deps from the wiring. */
  workerDeps(): { clusterCidrs: readonly string[]; routeTables: Wiring['routeTables']; routeTargets: Wiring['routeTargets']; nodes: Wiring['nodes']; cidrSets: Wiring['cidrSets']; leaseGraceSeconds: number; now: () => number; plane: Wiring['plane'] };
}

export async function testWiring(world: World, local: LocalDynamo, env: Record<string, string> = {}): Promise<TestWiring> {
  const client = local.client();
  const dynamo = countCommands(client);
  const tableName = await freshCidrTable(client);
  const config = loadConfig({
    CLUSTER_NAME: CLUSTER,
    CLUSTER_CIDRS: '100.64.0.0/16',
    CIDR_TABLE_NAME: tableName,
    QUEUE_URL: 'http://127.0.0.1:9/000000000000/podroute-routes',
    ...env,
  });
  const log = memoryLogger();
  const base = await buildWiring(config, { ec2: world.ec2Client, sqs: unusedSqsClient(), dynamodb: client }, world.nodes, async () => WEBHOOK_SECRET, {
    log,
    now: world.clock.now,
    eventSigningKey: async () => EVENT_SIGNING_KEY,
  });
  const queue = new RecordingQueue();
  const wiring: Wiring = { ...base, queue };
  dynamo.reset();
  return {
    wiring,
    queue,
    log,
    dynamo,
    reconcileDeps: () => useCaseDeps(wiring),
    workerDeps: () => ({ clusterCidrs: wiring.config.clusterCidrs, routeTables: wiring.routeTables, routeTargets: wiring.routeTargets, nodes: wiring.nodes, cidrSets: wiring.cidrSets, leaseGraceSeconds: wiring.config.leaseGraceSeconds, now: wiring.now, plane: wiring.plane }),
  };
}
