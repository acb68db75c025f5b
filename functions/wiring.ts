/**
 * Wiring: environment -> config -> SDK clients -> adapters, once per Lambda container (cold start).
 * Each handler module calls `wiringFromEnv` lazily at first use; tests and the sandbox build the
 * same `Wiring` from their own clients and hand it to the handler factories instead.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EC2Client } from '@aws-sdk/client-ec2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { tryParseCidr } from '../lib/cidr/cidr.ts';
import { loadConfig } from '../lib/config.ts';
import type { Config } from '../lib/config.ts';
import { createCidrSet } from '../lib/ipam/index.ts';
import type { CidrSet } from '../lib/ipam/index.ts';
import { jsonLogger } from '../lib/log.ts';
import type { Logger } from '../lib/log.ts';
import type { ClaimCensusStore, DeletionWindowStore, EniPrefixes, NodeSource, ReservationSets, RouteTables, Subnets, UsedReservationSets, WorkQueue, InstanceStates, RouteTargets } from '../lib/usecases/ports.ts';
import type { DataPlane } from '../lib/dataplane/data-plane.ts';
import { prefixesPlane } from '../lib/dataplane/prefixes/prefixes-plane.ts';
import { noRouteTables, noRouteTargets } from '../lib/dataplane/prefixes/no-route-tables.ts';
import { routesPlane } from '../lib/dataplane/routes/routes-plane.ts';
import { readOnlyClients, readOnlyNodes } from '../lib/aws/read-only-clients.ts';
import { DynamoDbCidrStore, cidrSetId } from '../lib/aws/dynamodb-cidr-store.ts';
import { DynamoDbClaimCensus } from '../lib/aws/dynamodb-claim-census.ts';
import { DynamoDbDeletionWindow } from '../lib/aws/dynamodb-deletion-guard.ts';
import { DynamoDbSetRegistry } from '../lib/aws/dynamodb-set-registry.ts';
import { createEc2Client } from '../lib/aws/ec2-client.ts';
import { countEc2Throttles } from '../lib/aws/ec2-throttle-count.ts';
import { Ec2EniPrefixes, assertPrefixMask } from '../lib/aws/ec2-prefixes.ts';
import { Ec2InstanceStates } from '../lib/aws/ec2-instance-states.ts';
import { Ec2RouteTables } from '../lib/aws/ec2-route-tables.ts';
import { CachedSubnets, Ec2Subnets, SUBNET_CACHE_TTL_MS } from '../lib/aws/ec2-subnets.ts';
import { EksTokenProvider } from '../lib/aws/eks-token.ts';
import { SqsWorkQueue } from '../lib/aws/sqs-work-queue.ts';
import type { WebhookSecrets } from '../lib/aws/webhook-secrets.ts';
import { createKubeConfig } from '../lib/kube/kube-config.ts';
import { abortable } from '../lib/util/abort-scope.ts';
import { KubeNodes } from '../lib/kube/kube-nodes.ts';
import { selectorKeys } from '../lib/nodes/label-selector.ts';
import { Ec2RouteTargets } from '../lib/aws/ec2-route-targets.ts';

/** Everything a handler needs; built once per container. */
export interface Wiring {
  config: Config;
  /** The data plane of `config.mode`, chosen here once: the use cases never ask for the mode. */
  plane: DataPlane;
  /** The cluster's route tables (routes mode; prefixes mode has none: every call rejects). */
  routeTables: RouteTables;
  /** The node side of a route (routes mode; prefixes mode has none: every call rejects). */
  routeTargets: RouteTargets;
  /** The nodes' primary interfaces (both modes: routes mode matches interface-only routes by them). */
  prefixes: EniPrefixes;
  /** Prefixes mode: subnets and their CIDR reservations, and one CIDR set per pod range. */
  subnets?: Subnets;
  reservationSets?: ReservationSets;
  /** Prefixes mode: the sets of every registered pod range (a node's leave looks in them). */
  usedReservationSets?: UsedReservationSets;
  nodes: NodeSource;
  queue: WorkQueue;
  /** Routes mode: one CIDR set per cluster CIDR (prefixes mode allocates from pod ranges only). */
  cidrSets: CidrSet[];
  /** Routes mode: instance states by id (the cloud-events function confirms an event with it); absent, no event-driven repair. */
  instances?: InstanceStates;
  /** The mass-deletion guard's window of runs, an item of the CIDR table. */
  deletionWindow?: DeletionWindowStore;
  /** Whether stored nodes may carry unleased pod CIDRs (lib/usecases/claim-census.ts), an item of the CIDR table. */
  claimCensus?: ClaimCensusStore;
  /**
   * The webhook's shared secret: the current one, or the current and the previous one during a
   * rotation. Cached for WEBHOOK_SECRET_TTL_MS, so a rotated secret is picked up without a cold start.
   */
  webhookSecret: () => Promise<string | WebhookSecrets>;
  /**
   * The key that signs NodeJoined / NodeLeft events: another secret than the token, cached alike.
   * Absent (a wiring without one): signed events are answered 503.
   */
  eventSigningKey?: () => Promise<string | WebhookSecrets>;
  log: Logger;
  now: () => number;
  /**
   * How much faster than production this world's clocks run (1 in Lambda). The local sandbox
   * fast-forwards the schedule and the queue's timeouts, and scales the worker's retry delays alike.
   */
  timeScale?: number;
  /**
   * The route worker aborts what is still running at its deadline (default). Off only where the
   * process is not frozen after an invocation (the local sandbox), so nothing can resume late.
   */
  abortAtDeadline?: boolean;
  /**
   * Observe mode (config `writes: off`): the clients and the node source refuse every write, and
   * each handler plans and reports what it would do instead of doing it (docs/decisions/0028-observe-mode.md).
   */
  observe?: boolean;
}

