/**
 * A small cloud for use-case and handler tests: the EC2 emulator (real EC2Client), the Kubernetes
 * emulator (real client through KubeNodes), a fake clock shared by all of them, and builders for
 * nodes, cluster route tables, SQS records, API Gateway v2 events and a Lambda context.
 *
 *   const world = await startWorld();
 *   const table = world.addClusterTable();
 *   const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
 *   ... afterAll(() => world.close());
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { createTableAndWait } from '../../infra/local/dynamodb.ts';
import { startEc2Emulator, type Ec2Emulator, type Ec2EmulatorOptions, type InstanceRecord } from '../../infra/local/ec2/index.ts';
import { startKubeEmulator, type KubeEmulator, type KubeEmulatorOptions } from '../../infra/local/kube/index.ts';
import { kubeletNode } from '../../infra/local/kube/kubelet-node.ts';
import { cidrTableDefinition } from '../../lib/aws/dynamodb-cidr-store.ts';
import { Ec2EniPrefixes } from '../../lib/aws/ec2-prefixes.ts';
import { Ec2RouteTables } from '../../lib/aws/ec2-route-tables.ts';
import { createKubeConfig } from '../../lib/kube/kube-config.ts';
import { KubeNodes } from '../../lib/kube/kube-nodes.ts';
import { createCidrSet, type CidrSet } from '../../lib/ipam/index.ts';
import { containsCidr, formatCidr, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { dedupeMessages } from '../../lib/messages/work-queue.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { lambdaContext as localLambdaContext } from '../../infra/local/lambda-context.ts';
import { CLUSTER, CLUSTER_TAG, FakeClock, T0 } from './clock.ts';
import type { SendOptions, SendResult, WorkQueue } from '../../lib/usecases/ports.ts';
import { Ec2RouteTargets } from '../../lib/aws/ec2-route-targets.ts';

export { CLUSTER, CLUSTER_TAG, FakeClock, T0 } from './clock.ts';
export const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' };

export interface WorldNode {
  name: string;
  instanceId: string;
  eniId: string;
}

export interface NodeSpec {
  podCidrs?: string[];
  /** The NetworkUnavailable condition to start with; none when absent. */
  networkUnavailable?: 'True' | 'False';
  /** Use this instance instead of launching one. */
  instance?: InstanceRecord;
  /** A providerID without an instance. */
  noInstance?: boolean;
  /** Take no lease in `World.cidrSets` for the pod CIDRs (a node claiming what podroute did not give it). */
  unleased?: boolean;
}

export interface World {
  ec2: Ec2Emulator;
  kube: KubeEmulator;
  clock: FakeClock;
  ec2Client: EC2Client;
  nodes: KubeNodes;
  routeTables: Ec2RouteTables;
  routeTargets: Ec2RouteTargets;
  prefixes: Ec2EniPrefixes;
  /**
   * The lease table (in memory) for the tests' cluster CIDRs, 100.64.0.0/16 and 10.244.0.0/16 with
   * /24 blocks: `addNode` leases each pod CIDR to its node there (unless `unleased`), as podroute's
   * allocation would have.
   */
  cidrSets: CidrSet[];
  /** A route table tagged for the cluster. */
  addClusterTable(): string;
  /** Launches an instance (unless given) and stores its Node in the Kubernetes emulator. */
  addNode(name: string, spec?: NodeSpec): Promise<WorldNode>;
  /** The Node object to send in an AdmissionReview (not stored). */
  nodeObject(name: string, instanceId: string, podCidrs?: string[]): Record<string, unknown>;
  /** The route of a table for a destination as EC2 describes it, or undefined. */
  route(tableId: string, cidr: string): { instanceId?: string; networkInterfaceId?: string; gatewayId?: string; state: string } | undefined;
  /** Routes of a table other than the local ones, as `cidr -> target` strings, sorted. */
  routeSummary(tableId: string): string[];
  /** The stored node's NetworkUnavailable status ('True' / 'False'), or null. */
  networkUnavailable(name: string): string | null;
  podCidrs(name: string): string[];
  /** Reasons of the Warning events recorded for a node. */
  eventReasons(name: string): string[];
  /** Kubernetes writes (PATCH/PUT/POST) seen since the last stats reset. */
  kubeWrites(): number;
  /** EC2 mutating calls seen since the last stats reset. */
  ec2Writes(): number;
  resetStats(): void;
  close(): Promise<void>;
}

const EC2_READS = /^(Describe|Get|List)/;

/** Leases each pod CIDR that is exactly a block of one of the sets to `owner`. */
export async function leaseTo(sets: readonly CidrSet[], owner: string, podCidrs: readonly string[]): Promise<void> {
  for (const text of podCidrs) {
    const cidr = tryParseCidr(text);
    const set = sets.find((candidate) => {
      const cluster = tryParseCidr(candidate.clusterCidr);
      return cidr !== null && cluster !== null && containsCidr(cluster, cidr) && cidr.prefix === candidate.nodeMaskSize;
    });
    if (cidr !== null && set) await set.occupy(formatCidr(cidr), owner);
  }
}

