/**
 * The local sandbox: podroute's three real Lambda handlers running in this process against local
 * stand-ins, all on 127.0.0.1:
 *
 *   dynalite (CIDR table) ─┐
 *   fauxqs (queue + DLQ) ──┼── buildWiring(...) ──> reconcile handler   <── schedule tick (every tickMs)
 *   EC2 emulator ──────────┤                   ├──> route-worker handler <── SQS event source (batches of 10)
 *   Kubernetes emulator ───┘                   └──> node-webhook handler <── local HTTP API <── admission calls
 *
 * Nodes join as a kubelet joins: an EC2 instance is launched, then the Node is created through the
 * Kubernetes API, whose admission webhook calls podroute's webhook through the local HTTP API.
 * The schedule is fast-forwarded (every 2 s instead of every minute by default), and so is every
 * other clock podroute depends on: the queue's visibility timeout (6 s instead of 180 s), the
 * worker's function timeout (1 s instead of 30 s), the worker's retry backoff, the EC2 SDK client's
 * retry backoff and adaptive rate limiter, and EC2's throttling refill rates. Leases of vanished nodes are reclaimed after
 * LEASE_GRACE_SECONDS = 1 (10 minutes in production) so a final reconcile can show that nothing leaked.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { EC2Client } from '@aws-sdk/client-ec2';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Node } from '@kubernetes/client-node';
import type { APIGatewayProxyEventV2, Context, ScheduledEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createNodeWebhookHandler } from '../../../functions/node-webhook.ts';
import { createReconcileHandler } from '../../../functions/reconcile.ts';
import type { ReconcileResult } from '../../../functions/reconcile.ts';
import { createRouteWorkerHandler } from '../../../functions/route-worker.ts';
import { buildWiring } from '../../../functions/wiring.ts';
import type { Wiring } from '../../../functions/wiring.ts';
import { loadConfig } from '../../../lib/config.ts';
import type { Config } from '../../../lib/config.ts';
import { createKubeConfig } from '../../../lib/kube/kube-config.ts';
import { KubeNodes } from '../../../lib/kube/kube-nodes.ts';
import { jsonLogger, memoryLogger } from '../../../lib/log.ts';
import type { Logger } from '../../../lib/log.ts';
import type { Lease } from '../../../lib/ipam/index.ts';
import type { NodeSource } from '../../../lib/usecases/ports.ts';
import { startEc2Emulator } from '../ec2/index.ts';
import type { Ec2Emulator, FaultKind, ThrottleOptions } from '../ec2/index.ts';
import { DEFAULT_MUTATING, DEFAULT_NON_MUTATING } from '../ec2/throttle.ts';
import { ec2ClientConfig } from '../../../lib/aws/ec2-client.ts';
import { clusterTagKey } from '../../../lib/routes/index.ts';
import { startKubeEmulator } from '../kube/index.ts';
import { kubeletNode } from '../kube/kubelet-node.ts';
import type { KubeEmulator } from '../kube/index.ts';
import { startLocalSqs } from '../queue/local-sqs.ts';
import type { LocalSqs } from '../queue/local-sqs.ts';
import { startSqsEventSource } from '../queue/sqs-event-source.ts';
import type { SqsEventSource } from '../queue/sqs-event-source.ts';
import { startLocalDynamoDb } from '../dynamodb.ts';
import type { LocalDynamoDb } from '../dynamodb.ts';
import { startHttpApi } from './http-api.ts';
import type { HttpApi } from './http-api.ts';
import { lambdaContext } from '../lambda-context.ts';
import { countState, leakedLeases, liveNodes, percentile } from './report.ts';
import type { RouteCounts, SandboxReport } from './report.ts';

export type SandboxMode = 'routes' | 'prefixes';

export interface SandboxOptions {
  /** Nodes joined (through the webhook) before `startSandbox` resolves. Default 0. */
  nodes?: number;
  /** IPv4 and IPv6 cluster CIDRs, dual-stack VPC and subnet. Default false. */
  dualStack?: boolean;
  /** Route tables tagged `kubernetes.io/cluster/<clusterName>=owned`. Default 2. */
  routeTables?: number;
  /** `routes` (VPC routes) or `prefixes` (ENI prefix delegation, /28 and /80). Default `routes`. */
  mode?: SandboxMode;
  /** Share (0..1) of EC2 calls that fail with a retryable error after passing throttling. Default 0. */
  faults?: number;
  /** Secondary network interfaces of every simulated instance (as VPC CNI, Multus or EFA add). Default 0. */
  secondaryEnis?: number;
  /**
   * EC2's eventual consistency: ms after a launch during which the instance and its interfaces
   * answer NotFound. Default: LAUNCH_LAG_PRODUCTION_MS scaled like the schedule in routes mode (the
   * worker retries it for a new node); 0 in prefixes mode and without a schedule (`tickMs` 0, where
   * tests drive time by hand).
   */
  notFoundAfterLaunchMs?: number;
  /**
   * EC2 request-rate throttling: true (default) = EC2's default buckets with refill rates sped up
   * by the schedule's fast-forward factor (60000 / tickMs), false = off, or custom buckets as given.
   */
  throttle?: boolean | ThrottleOptions;
  /** Routes per table (EC2 quota). Default: 50, raised (as one would ask AWS) to fit the cluster. */
  routeLimit?: number;
  /** Schedule period in ms (EventBridge's one minute, fast-forwarded). 0 = no schedule: call `tick()`. Default 2000. */
  tickMs?: number;
  /** Let a tick start while the previous one still runs (EventBridge can deliver so). Default false. */
  overlapTicks?: boolean;
  /** The worker's event-source `maximumConcurrency` (2..1000). Default 5. */
  maximumConcurrency?: number;
  /** The work queue's visibility timeout. Default 6 (180 s fast-forwarded like the schedule). */
  visibilityTimeoutSeconds?: number;
  /** LEASE_GRACE_SECONDS of the handlers. Default 1. */
  leaseGraceSeconds?: number;
  /** Attempts per EC2 call in the SDK client (adaptive retry backs off on throttling). Default: production's. */
  ec2MaxAttempts?: number;
  /** Where the handlers' JSON logs go: a logger, a file, or (default) memory (`sandbox.logLines`). */
  log?: Logger | { file: string };
  clusterName?: string;
  /**
   * Share (0..1) of node DELETEs that a later validating webhook refuses after podroute's webhook
   * admitted them (the Kubernetes emulator's `denyDeletes`, seeded). Default 0.
   */
  denyDeletes?: number;
}