interface Clients {
  ec2: EC2Client;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
}

/** The mode's ports and its plane: only what that mode uses is built. */
type PlaneParts = Pick<Wiring, 'plane' | 'routeTables' | 'routeTargets' | 'cidrSets' | 'subnets' | 'reservationSets' | 'usedReservationSets' | 'instances'>;

/** Builds the wiring from already-made clients and a kube node source (shared by Lambda and sandbox). */
export async function buildWiring(
  config: Config,
  clients: Clients,
  nodes: NodeSource,
  webhookSecret: () => Promise<string | WebhookSecrets>,
  options: { log?: Logger; now?: () => number; timeScale?: number; eventSigningKey?: () => Promise<string | WebhookSecrets>; readOnly?: boolean } = {},
): Promise<Wiring> {
  const now = options.now ?? Date.now;
  const log = options.log ?? jsonLogger({ base: { cluster: config.clusterName } });
  // Observe mode is chosen here, once; a dry run's clients are read-only already.
  const observe = config.writes === 'off';
  if (observe && options.readOnly !== true) {
    clients = readOnlyClients(clients, refusedWrite(log));
    nodes = readOnlyNodes(nodes, refusedWrite(log));
  }
  // Every throttled EC2 attempt, also those the SDK's retries recover from (dashboard: throttles).
  countEc2Throttles(clients.ec2, () => log.metric('EC2Throttled', 1));
  // EC2 and DynamoDB calls carry the abort signal of the work under way: the route worker aborts
  // what is still running at its deadline (lib/util/abort-scope.ts). Outside that, no signal.
  abortable(clients.ec2);
  abortable(clients.dynamodb);
  const prefixes = new Ec2EniPrefixes(clients.ec2);
  const storedSet = storedSetOf(config, clients, now, log);
  const readOnly = options.readOnly === true || observe;
  const parts = config.mode === 'prefixes' ? prefixesParts(config, clients, { prefixes, nodes, log, now, storedSet, readOnly }) : await routesParts(config, clients, prefixes, storedSet);
  return {
    config,
    ...parts,
    prefixes,
    nodes,
    queue: new SqsWorkQueue(clients.sqs, config.queueUrl),
    deletionWindow: new DynamoDbDeletionWindow({ client: clients.dynamodb, tableName: config.cidrTableName }),
    claimCensus: new DynamoDbClaimCensus({ client: clients.dynamodb, tableName: config.cidrTableName }),
    webhookSecret: cachedFor(webhookSecret, WEBHOOK_SECRET_TTL_MS, now),
    ...(options.eventSigningKey ? { eventSigningKey: cachedFor(options.eventSigningKey, WEBHOOK_SECRET_TTL_MS, now) } : {}),
    log,
    now,
    timeScale: options.timeScale ?? 1,
    ...(observe ? { observe } : {}),
  };
}

/** A write that reached a read-only client in observe mode: a use case did not stop before it. */
const refusedWrite = (log: Logger) => (what: string): void => {
  log.log('error', 'observe.write-refused', { what });
  log.metric('WritesRefused', 1);
};

type StoredSet = (range: string, rangeKind?: 'cluster CIDR' | 'pod range') => Promise<CidrSet>;