export async function startWorld(options: { ec2?: Ec2EmulatorOptions; kube?: KubeEmulatorOptions; clock?: FakeClock } = {}): Promise<World> {
  const clock = options.clock ?? new FakeClock();
  const ec2 = await startEc2Emulator({ throttle: false, now: clock.now, ...options.ec2 });
  const kube = await startKubeEmulator(options.kube);
  const ec2Client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials, maxAttempts: 1 });
  // podroute's own identity, held to infra/kubernetes/rbac.yaml by the emulator.
  const nodes = new KubeNodes(await createKubeConfig({ kind: 'options', options: kube.kubeConfig(kube.podrouteToken) }), {
    clock: () => new Date(clock.ms),
    conflictBackoffMs: 0,
  });
  const routeTables = new Ec2RouteTables(ec2Client, { clusterName: CLUSTER });
  const prefixes = new Ec2EniPrefixes(ec2Client);
  const cidrSets = await Promise.all(['100.64.0.0/16', '10.244.0.0/16'].map((clusterCidr) => createCidrSet({ clusterCidr, nodeMaskSize: 24 })));

  // Nodes as the kubelet registers them (10-15 KB each), like the sandbox's and a real cluster's.
  let nodeIndex = 0;
  const nodeObject = (name: string, instanceId: string, podCidrs: string[] = []): Record<string, unknown> => {
    nodeIndex += 1;
    return kubeletNode({ name, instanceId, zone: 'us-east-1a', privateIp: `10.0.${(nodeIndex >> 8) & 255}.${nodeIndex & 255}`, podCidrs, index: nodeIndex });
  };

  const stored = (name: string) => {
    const node = kube.state.getNode(name);
    if (!node) throw new Error(`no node ${name} in the Kubernetes emulator`);
    return node;
  };
  const field = (value: unknown, key: string): unknown =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;

  return {
    ec2,
    kube,
    clock,
    ec2Client,
    nodes,
    routeTables,
    routeTargets: new Ec2RouteTargets(ec2Client),
    prefixes,
    cidrSets,
    addClusterTable: () => ec2.state.addRouteTable({ tags: { [CLUSTER_TAG]: 'owned' } }).id,
    async addNode(name, spec = {}) {
      const instance = spec.instance ?? ec2.state.addInstance();
      const eni = ec2.state.primaryInterface(instance.id);
      const object = nodeObject(name, spec.noInstance ? '' : instance.id, spec.podCidrs);
      if (spec.networkUnavailable !== undefined) {
        const unavailable = spec.networkUnavailable === 'True';
        const status = object.status as { conditions?: unknown[] };
        status.conditions = [
          ...(status.conditions ?? []),
            {
              type: 'NetworkUnavailable',
              status: spec.networkUnavailable,
              reason: unavailable ? 'NoRouteCreated' : 'RouteCreated',
              message: unavailable ? 'RouteController failed to create a route' : 'RouteController created a route',
              lastTransitionTime: '2025-12-31T00:00:00Z',
              lastHeartbeatTime: '2025-12-31T00:00:00Z',
            },
        ];
      }
      await kube.state.addNode(object, { admit: false });
      if (!spec.unleased) await leaseTo(cidrSets, name, spec.podCidrs ?? []);
      return { name, instanceId: instance.id, eniId: eni?.id ?? '' };
    },
    nodeObject,
    route(tableId, cidr) {
      const found = ec2.state.routes(tableId).find((r) => (r.destinationCidrBlock ?? r.destinationIpv6CidrBlock) === cidr);
      if (!found) return undefined;
      return {
        state: found.state,
        ...(found.instanceId !== undefined ? { instanceId: found.instanceId } : {}),
        ...(found.networkInterfaceId !== undefined ? { networkInterfaceId: found.networkInterfaceId } : {}),
        ...(found.gatewayId !== undefined ? { gatewayId: found.gatewayId } : {}),
      };
    },
    routeSummary(tableId) {
      return ec2.state
        .routes(tableId)
        .filter((r) => r.gatewayId !== 'local')
        .map((r) => `${r.destinationCidrBlock ?? r.destinationIpv6CidrBlock ?? '?'} -> ${r.instanceId ?? r.gatewayId ?? r.networkInterfaceId ?? '?'}${r.state === 'blackhole' ? ' (blackhole)' : ''}`)
        .sort();
    },
    networkUnavailable(name) {
      const conditions = field(field(stored(name), 'status'), 'conditions');
      if (!Array.isArray(conditions)) return null;
      const condition: unknown = conditions.find((c: unknown) => field(c, 'type') === 'NetworkUnavailable');
      const status = field(condition, 'status');
      return typeof status === 'string' ? status : null;
    },
    podCidrs(name) {
      const list = field(field(stored(name), 'spec'), 'podCIDRs');
      return Array.isArray(list) ? list.filter((c): c is string => typeof c === 'string') : [];
    },
    eventReasons(name) {
      return kube.state
        .events()
        .filter((e) => field(field(e, 'involvedObject'), 'name') === name && field(e, 'type') === 'Warning')
        .map((e) => String(field(e, 'reason')));
    },
    kubeWrites() {
      return Object.entries(kube.stats.all())
        .filter(([key]) => /^(PATCH|PUT|POST|DELETE) /.test(key))
        .reduce((sum, [, n]) => sum + n, 0);
    },
    ec2Writes() {
      return Object.entries(ec2.stats.calls)
        .filter(([action]) => !EC2_READS.test(action))
        .reduce((sum, [, n]) => sum + n, 0);
    },
    resetStats() {
      ec2.stats.reset();
      kube.stats.reset();
    },
    async close() {
      ec2Client.destroy();
      await Promise.all([ec2.close(), kube.close()]);
    },
  };
}