export interface JoinOptions {
  /** false: create the Node without admission (as if the webhook were not installed). Default true. */
  webhook?: boolean;
}

export interface LeaveOptions {
  /** false: delete the Node without admission. Default true. */
  webhook?: boolean;
  /** Also terminate the node's instance. Default true. */
  terminate?: boolean;
}

export interface SettleOptions {
  timeoutMs?: number;
  /** Pause between checks. Default 100 ms. */
  pollMs?: number;
}

export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
  /** Worker invocations running right now. */
  running: number;
}

export interface SandboxStatus extends Omit<RouteCounts, 'leakedCidrs'> {
  queue: QueueDepth;
  throttled: number;
  ec2Calls: number;
}

export interface SandboxQueue {
  readonly sqs: LocalSqs;
  /** A client of the local SQS (dummy credentials). */
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly eventSource: SqsEventSource;
  depth(): Promise<QueueDepth>;
  dlqDepth(): Promise<number>;
}

export interface Sandbox {
  readonly config: Config;
  /** The wiring each handler got (one per function, as separate Lambdas have). */
  readonly wirings: { reconcile: Wiring; worker: Wiring; webhook: Wiring };
  readonly ec2: Ec2Emulator;
  readonly kube: KubeEmulator;
  readonly queue: SandboxQueue;
  readonly db: LocalDynamoDb;
  /** The node webhook's local HTTP API and its shared secret. */
  readonly webhook: { readonly url: string; readonly secret: string; readonly api: HttpApi };
  /** The cluster's route table ids. */
  readonly routeTableIds: readonly string[];
  /** In-memory log lines (when no logger or file was given). */
  readonly logLines: ReadonlyArray<Record<string, unknown>>;
  /** Reconcile runs that threw (the schedule goes on). */
  readonly tickErrors: readonly unknown[];
  /** Launches an instance, then creates its Node through the Kubernetes API (admission runs). */
  joinNode(name?: string, options?: JoinOptions): Promise<{ name: string; instanceId: string }>;
  /**
   * Deletes the Node through the Kubernetes API (admission runs), then terminates its instance;
   * `refused` when a later validating webhook refused the delete (`denyDeletes`): the node stays.
   */
  leaveNode(name: string, options?: LeaveOptions): Promise<'deleted' | 'refused'>;
  /** The instance a node was launched on. */
  instanceOf(name: string): string | undefined;
  /** Runs the reconcile handler once now, as one schedule delivery. */
  tick(): Promise<ReconcileResult>;
  /** Resolves once every node is ready, every route right and the queue drained; rejects after timeoutMs. */
  settle(options?: SettleOptions): Promise<SandboxReport>;
  /** The report numbers, from the stand-ins' state now. */
  snapshot(): Promise<SandboxReport>;
  /** A cheap look at progress (no lease scan): node and route counts, queue depth, throttles. */
  status(): Promise<SandboxStatus>;
  /** Leases that no live node holds (what `leakedCidrs` counts). */
  leakedLeases(): Promise<Lease[]>;
  /** Current CIDR leases of every set. */
  leases(): Promise<Lease[]>;
  /** Starts or stops the schedule (ticks already running finish). */
  setSchedule(running: boolean): void;
  stop(): Promise<void>;
}