/** One CIDR set per range (a cluster CIDR, or in prefixes mode a pod range), one partition each. */
function storedSetOf(config: Config, clients: Clients, now: () => number, log: Logger): StoredSet {
  return (range, rangeKind = 'cluster CIDR') => {
    const family = tryParseCidr(range)?.family ?? 4;
    const nodeMaskSize = config.nodeMaskSize[family];
    const store = new DynamoDbCidrStore({
      client: clients.dynamodb,
      tableName: config.cidrTableName,
      setId: cidrSetId(range, nodeMaskSize),
      clock: now,
      // A conditional write that lost a race with another allocator (dashboard: allocation conflicts).
      onConditionalFailure: () => log.metric('AllocationConflicts', 1),
    });
    return createCidrSet({ clusterCidr: range, nodeMaskSize, store, rangeKind });
  };
}

/** Routes mode: the cluster's tables and one set per cluster CIDR. */
async function routesParts(config: Config, clients: Clients, prefixes: EniPrefixes, storedSet: StoredSet): Promise<PlaneParts> {
  const routeTables = new Ec2RouteTables(clients.ec2, { clusterName: config.clusterName, routeTableIds: config.routeTableIds });
  const cidrSets = await Promise.all(config.clusterCidrs.map((cidr) => storedSet(cidr)));
  // Event-driven repair (functions/cloud-events.ts) confirms a termination with EC2: routes mode only.
  return { plane: routesPlane({ config, routeTables, cidrSets, interfaces: prefixes }), routeTables, routeTargets: new Ec2RouteTargets(clients.ec2), cidrSets, instances: new Ec2InstanceStates(clients.ec2) };
}

/** Prefixes mode: subnets, the pod ranges' sets (registered before first use), and no route table. */
function prefixesParts(
  config: Config,
  clients: Clients,
  ports: { prefixes: EniPrefixes; nodes: NodeSource; log: Logger; now: () => number; storedSet: StoredSet; readOnly: boolean },
): PlaneParts {
  for (const cidr of config.clusterCidrs) {
    const family = tryParseCidr(cidr)?.family ?? 4;
    assertPrefixMask(family, config.nodeMaskSize[family]);
  }
  const { reservationSets, usedReservationSets } = podRangeSets(config, clients, ports.storedSet, ports.readOnly);
  const subnets = new CachedSubnets(new Ec2Subnets(clients.ec2), SUBNET_CACHE_TTL_MS, ports.now);
  const plane = prefixesPlane({ config, prefixes: ports.prefixes, subnets, reservationSets, usedReservationSets, nodes: ports.nodes, log: ports.log });
  return { plane, routeTables: noRouteTables, routeTargets: noRouteTargets, cidrSets: [], subnets, reservationSets, usedReservationSets };
}

/**
 * A pod range is registered (lib/ipam/set-registry.ts) before its set is first handed out, so
 * every set that can hold a lease is listed where a node's leave finds it; once per range and
 * container. Sets made before the registry existed are registered by reconcile's first tick,
 * which opens the set of every pod range of the nodes' subnets. A read-only wiring (the dry run's)
 * opens the sets without registering them, which is a write.
 */
function podRangeSets(config: Config, clients: Clients, storedSet: StoredSet, readOnly: boolean): { reservationSets: ReservationSets; usedReservationSets: UsedReservationSets } {
  const rangeSets = new Map<string, Promise<CidrSet>>();
  const openSet = (range: string): Promise<CidrSet> => {
    let set = rangeSets.get(range);
    if (!set) {
      set = storedSet(range, 'pod range');
      rangeSets.set(range, set);
      set.catch(() => rangeSets.delete(range));
    }
    return set;
  };
  const registry = new DynamoDbSetRegistry({ client: clients.dynamodb, tableName: config.cidrTableName });
  const registered = new Map<string, Promise<void>>();
  const register = (range: string): Promise<void> => {
    let done = registered.get(range);
    if (!done) {
      done = registry.add([range]);
      registered.set(range, done);
      done.catch(() => registered.delete(range));
    }
    return done;
  };
  const reservationSets: ReservationSets = async (range) => {
    if (!readOnly) await register(range);
    return openSet(range);
  };
  // Reads the registry only: no EC2 call and no write (the worker's role may only read and delete).
  const usedReservationSets: UsedReservationSets = async () => Promise.all((await registry.list()).map(openSet));
  return { reservationSets, usedReservationSets };
}

/** The ports and settings every use case takes, from a wiring. */
export function useCaseDeps(wiring: Wiring) {
  return {
    config: wiring.config,
    plane: wiring.plane,
    routeTables: wiring.routeTables,
    routeTargets: wiring.routeTargets,
    nodes: wiring.nodes,
    queue: wiring.queue,
    cidrSets: wiring.cidrSets,
    ...(wiring.deletionWindow ? { deletionWindow: wiring.deletionWindow } : {}),
    ...(wiring.claimCensus ? { claimCensus: wiring.claimCensus } : {}),
    log: wiring.log,
    now: wiring.now,
  };
}