/** A WorkQueue that keeps every send with its options (deduplicated per send, like the real ones). */
export class RecordingQueue implements WorkQueue {
  readonly sends: Array<{ messages: WorkMessage[]; options: SendOptions | undefined }> = [];
  async send(messages: readonly WorkMessage[], options?: SendOptions): Promise<SendResult> {
    const { unique, duplicates } = dedupeMessages(messages);
    this.sends.push({ messages: unique, options });
    return { sent: unique.length, duplicates };
  }
  get messages(): WorkMessage[] {
    return this.sends.flatMap((s) => s.messages);
  }
  clear(): void {
    this.sends.length = 0;
  }
}

/** Counts the DynamoDB commands a client sends, by name (`PutItemCommand`, ...). */
export function countCommands(client: DynamoDBClient): { counts: Map<string, number>; writes(): number; reset(): void } {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '?';
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'podrouteTestCommandCounter' },
  );
  return {
    counts,
    writes: () =>
      [...counts].filter(([name]) => /^(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)Command$/.test(name)).reduce((s, [, n]) => s + n, 0),
    reset: () => counts.clear(),
  };
}

let tables = 0;
/** A new, empty CIDR table in the local DynamoDB; its name. */
export async function freshCidrTable(client: DynamoDBClient): Promise<string> {
  tables += 1;
  const name = `podroute-cidrs-${process.pid}-${tables}`;
  await createTableAndWait(client, cidrTableDefinition(name));
  return name;
}

/** An SQS client for wirings whose queue is replaced (never sends: its endpoint is a closed local port). */
export const unusedSqsClient = (): SQSClient =>
  new SQSClient({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials, maxAttempts: 1 });

/** The local Lambda context the stand-ins use, named for tests. */
export const lambdaContext = (functionName = 'podroute-test'): Context => localLambdaContext(functionName);

export function sqsRecord(messageId: string, body: string, receiveCount = 1): SQSRecord {
  return {
    messageId,
    receiptHandle: `handle-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: String(T0),
      SenderId: 'AIDATEST',
      ApproximateFirstReceiveTimestamp: String(T0),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:podroute-routes',
    awsRegion: 'us-east-1',
  };
}

export const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** An API Gateway HTTP API (payload 2.0) event for `POST /webhook` or `POST /webhook/{token}`. */
export function httpEvent(input: { body: string; headers?: Record<string, string>; token?: string; query?: Record<string, string> }): APIGatewayProxyEventV2 {
  const path = input.token === undefined ? '/webhook' : `/webhook/${input.token}`;
  return {
    version: '2.0',
    routeKey: input.token === undefined ? 'POST /webhook' : 'POST /webhook/{token}',
    rawPath: path,
    rawQueryString: new URLSearchParams(input.query ?? {}).toString(),
    ...(input.query === undefined ? {} : { queryStringParameters: input.query }),
    headers: { 'content-type': 'application/json', ...input.headers },
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'webhook.local',
      domainPrefix: 'webhook',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'kube-apiserver-admission' },
      requestId: 'req-1',
      routeKey: input.token === undefined ? 'POST /webhook' : 'POST /webhook/{token}',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: T0,
    },
    body: input.body,
    isBase64Encoded: false,
    ...(input.token === undefined ? {} : { pathParameters: { token: input.token } }),
  };
}

/**
 * Hands every message the queue holds to the route worker, as the SQS event source would (first
 * receive), until the queue is empty; returns the worker's statuses in order.
 */
export async function drainQueue(
  queue: RecordingQueue,
  deps: { clusterCidrs: readonly string[]; routeTables: RouteWorkerDeps['routeTables']; routeTargets: RouteWorkerDeps['routeTargets']; nodes: RouteWorkerDeps['nodes']; cidrSets: RouteWorkerDeps['cidrSets']; leaseGraceSeconds: number; now: () => number; plane: RouteWorkerDeps['plane'] },
): Promise<string[]> {
  const statuses: string[] = [];
  const log = memoryLogger();
  for (let round = 0; round < 10 && queue.sends.length > 0; round++) {
    const messages = queue.messages;
    queue.clear();
    for (const message of messages) {
      const result = await handleWorkMessage(JSON.stringify(message), { receiveCount: 1, maxReceiveCount: 3 }, { ...deps, log });
      statuses.push(`${message.kind}:${result.outcome}:${result.status}`);
    }
  }
  return statuses;
}

export { TimedMemoryCidrStore } from '../fakes/timed-memory-cidr-store.ts';