const CLUSTER_CIDRS: Record<SandboxMode, { v4: string; v6: string; mask4: number; mask6: number }> = {
  // Pod CIDRs outside the VPC, routed to nodes by the VPC route tables.
  // 100.64.0.0/10 (as EKS custom networking uses): 16,384 node blocks, room for the benchmarks' clusters.
  routes: { v4: '100.64.0.0/10', v6: 'fd00:10:244::/56', mask4: 24, mask6: 64 },
  // ENI prefixes must come from the node's subnet: the upper half of the one subnet (10.0.0.0/16), an
  // explicit subnet CIDR reservation so that no instance address lands in it; IPv6 /80s from its /64.
  prefixes: { v4: '10.0.128.0/17', v6: '2600:1f18:1234:5600::/64', mask4: 28, mask6: 80 },
};
/**
 * How long a new instance stays invisible to the EC2 API in the sandbox, before scaling: a pessimistic
 * guess of the propagation delay (EC2 Developer Guide, "Eventual consistency in the Amazon EC2 API",
 * gives no figure, only "might not be immediately visible").
 */
const LAUNCH_LAG_PRODUCTION_MS = 60_000;
const VPC_V4 = '10.0.0.0/16';
const VPC_V6 = '2600:1f18:1234:5600::/56';
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const mode = options.mode ?? 'routes';
  const dualStack = options.dualStack ?? false;
  const tableCount = options.routeTables ?? 2;
  const tickMs = options.tickMs ?? 2000;
  const clusterName = options.clusterName ?? 'podroute-local';
  const initialNodes = options.nodes ?? 0;
  const faults = options.faults ?? 0;
  const secondaryEnis = options.secondaryEnis ?? 0;
  if (!Number.isInteger(secondaryEnis) || secondaryEnis < 0) throw new RangeError(`secondaryEnis ${secondaryEnis}: want a whole number >= 0`);
  const denyDeletes = options.denyDeletes ?? 0;
  if (!(denyDeletes >= 0 && denyDeletes <= 1)) throw new RangeError(`denyDeletes ${denyDeletes}: want a share within 0..1`);
  if (!Number.isInteger(tableCount) || tableCount < 1) throw new RangeError(`routeTables ${tableCount}: want a whole number >= 1`);
  if (!Number.isInteger(initialNodes) || initialNodes < 0) throw new RangeError(`nodes ${initialNodes}: want a whole number >= 0`);
  if (!(tickMs >= 0)) throw new RangeError(`tickMs ${tickMs}: want >= 0`);
  if (!(faults >= 0 && faults <= 1)) throw new RangeError(`faults ${faults}: want a share within 0..1`);

  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch {
        // best effort: the other stand-ins still get stopped
      }
    }
  };

  try {
    // --- logs -------------------------------------------------------------------------------
    let logLines: Array<Record<string, unknown>> = [];
    let log: Logger;
    if (options.log && 'file' in options.log) {
      const stream: WriteStream = createWriteStream(options.log.file, { flags: 'w' });
      log = jsonLogger({ sink: (line) => stream.write(`${line}\n`), base: { cluster: clusterName } });
      cleanups.push(() => new Promise<void>((resolve) => stream.end(() => resolve())));
    } else if (options.log) {
      log = options.log;
    } else {
      const memory = memoryLogger();
      logLines = memory.lines;
      log = memory;
    }

    // --- EC2: VPC, subnet, gateway, cluster route tables --------------------------------------
    const families = dualStack ? 2 : 1;
    // The schedule runs `timeScale` times faster than production's one minute; EC2's refill rates
    // are sped up alike, so a tick has the API budget a production minute has.
    const timeScale = tickMs > 0 ? 60_000 / tickMs : 1;
    const defaultLimit = Math.max(50, Math.min(1000, (initialNodes + 16) * families + 1));
    const ec2 = await startEc2Emulator({
      routeLimit: options.routeLimit ?? defaultLimit,
      notFoundAfterLaunchMs: options.notFoundAfterLaunchMs ?? (mode === 'routes' && tickMs > 0 ? LAUNCH_LAG_PRODUCTION_MS / timeScale : 0),
      throttle: options.throttle === false ? false : typeof options.throttle === 'object' ? options.throttle : scaledThrottle(timeScale),
      ...(faults > 0 ? { faults: { share: faults, kinds: ['RequestLimitExceeded', 'InternalError', 'ServiceUnavailable'] satisfies FaultKind[] } } : {}),
    });
    cleanups.push(() => ec2.close());
    const vpc = ec2.state.addVpc({ cidrBlock: VPC_V4, ...(dualStack ? { ipv6CidrBlock: VPC_V6 } : {}) });
    const subnet = ec2.state.addSubnet({
      vpcId: vpc.id,
      cidrBlock: mode === 'prefixes' ? VPC_V4 : '10.0.0.0/18',
      ...(dualStack ? { ipv6CidrBlock: '2600:1f18:1234:5600::/64' } : {}),
    });
    if (mode === 'prefixes') {
      // EC2 hands instance addresses out anywhere in a subnet except inside a reservation (Amazon VPC
      // User Guide, "Subnet CIDR reservations"): keep the pod prefixes' range for explicit assignment.
      ec2.state.createReservation({ subnetId: subnet.id, cidr: CLUSTER_CIDRS.prefixes.v4, type: 'explicit' });
    }
    const gateway = ec2.state.addGateway();
    const tagKey = clusterTagKey(clusterName);
    const routeTableIds: string[] = [];
    for (let i = 0; i < tableCount; i++) {
      const table = ec2.state.addRouteTable({ vpcId: vpc.id, tags: { [tagKey]: 'owned', Name: `${clusterName}-${i + 1}` } });
      ec2.state.addRoute({ routeTableId: table.id, destinationCidr: '0.0.0.0/0', gatewayId: gateway });
      routeTableIds.push(table.id);
    }
    // Someone else's table in the same VPC: podroute must never touch it.
    ec2.state.addRouteTable({ vpcId: vpc.id, tags: { Name: 'not-the-cluster' } });

    // --- DynamoDB, SQS ------------------------------------------------------------------------
    const db = await startLocalDynamoDb({ region: REGION });
    cleanups.push(() => db.close());
    const sqs = await startLocalSqs({ region: REGION });
    cleanups.push(() => sqs.stop());
    const visibility = options.visibilityTimeoutSeconds ?? 6;
    const dlq = await sqs.createQueue('podroute-dlq', { MessageRetentionPeriod: '1209600' });
    // No RedrivePolicy on the queue: the event source moves messages to the DLQ itself (and counts them).
    const work = await sqs.createQueue('podroute-work', { VisibilityTimeout: String(visibility) });
    const sqsClient = sqs.createClient();

    // --- Kubernetes, with its admission webhook pointed at the local HTTP API ------------------
    const secret = randomBytes(24).toString('hex');
    // The HTTP API needs the handler, the handler needs the wiring, the wiring needs the emulator,
    // and the emulator needs the HTTP API's address: the API starts first and looks the handler up late.
    const late: { webhook?: (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown> } = {};
    const api = await startHttpApi({
      routes: ['POST /webhook/{token}', 'POST /webhook'],
      functionName: 'podroute-node-webhook',
      handler: async (event, context) => {
        if (!late.webhook) return { statusCode: 503, body: JSON.stringify({ message: 'starting' }) };
        return late.webhook(event, context);
      },
      onError: (error) => log.log('error', 'sandbox.webhook-crashed', { error }),
    });
    cleanups.push(() => api.close());
    const webhookTarget = { url: `${api.url}/webhook/${secret}`, timeoutMs: 10_000 };
    const kube = await startKubeEmulator({ onNodeCreate: webhookTarget, onNodeDelete: webhookTarget, denyDeletes });
    cleanups.push(() => kube.close());

    // --- wiring: one per function, as separate Lambdas each build their own --------------------
    // The sandbox fast-forwards time, so its lease grace is below the production floor that
    // loadConfig enforces (LEASE_GRACE_SECONDS >= 300): loaded at a production value, then set.
    const loaded = loadConfig({
      CLUSTER_NAME: clusterName,
      CLUSTER_CIDRS: (dualStack ? [CLUSTER_CIDRS[mode].v4, CLUSTER_CIDRS[mode].v6] : [CLUSTER_CIDRS[mode].v4]).join(','),
      NODE_MASK_SIZE_IPV4: String(CLUSTER_CIDRS[mode].mask4),
      NODE_MASK_SIZE_IPV6: String(CLUSTER_CIDRS[mode].mask6),
      MODE: mode,
      NODE_SYNC_MODE: 'SyncFromCluster',
      QUEUE_URL: work.queueUrl,
      CIDR_TABLE_NAME: db.tableName,
      KUBE_AUTH: 'secret',
      KUBE_SECRET_ID: 'local-sandbox-kubeconfig',
      WEBHOOK_SECRET_ID: 'local-sandbox-webhook-secret',
      MAX_RECEIVE_COUNT: '3',
    });
    const config = { ...loaded, leaseGraceSeconds: options.leaseGraceSeconds ?? 1 };
    const readiness = new Readiness();
    // Retry delays (SDK backoff, visibility backoff) run on the same fast-forwarded clock; a slower
    // schedule than production's keeps production's delays.
    const clientTimeScale = Math.max(1, timeScale);
    const ec2Clients: EC2Client[] = [];
    const makeWiring = async (): Promise<Wiring> => {
      // The production client's retry settings, pointed at the emulator.
      const ec2Client = new EC2Client(
        ec2ClientConfig(
          {
            endpoint: ec2.url,
            region: REGION,
            credentials: CREDENTIALS,
            ...(options.ec2MaxAttempts === undefined ? {} : { maxAttempts: options.ec2MaxAttempts }),
          },
          // The SDK's backoff and adaptive rate limiter on the sandbox's clock (lib/aws/ec2-client.ts).
          { timeScale: clientTimeScale },
        ),
      );
      ec2Clients.push(ec2Client);
      const kubeConfig = await createKubeConfig({ kind: 'options', options: kube.kubeConfig() });
      const nodes = readiness.observe(new KubeNodes(kubeConfig, { onListRestart: (restart) => log.log('warn', 'kube.list-restarted', { ...restart }) }));
      return buildWiring(config, { ec2: ec2Client, sqs: sqs.createClient(), dynamodb: db.client() }, nodes, async () => secret, {
        log,
        timeScale: clientTimeScale,
      });
    };
    cleanups.push(() => {
      for (const client of ec2Clients) client.destroy();
    });
    const wirings = { reconcile: await makeWiring(), worker: await makeWiring(), webhook: await makeWiring() };
    late.webhook = createNodeWebhookHandler(async () => wirings.webhook);
    const reconcileHandler = createReconcileHandler(async () => wirings.reconcile);
    const workerHandler = createRouteWorkerHandler(async () => wirings.worker);

    // --- the worker's event source -------------------------------------------------------------
    let running = 0;
    const eventSource = await startSqsEventSource({
      client: sqsClient,
      queueUrl: work.queueUrl,
      dlqUrl: dlq.queueUrl,
      batchSize: 10,
      maximumConcurrency: options.maximumConcurrency ?? 5,
      maxReceiveCount: config.maxReceiveCount,
      waitTimeSeconds: 1,
      functionName: 'podroute-route-worker',
      // Production: 30 s, a sixth of the 180 s visibility timeout; scaled alike.
      functionTimeoutSeconds: Math.max(1, Math.round(visibility / 6)),
      handler: async (event: SQSEvent, context: Context) => {
        running += 1;
        try {
          const result: unknown = await workerHandler(event, context);
          return isBatchResponse(result) ? result : undefined;
        } finally {
          running -= 1;
        }
      },
      onError: (error) => log.log('warn', 'sandbox.event-source-error', { error }),
      // A whole batch that failed (a crash or a timeout, as Lambda reports in the function's log).
      onBatch: (report) => {
        if (report.outcome === 'failed') log.log('error', 'sandbox.batch-failed', { error: report.error, messageIds: report.messageIds });
      },
    });
    cleanups.push(() => eventSource.stop());

    const depth = async (): Promise<QueueDepth> => {
      const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
      const out = await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: work.queueUrl, AttributeNames: [...names] }));
      const attr = (name: (typeof names)[number]) => Number(out.Attributes?.[name] ?? '0');
      return { visible: attr(names[0]), inFlight: attr(names[1]), delayed: attr(names[2]), running };
    };
    const dlqDepth = async (): Promise<number> => {
      const out = await sqsClient.send(
        new GetQueueAttributesCommand({
          QueueUrl: dlq.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      return Object.values(out.Attributes ?? {}).reduce((sum, value) => sum + Number(value), 0);
    };

    // --- the schedule ---------------------------------------------------------------------------
    const tickErrors: unknown[] = [];
    let ticksRunning = 0;
    let tickCounter = 0;
    const tick = async (): Promise<ReconcileResult> => {
      ticksRunning += 1;
      tickCounter += 1;
      try {
        return await reconcileHandler(scheduledEvent(tickCounter), lambdaContext('podroute-reconcile', { timeoutSeconds: 60 }));
      } finally {
        ticksRunning -= 1;
      }
    };
    let scheduleOn = tickMs > 0;
    let timer: NodeJS.Timeout | undefined;
    const scheduleTick = () => {
      if (!scheduleOn || (ticksRunning > 0 && !options.overlapTicks)) return;
      tick().catch((error: unknown) => {
        tickErrors.push(error);
        log.log('error', 'sandbox.tick-failed', { error });
      });
    };
    const setSchedule = (on: boolean) => {
      scheduleOn = on && tickMs > 0;
      if (timer) clearInterval(timer);
      timer = undefined;
      if (scheduleOn) timer = setInterval(scheduleTick, tickMs);
    };
    cleanups.push(async () => {
      setSchedule(false);
      // A tick in flight still talks to the stand-ins: let it finish before they stop.
      while (ticksRunning > 0) await sleep(20);
    });

    // --- nodes ----------------------------------------------------------------------------------
    const kc = new KubeConfig();
    kc.loadFromOptions(kube.kubeConfig());
    const kubelet = kc.makeApiClient(CoreV1Api);
    const instances = new Map<string, string>();
    let nodeCounter = 0;

    const joinNode = async (name?: string, join: JoinOptions = {}): Promise<{ name: string; instanceId: string }> => {
      nodeCounter += 1;
      const nodeName = name ?? `node-${String(nodeCounter).padStart(3, '0')}`;
      const instance = ec2.state.addInstance({ subnetId: subnet.id, secondaryEnis, tags: { Name: nodeName, [tagKey]: 'owned' } });
      instances.set(nodeName, instance.id);
      // A node as the kubelet registers it on EC2: 10-15 KB of labels, managedFields, images and
      // nodeInfo, like a real cluster's (infra/local/kube/kubelet-node.ts).
      const body = kubeletNode({
        name: nodeName,
        instanceId: instance.id,
        zone: instance.availabilityZone,
        privateIp: instance.privateIpAddress,
        privateDnsName: instance.privateDnsName,
        index: nodeCounter,
      }) as V1Node;
      readiness.joined(nodeName);
      if (join.webhook === false) await kube.state.addNode(body, { admit: false });
      else await kubelet.createNode({ body });
      return { name: nodeName, instanceId: instance.id };
    };

    /** Nodes whose delete was refused, with their pod CIDRs then; nodes really deleted, with their instance. */
    const refused = new Map<string, string[]>();
    const departed = new Map<string, string | undefined>();
    const leaveNode = async (name: string, leave: LeaveOptions = {}): Promise<'deleted' | 'refused'> => {
      const before = kube.state.getNode(name);
      if (leave.webhook === false) await kube.state.deleteNode(name, { admit: false });
      else {
        try {
          await kubelet.deleteNode({ name });
        } catch (error) {
          // A validating webhook's refusal is 403 (apiserver webhook errors `ToStatusErr`); the node stays.
          if (!(error instanceof ApiException) || error.code !== 403 || kube.state.getNode(name) === undefined) throw error;
          refused.set(name, podCidrsOfRaw(before));
          return 'refused';
        }
      }
      readiness.left(name);
      const instanceId = instances.get(name);
      departed.set(name, instanceId);
      if (instanceId && leave.terminate !== false && ec2.state.instances.get(instanceId)?.state === 'running') {
        ec2.state.terminateInstance(instanceId);
      }
      return 'deleted';
    };

    // --- observation ----------------------------------------------------------------------------
    const leases = async (): Promise<Lease[]> => (await Promise.all(wirings.reconcile.cidrSets.map((set) => set.leases()))).flat();
    const counts = (leaseList: readonly Lease[]): RouteCounts => {
      const instancePrefixes = new Map<string, string[]>();
      if (mode === 'prefixes') {
        for (const instance of ec2.state.instances.values()) {
          if (instance.state !== 'running') continue;
          const eni = ec2.state.primaryInterface(instance.id);
          if (eni) instancePrefixes.set(instance.id, [...eni.ipv4Prefixes, ...eni.ipv6Prefixes]);
        }
      }
      return countState({
        mode,
        clusterCidrs: config.clusterCidrs,
        nodes: kube.state.nodes(),
        tables: routeTableIds.map((id) => ({ id, routes: ec2.state.routes(id) })),
        instancePrefixes,
        leases: leaseList,
      });
    };
    const startedAt = performance.now();
    let convergedMs: number | null = null;
    /**
     * Refused deletes: the node is still there with the pod CIDRs it had, Ready, and routed in every
     * cluster table (routes mode). Real deletes: no lease of the node and no route to its instance.
     */
    const leaveChecks = (leaseList: readonly Lease[]) => {
      let refusedNodesBroken = 0;
      for (const [name, cidrs] of refused) {
        const node = kube.state.getNode(name);
        const live = node ? liveNodes([node], config.clusterCidrs)[0] : undefined;
        const same = node !== undefined && JSON.stringify(podCidrsOfRaw(node)) === JSON.stringify(cidrs) && cidrs.length > 0;
        const routed =
          mode !== 'routes' ||
          (live !== undefined &&
            routeTableIds.every((id) =>
              cidrs.every((cidr) => ec2.state.routes(id).some((r) => (r.destinationCidrBlock ?? r.destinationIpv6CidrBlock) === cidr && r.state === 'active' && r.instanceId === live.instanceId)),
            ));
        if (!same || !live?.ready || !routed) refusedNodesBroken += 1;
      }
      let departedLeftovers = 0;
      for (const [name, instanceId] of departed) {
        const leased = leaseList.some((lease) => lease.owner === name);
        const routed = instanceId !== undefined && routeTableIds.some((id) => ec2.state.routes(id).some((r) => r.instanceId === instanceId));
        if (kube.state.getNode(name) !== undefined || leased || routed) departedLeftovers += 1;
      }
      return { deletesRefused: refused.size, refusedNodesBroken, departedLeftovers };
    };
    const snapshot = async (): Promise<SandboxReport> => {
      const leaseList = await leases();
      const state = counts(leaseList);
      const readyTimes = readiness.joinToReady();
      return {
        ...state,
        ...leaveChecks(leaseList),
        dlqMessages: await dlqDepth(),
        ec2Calls: Object.fromEntries(Object.entries(ec2.stats.calls).sort(([a], [b]) => (a < b ? -1 : 1))),
        throttled: ec2.stats.throttled,
        convergedMs,
        joinToReadyMs: { p50: percentile(readyTimes, 50), p99: percentile(readyTimes, 99) },
      };
    };

    const settle = async (settleOptions: SettleOptions = {}): Promise<SandboxReport> => {
      const timeoutMs = settleOptions.timeoutMs ?? 60_000;
      const pollMs = settleOptions.pollMs ?? 100;
      const deadline = performance.now() + timeoutMs;
      let lastOwnTick = performance.now();
      let last: { state: RouteCounts; depth: QueueDepth } | undefined;
      for (;;) {
        const state = counts([]);
        const queueNow = await depth();
        last = { state, depth: queueNow };
        const quiet = queueNow.visible + queueNow.inFlight + queueNow.delayed + queueNow.running === 0 && ticksRunning === 0;
        if (
          quiet &&
          state.nodesReady === state.nodes &&
          state.routesProgrammed === state.routesExpected &&
          state.wrongRoutes === 0 &&
          state.duplicateCidrs === 0
        ) {
          convergedMs = Math.round(performance.now() - startedAt);
          return snapshot();
        }
        if (performance.now() > deadline) {
          throw new Error(`sandbox did not settle within ${timeoutMs} ms: ${JSON.stringify(last)}`);
        }
        // Without a schedule, settling drives the reconciles itself, at the schedule's pace.
        if (!scheduleOn && ticksRunning === 0 && performance.now() - lastOwnTick >= (tickMs || 2000)) {
          lastOwnTick = performance.now();
          await tick().catch((error: unknown) => tickErrors.push(error));
        }
        await sleep(pollMs);
      }
    };

    // --- go -------------------------------------------------------------------------------------
    for (let i = 0; i < initialNodes; i++) await joinNode();
    setSchedule(scheduleOn);

    return {
      config,
      wirings,
      ec2,
      kube,
      queue: { sqs, client: sqsClient, queueUrl: work.queueUrl, dlqUrl: dlq.queueUrl, eventSource, depth, dlqDepth },
      db,
      webhook: { url: api.url, secret, api },
      routeTableIds,
      logLines,
      tickErrors,
      joinNode,
      leaveNode,
      instanceOf: (name) => instances.get(name),
      tick,
      settle,
      snapshot,
      status: async () => {
        const { leakedCidrs: _unused, ...state } = counts([]);
        const calls = Object.values(ec2.stats.calls).reduce((sum, n) => sum + n, 0);
        return { ...state, queue: await depth(), throttled: ec2.stats.throttled, ec2Calls: calls };
      },
      leases,
      leakedLeases: async () => leakedLeases(liveNodes(kube.state.nodes(), config.clusterCidrs), await leases()),
      setSchedule,
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * When each node's NetworkUnavailable condition turned False, from the writes podroute makes:
 * the node source every handler uses is wrapped, and a `false` write that reached the node
 * marks it ready (the first one after its join).
 */
class Readiness {
  private readonly joinedAt = new Map<string, number>();
  private readonly readyAfter = new Map<string, number>();

  joined(name: string): void {
    this.joinedAt.set(name, performance.now());
    this.readyAfter.delete(name);
  }

  left(name: string): void {
    this.joinedAt.delete(name);
  }

  /** Milliseconds from join to ready, for every node that got there. */
  joinToReady(): number[] {
    return [...this.readyAfter.values()];
  }

  observe(inner: KubeNodes): NodeSource {
    return {
      listNodes: () => inner.listNodes(),
      getNode: (name) => inner.getNode(name),
      updatePodCidr: (node, cidrs) => inner.updatePodCidr(node, cidrs),
      warn: (nodeName, reason, message) => inner.warn(nodeName, reason, message),
      setNetworkUnavailable: async (nodeName, unavailable) => {
        const result = await inner.setNetworkUnavailable(nodeName, unavailable);
        const joined = this.joinedAt.get(nodeName);
        if (!unavailable && result !== 'gone' && joined !== undefined && !this.readyAfter.has(nodeName)) {
          this.readyAfter.set(nodeName, Math.round(performance.now() - joined));
        }
        return result;
      },
    };
  }
}

/** EC2's default token buckets, refilled `timeScale` times faster (bursts unchanged). */
export function scaledThrottle(timeScale: number): ThrottleOptions {
  return {
    mutating: { capacity: DEFAULT_MUTATING.capacity, refillPerSecond: DEFAULT_MUTATING.refillPerSecond * timeScale },
    nonMutating: { capacity: DEFAULT_NON_MUTATING.capacity, refillPerSecond: DEFAULT_NON_MUTATING.refillPerSecond * timeScale },
  };
}

function scheduledEvent(n: number): ScheduledEvent {
  return {
    version: '0',
    id: `local-tick-${n}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:000000000000:rule/podroute-reconcile`],
    detail: {},
  };
}

function isBatchResponse(value: unknown): value is SQSBatchResponse {
  return typeof value === 'object' && value !== null && 'batchItemFailures' in value;
}

/** `spec.podCIDRs` (or `spec.podCIDR`) of a node as the emulator stores it. */
function podCidrsOfRaw(node: Record<string, unknown> | undefined): string[] {
  const spec = node?.spec;
  if (typeof spec !== 'object' || spec === null) return [];
  const list = (spec as Record<string, unknown>).podCIDRs;
  if (Array.isArray(list)) return list.filter((c): c is string => typeof c === 'string');
  const one = (spec as Record<string, unknown>).podCIDR;
  return typeof one === 'string' && one !== '' ? [one] : [];
}