/** The Lambda wiring: config from the environment, clients from the execution role. */
export async function wiringFromEnv(env: Record<string, string | undefined>, options: { log?: Logger; capture?: <T>(client: T) => T } = {}): Promise<Wiring> {
  const config = loadConfig(env);
  if (!config.queueUrl) throw new Error('QUEUE_URL is not set');
  if (!config.cidrTableName) throw new Error('CIDR_TABLE_NAME is not set');
  const region = env.AWS_REGION ?? 'us-east-1';
  // Traced (X-Ray) when the handler traces: functions/tracing.ts.
  const capture = options.capture ?? (<T>(client: T): T => client);
  const clients: Clients = { ec2: capture(createEc2Client({ region })), sqs: capture(new SQSClient({ region })), dynamodb: capture(new DynamoDBClient({ region })) };
  const kubeConfig = await createKubeConfig(
    config.kube.auth === 'eks'
      ? {
          kind: 'eks',
          clusterName: config.kube.eksClusterName,
          describeCluster: async (name) => {
            // Loaded on first use: only the EKS flavour of a cold start pays for this client.
            const { DescribeClusterCommand, EKSClient } = await import('@aws-sdk/client-eks');
            const out = await new EKSClient({ region }).send(new DescribeClusterCommand({ name }));
            return out.cluster ?? {};
          },
          tokens: new EksTokenProvider({ clusterName: config.kube.eksClusterName, region }),
        }
      : { kind: 'secret', fetchSecret: () => readSecretsManager(region, config.kube.secretId ?? '') },
  );
  const readSecrets = (variable: string, id: string) => async (): Promise<WebhookSecrets> => {
    if (!id) throw new Error(`${variable} is not set`);
    // Loaded on first use, like the clients they call: only the webhook reads its secret.
    const { secretsManagerWebhookSecrets, ssmWebhookSecrets } = await import('../lib/aws/webhook-secrets.ts');
    if (config.webhookSecret.source === 'ssm') {
      const { SSMClient } = await import('@aws-sdk/client-ssm');
      return ssmWebhookSecrets(new SSMClient({ region }), id);
    }
    const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    return secretsManagerWebhookSecrets(new SecretsManagerClient({ region }), id);
  };
  const log = options.log ?? jsonLogger({ base: { cluster: config.clusterName } });
  // Listed nodes keep only the labels the node selector reads (lib/kube/kube-nodes.ts `keepLabels`).
  const nodes = new KubeNodes(kubeConfig, { keepLabels: selectorKeys(config.nodeSelector), onListRestart: (restart) => log.log('warn', 'kube.list-restarted', { ...restart }) });
  const webhookSecret = readSecrets('WEBHOOK_SECRET_ID', config.webhookSecret.id);
  const eventSigningKey = readSecrets('WEBHOOK_SIGNING_SECRET_ID', config.webhookSecret.signingKeyId);
  return buildWiring(config, clients, nodes, webhookSecret, { log, eventSigningKey });
}

async function readSecretsManager(region: string, id: string): Promise<string> {
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const out = await new SecretsManagerClient({ region }).send(new GetSecretValueCommand({ SecretId: id }));
  if (out.SecretString === undefined || out.SecretString === '') throw new Error(`secret ${id} has no string value`);
  return out.SecretString;
}

/**
 * How long the webhook secret is trusted before it is read again (a rotation is seen within this).
 * Exported for its test (test/webhook/rotation.test.ts).
 */
export const WEBHOOK_SECRET_TTL_MS = 5 * 60_000;

/**
 * Caches an async value for `ttlMs` of the injected clock. A failed read is not cached; when a
 * refresh fails, the last good value is kept (and the next call tries again) rather than failing
 * every request while the secret store is briefly unreachable.
 * Exported for its test (test/webhook/rotation.test.ts).
 */
export function cachedFor<T>(factory: () => Promise<T>, ttlMs: number, now: () => number): () => Promise<T> {
  let value: { v: T; at: number } | undefined;
  let pending: Promise<T> | undefined;
  return () => {
    if (value && now() - value.at < ttlMs) return Promise.resolve(value.v);
    pending ??= factory().then(
      (v) => {
        value = { v, at: now() };
        pending = undefined;
        return v;
      },
      (error: unknown) => {
        pending = undefined;
        if (value) return value.v;
        throw error;
      },
    );
    return pending;
  };
}

/** Memoises an async factory; a failed attempt is forgotten so the next call tries again. */
export function once<T>(factory: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= factory().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
