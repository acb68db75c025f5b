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
 * retry backoff and adaptive rate limiter, EC2's throttling refill rates, and the delays the
 * functions put on messages (the webhook's 10 s node-left check: 1 s). Leases of vanished nodes are reclaimed after
 * LEASE_GRACE_SECONDS = 1 (10 minutes in production) so a final reconcile can show that nothing leaked.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { EC2Client } from '@aws-sdk/client-ec2';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Node } from '@kubernetes/client-node';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createNodeWebhookHandler } from '../../../functions/node-webhook.ts';
import { createReconcileHandler } from '../../../functions/reconcile.ts';
import { createRouteWorkerHandler } from '../../../functions/route-worker.ts';
import { createCloudEventsHandler } from '../../../functions/cloud-events.ts';
import { callerOf } from '../ec2/cloud-events.ts';
import { type EventBus, createEventBus } from './event-bus.ts';
import { buildWiring } from '../../../functions/wiring.ts';
import type { Wiring } from '../../../functions/wiring.ts';
import { loadConfig } from '../../../lib/config.ts';
import { createKubeConfig } from '../../../lib/kube/kube-config.ts';
import { KubeNodes } from '../../../lib/kube/kube-nodes.ts';
import { jsonLogger, memoryLogger } from '../../../lib/log.ts';
import type { Logger } from '../../../lib/log.ts';
import { startEc2Emulator } from '../ec2/index.ts';
import type { FaultKind } from '../ec2/index.ts';
import { createEc2Client } from '../../../lib/aws/ec2-client.ts';
import { clusterTagKey } from '../../../lib/routes/index.ts';
import { startKubeEmulator } from '../kube/index.ts';
import { manifestMatchConditions } from '../kube/match-conditions.ts';
import { StandInCcm, asExternalCloudProvider } from './ccm.ts';
import { kubeletNode } from '../kube/kubelet-node.ts';
import { startLocalSqs } from '../queue/local-sqs.ts';
import { startLocalDynamoDb } from '../dynamodb.ts';
import { startHttpApi } from './http-api.ts';
import { countState, leakedLeases, liveNodes, percentile } from './report.ts';
import type { LeaseRecord, NodeRecord } from './report.ts';
import { scanLeases } from './lease-table.ts';
import { ShortListings } from './hostile.ts';
import { buildWorld, scaledThrottle } from './world.ts';
import { Readiness } from './readiness.ts';
import { checkLeaves, interfacesOf, podCidrsOfStored, watchLiveRouteRemovals } from './observe.ts';
import { startWorkerSource } from './worker-source.ts';
import { scaleDelays } from './scaled-delays.ts';
import { createSchedule } from './schedule.ts';
import type { JoinOptions, LeaveOptions, QueueDepth, Sandbox, SandboxOptions, SettleOptions } from './types.ts';

import type { RouteCounts, SandboxReport } from './report.ts';

/**
 * How long a new instance stays invisible to the EC2 API in the sandbox, before scaling: a pessimistic
 * guess of the propagation delay (EC2 Developer Guide, "Eventual consistency in the Amazon EC2 API",
 * gives no figure, only "might not be immediately visible").
 */
const LAUNCH_LAG_PRODUCTION_MS = 60_000;
const REGION = 'us-east-1';
/** The queue's callers (local-sqs.ts counts per caller): the event source stands in for Lambda's pollers. */
export const EVENT_SOURCE_CALLER = 'event-source';
/** The sandbox's own looks at the queue (depths while it settles, messages tests inject): not production's. */
export const SANDBOX_CALLER = 'sandbox';
/** The queue's own redrive to the DLQ: SQS does it on AWS (RedrivePolicy), unbilled and by no caller. */
const REDRIVE_CALLER = 'redrive';
/** The callers whose requests production pays for: the three functions and Lambda's event source. */
export const PRODUCTION_CALLERS = ['reconcile', 'worker', 'webhook', 'events', EVENT_SOURCE_CALLER] as const;
/** podroute's functions sign as sessions of one role (the emulator's CloudTrail events name it: ../ec2/cloud-events.ts). */
const PODROUTE_KEY = 'role:podroute-sandbox';
const CREDENTIALS = { accessKeyId: PODROUTE_KEY, secretAccessKey: 'local' };

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
  if (options.timeScale !== undefined && !(Number.isFinite(options.timeScale) && options.timeScale >= 1)) throw new RangeError(`timeScale ${options.timeScale}: want a number >= 1`);
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
    // The EventBridge bus (event-bus.ts) exists once the handlers do; the emulator posts to it late.
    const bus: { current?: EventBus } = {};
    const ec2 = await startEc2Emulator({
      ...(options.cloudEvents ? { onCloudEvent: (event: Record<string, unknown>) => void bus.current?.put(event) } : {}),
      routeLimit: options.routeLimit ?? defaultLimit,
      ...(options.routeTargetFields ? { routeTargetFields: options.routeTargetFields } : {}),
      notFoundAfterLaunchMs: options.notFoundAfterLaunchMs ?? (mode === 'routes' && tickMs > 0 ? LAUNCH_LAG_PRODUCTION_MS / timeScale : 0),
      throttle: options.throttle === false ? false : typeof options.throttle === 'object' ? options.throttle : scaledThrottle(timeScale),
      ...(faults > 0 ? { faults: { share: faults, kinds: ['RequestLimitExceeded', 'InternalError', 'ServiceUnavailable'] satisfies FaultKind[] } } : {}),
    });
    cleanups.push(() => ec2.close());
    const world = buildWorld(ec2.state, { mode, dualStack, subnets: options.subnets, routeTables: tableCount, clusterName, clusterCidr: options.clusterCidr });
    const { routeTableIds } = world;
    const tagKey = clusterTagKey(clusterName);

    // --- DynamoDB, SQS ------------------------------------------------------------------------
    const db = await startLocalDynamoDb({ region: REGION });
    cleanups.push(() => db.close());
    const sqs = await startLocalSqs({ region: REGION });
    cleanups.push(() => sqs.stop());
    const visibility = options.visibilityTimeoutSeconds ?? 6;
    const dlq = await sqs.createQueue('podroute-dlq', { MessageRetentionPeriod: '1209600' });
    // No RedrivePolicy on the queue: the event source moves messages to the DLQ itself (and counts them).
    const work = await sqs.createQueue('podroute-work', { VisibilityTimeout: String(visibility) });
    // Each client signs with its own caller name, so the queue's counts tell production's requests
    // (the functions' and the event source's) from the sandbox's own looks at the queue depth.
    const sqsClient = sqs.createClient(SANDBOX_CALLER);

    // --- Kubernetes, with its admission webhook pointed at the local HTTP API ------------------
    const secret = randomBytes(24).toString('hex');
    // The NodeJoined / NodeLeft signing key: a second secret, as in the stack.
    const signingKey = randomBytes(24).toString('hex');
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
    // Both webhooks of infra/kubernetes/webhook.yaml, the UPDATE one with the manifest's matchConditions.
    const onNodeUpdate = { ...webhookTarget, matchConditions: manifestMatchConditions('node-provider-id.podroute.io') };
    const kube = await startKubeEmulator({ onNodeCreate: webhookTarget, onNodeUpdate, onNodeDelete: webhookTarget, denyDeletes });
    cleanups.push(() => kube.close());

    // --- wiring: one per function, as separate Lambdas each build their own --------------------
    // The sandbox fast-forwards time, so its lease grace is below the production floor that
    // loadConfig enforces (LEASE_GRACE_SECONDS >= 300): loaded at a production value, then set.
    const loaded = loadConfig({
      CLUSTER_NAME: clusterName,
      CLUSTER_CIDRS: (dualStack ? [world.cluster.v4, world.cluster.v6] : [world.cluster.v4]).join(','),
      NODE_MASK_SIZE_IPV4: String(world.cluster.mask4),
      NODE_MASK_SIZE_IPV6: String(world.cluster.mask6),
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
    const shortListings = new ShortListings();
    // Retry delays (SDK backoff, visibility backoff) run on the same fast-forwarded clock; a slower
    // schedule than production's keeps production's delays.
    const clientTimeScale = Math.max(1, options.timeScale ?? timeScale);
    const ec2Clients: EC2Client[] = [];
    const makeWiring = async (fn: 'reconcile' | 'worker' | 'webhook' | 'events'): Promise<Wiring> => {
      // The production client's retry settings, pointed at the emulator.
      const ec2Client = createEc2Client(
        {
          endpoint: ec2.url,
          region: REGION,
          credentials: CREDENTIALS,
          ...(options.ec2MaxAttempts === undefined ? {} : { maxAttempts: options.ec2MaxAttempts }),
        },
        // The SDK's backoff and per-action adaptive rate limiters on the sandbox's clock (lib/aws/ec2-client.ts).
        { timeScale: clientTimeScale },
      );
      ec2Clients.push(ec2Client);
      // podroute's own identity, allowed only what infra/kubernetes/rbac.yaml grants.
      const kubeConfig = await createKubeConfig({ kind: 'options', options: kube.kubeConfig(kube.podrouteToken) });
      const nodes = shortListings.wrap(readiness.observe(new KubeNodes(kubeConfig, { onListRestart: (restart) => log.log('warn', 'kube.list-restarted', { ...restart }) })));
      return buildWiring(config, { ec2: ec2Client, sqs: scaleDelays(sqs.createClient(fn), clientTimeScale), dynamodb: db.client() }, nodes, async () => secret, {
        log,
        timeScale: clientTimeScale,
        eventSigningKey: async () => signingKey,
      });
    };
    cleanups.push(() => {
      for (const client of ec2Clients) client.destroy();
    });
    // The sandbox never freezes between invocations (a Lambda sandbox does), and it scales waits but
    // not compute: its worker keeps running what is left at the deadline instead of aborting it.
    const wirings = { reconcile: await makeWiring('reconcile'), worker: { ...(await makeWiring('worker')), abortAtDeadline: false }, webhook: await makeWiring('webhook') };
    late.webhook = createNodeWebhookHandler(async () => wirings.webhook);
    const reconcileHandler = createReconcileHandler(async () => wirings.reconcile);
    const workerHandler = createRouteWorkerHandler(async () => wirings.worker);
    const eventsWiring = options.cloudEvents ? await makeWiring('events') : undefined;
    if (eventsWiring) {
      // podroute's own writes come from its role (OWN_PRINCIPAL_ARNS in the stack).
      const own = callerOf(PODROUTE_KEY);
      const ownPrincipals = [own.type === 'AssumedRole' ? own.roleArn : own.arn];
      bus.current = createEventBus(createCloudEventsHandler(async () => eventsWiring, ownPrincipals), 'podroute-cloud-events');
    }

    // --- the worker's event source -------------------------------------------------------------
    const { eventSource, depth, dlqDepth } = await startWorkerSource({
      sqsClient: sqs.createClient(EVENT_SOURCE_CALLER),
      observer: sqsClient,
      redriveClient: sqs.createClient(REDRIVE_CALLER),
      queueUrl: work.queueUrl,
      dlqUrl: dlq.queueUrl,
      maximumConcurrency: options.maximumConcurrency ?? 5,
      maxReceiveCount: config.maxReceiveCount,
      visibilityTimeoutSeconds: visibility,
      handler: workerHandler,
      log,
    });
    cleanups.push(() => eventSource.stop());

    // --- the schedule ---------------------------------------------------------------------------
    const schedule = createSchedule({ tickMs, overlapTicks: options.overlapTicks ?? false, handler: reconcileHandler, log });
    const { tick, setSchedule } = schedule;
    const tickErrors = schedule.errors;
    cleanups.push(() => schedule.stop());

    // --- nodes ----------------------------------------------------------------------------------
    // Nodes register as their own kubelet (`system:node:<name>`, so NodeRestriction applies) and
    // leave by an admin's DELETE (a kubelet may not delete its Node), as in a real cluster.
    const clientAs = (token?: string): CoreV1Api => {
      const kc = new KubeConfig();
      kc.loadFromOptions(kube.kubeConfig(token));
      return kc.makeApiClient(CoreV1Api);
    };
    const operator = clientAs();
    const ccm = new StandInCcm(operator, options.ccmDelayMs ?? 200, log);
    cleanups.push(() => ccm.stop());
    const instances = new Map<string, string>();
    /** The sandbox's own record of the nodes it registered (the judge's truth, report.ts). */
    const record = new Map<string, NodeRecord>();
    let nodeCounter = 0;

    const joinNode = async (name?: string, join: JoinOptions = {}): Promise<{ name: string; instanceId: string }> => {
      nodeCounter += 1;
      const nodeName = name ?? `node-${String(nodeCounter).padStart(3, '0')}`;
      // Nodes spread over the subnets (and so the zones) in turn, as an Auto Scaling group balances them.
      const subnet = world.subnets[(nodeCounter - 1) % world.subnets.length];
      if (!subnet) throw new Error('the sandbox world has no subnet');
      // A re-join registers a Node on a running instance (a kubelet registering again); else a new instance.
      const running = join.instanceId === undefined ? undefined : ec2.state.instances.get(join.instanceId);
      if (join.instanceId !== undefined && running?.state !== 'running') throw new Error(`instance ${join.instanceId} is not running`);
      const instance = running ?? ec2.state.addInstance({ subnetId: subnet.id, secondaryEnis, tags: { Name: nodeName, [tagKey]: 'owned' } });
      instances.set(nodeName, instance.id);
      const hostile = join.podCidrs !== undefined || join.providerId !== undefined;
      record.set(nodeName, { instanceId: instance.id, ...(hostile ? { hostile, planted: join.podCidrs ?? [] } : {}) });
      // A node as the kubelet registers it on EC2: about 8 KB of labels, images and nodeInfo, like
      // a real cluster's, with no server-set field (infra/local/kube/kubelet-node.ts).
      let body = kubeletNode({
        name: nodeName,
        instanceId: instance.id,
        zone: instance.availabilityZone,
        privateIp: instance.privateIpAddress,
        privateDnsName: instance.privateDnsName,
        index: nodeCounter,
      }) as V1Node;
      const external = join.externalCcm ?? options.externalCcm ?? false;
      if (external) body = asExternalCloudProvider(body);
      // A hostile kubelet sets its own spec.podCIDR(s) and spec.providerID at CREATE, as a real one
      // may (NodeRestriction checks neither: k8s plugin/pkg/admission/noderestriction).
      if (hostile) {
        body.spec = {
          ...body.spec,
          ...(join.podCidrs ? { podCIDR: join.podCidrs[0], podCIDRs: [...join.podCidrs] } : {}),
          ...(join.providerId ? { providerID: join.providerId } : {}),
        };
      }
      readiness.joined(nodeName);
      if (join.webhook === false) await kube.state.addNode(body, { admit: false });
      else await clientAs(kube.state.kubeletToken(nodeName)).createNode({ body });
      if (external && join.providerId === undefined) ccm.initializeLater(nodeName, `aws:///${instance.availabilityZone}/${instance.id}`);
      return { name: nodeName, instanceId: instance.id };
    };

    const isRefusal = (error: unknown): boolean => error instanceof ApiException && error.code >= 400 && error.code < 500;
    /** Nodes whose delete was refused, with their pod CIDRs then; nodes really deleted, with their instance. */
    const refused = new Map<string, string[]>();
    const departed = new Map<string, string | undefined>();
    const leaveNode = async (name: string, leave: LeaveOptions = {}): Promise<'deleted' | 'refused'> => {
      const before = kube.state.getNode(name);
      if (leave.webhook === false) await kube.state.deleteNode(name, { admit: false });
      else {
        try {
          await operator.deleteNode({ name });
        } catch (error) {
          // A validating webhook's refusal carries that webhook's code, 400 when it gives none
          // (apiserver webhook errors `ToStatusErr`): any 4xx answer that leaves the node is a refusal.
          if (!isRefusal(error) || kube.state.getNode(name) === undefined) throw error;
          refused.set(name, podCidrsOfStored(before));
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
    // Leases straight from the CIDR table (lease-table.ts), not through podroute's sets.
    const leaseClient = db.client();
    const leases = (): Promise<LeaseRecord[]> => scanLeases(leaseClient, db.tableName);
    /** Routes an operator client is writing (table|destination), consumed by the judge's removal watch. */
    const operatorWrites = new Set<string>();
    const liveRoutesRemoved = watchLiveRouteRemovals(ec2.state, {
      nodeOfInstance: (instanceId) => {
        for (const [name, own] of record) if (own.instanceId === instanceId) return { name, hostile: own.hostile === true };
        return undefined;
      },
      getNode: (name) => kube.state.getNode(name),
      byOperator: (table, destination) => operatorWrites.delete(`${table}|${destination}`),
    });
    const counts = (leaseList: readonly LeaseRecord[]): RouteCounts =>
      countState({
        mode,
        clusterCidrs: config.clusterCidrs,
        nodes: kube.state.nodes(),
        record,
        tables: routeTableIds.map((id) => ({ id, routes: ec2.state.routes(id) })),
        interfaces: interfacesOf(ec2.state),
        leases: leaseList,
        readyNodesTainted: readiness.tainted(),
        liveRoutesRemoved: liveRoutesRemoved(),
      });
    const startedAt = performance.now();
    let convergedMs: number | null = null;
    const leaveChecks = (leaseList: readonly LeaseRecord[]) =>
      checkLeaves({
        mode,
        clusterCidrs: config.clusterCidrs,
        routeTableIds,
        ec2: ec2.state,
        getNode: (name) => kube.state.getNode(name),
        instanceOf: (name) => instances.get(name),
        refused,
        departed,
        leases: leaseList,
      });
    /** SQS requests production would make (the functions' and the event source's), per action. */
    const sqsCounts = (): Pick<SandboxReport, 'sqsCalls' | 'sqsEmptyReceives'> => {
      const billed = sqs.stats.total(PRODUCTION_CALLERS);
      return { sqsCalls: Object.fromEntries(Object.entries(billed.calls).sort(([a], [b]) => (a < b ? -1 : 1))), sqsEmptyReceives: billed.emptyReceives };
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
        ...sqsCounts(),
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
      let last: { state: Omit<RouteCounts, 'leakedCidrs' | 'routesToNonLeaseholder'>; depth: QueueDepth } | undefined;
      for (;;) {
        // No lease scan while polling: the numbers that need leases are left out.
        const { leakedCidrs: _leaked, routesToNonLeaseholder: _unread, ...state } = counts([]);
        const queueNow = await depth();
        last = { state, depth: queueNow };
        const quiet = queueNow.visible + queueNow.inFlight + queueNow.delayed + queueNow.running === 0 && schedule.running() === 0 && (bus.current?.pending() ?? 0) === 0;
        if (
          quiet &&
          state.honestNodesNotReady === 0 &&
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
        if (!schedule.isOn() && schedule.running() === 0 && performance.now() - lastOwnTick >= (tickMs || 2000)) {
          lastOwnTick = performance.now();
          await tick().catch((error: unknown) => tickErrors.push(error));
        }
        await sleep(pollMs);
      }
    };

    // --- go -------------------------------------------------------------------------------------
    for (let i = 0; i < initialNodes; i++) await joinNode();
    setSchedule(tickMs > 0);

    return {
      config,
      wirings,
      ec2,
      kube,
      queue: { sqs, client: sqsClient, queueUrl: work.queueUrl, dlqUrl: dlq.queueUrl, eventSource, depth, dlqDepth },
      db,
      webhook: { url: api.url, secret, signingKey, api },
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
        const { leakedCidrs: _leaked, routesToNonLeaseholder: _unread, ...state } = counts([]);
        const calls = Object.values(ec2.stats.calls).reduce((sum, n) => sum + n, 0);
        return { ...state, queue: await depth(), throttled: ec2.stats.throttled, ec2Calls: calls };
      },
      leases,
      leakedLeases: async () => leakedLeases(liveNodes(kube.state.nodes(), config.clusterCidrs, record), await leases()),
      record,
      setShortListings: (dropPerListing) => shortListings.set(dropPerListing),
      setSchedule,
      events: bus.current ?? null,
      operatorEc2: (user = 'operator') => {
        const client = new EC2Client({ endpoint: ec2.url, region: REGION, credentials: { accessKeyId: user, secretAccessKey: 'local' }, maxAttempts: 1 });
        // Its route writes are on purpose: the judge does not count the routes they take (observe.ts).
        client.middlewareStack.add((next, context) => async (args) => {
          const input = args.input as { RouteTableId?: string; DestinationCidrBlock?: string; DestinationIpv6CidrBlock?: string };
          const removes = context.commandName === 'DeleteRouteCommand' || context.commandName === 'ReplaceRouteCommand';
          if (removes && input.RouteTableId !== undefined) operatorWrites.add(`${input.RouteTableId}|${input.DestinationCidrBlock ?? input.DestinationIpv6CidrBlock ?? ''}`);
          return next(args);
        }, { step: 'initialize', name: 'sandboxOperatorWrites' });
        ec2Clients.push(client);
        return client;
      },
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
