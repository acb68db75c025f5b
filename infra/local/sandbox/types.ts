/** The sandbox's public shapes: its options and the handle `startSandbox` resolves to. */
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ReconcileResult } from '../../../functions/reconcile.ts';
import type { Wiring } from '../../../functions/wiring.ts';
import type { Config } from '../../../lib/config.ts';
import type { Logger } from '../../../lib/log.ts';
import type { Ec2Emulator, RouteTargetFields, ThrottleOptions } from '../ec2/index.ts';
import type { KubeEmulator } from '../kube/index.ts';
import type { LocalSqs } from '../queue/local-sqs.ts';
import type { SqsEventSource } from '../queue/sqs-event-source.ts';
import type { LocalDynamoDb } from '../dynamodb.ts';
import type { EventBus } from './event-bus.ts';
import type { HttpApi } from './http-api.ts';
import type { LeaseRecord, NodeRecord, RouteCounts, SandboxReport } from './report.ts';
import type { SandboxMode } from './world.ts';

export type { SandboxMode } from './world.ts';


export interface SandboxOptions {
  /** Nodes joined (through the webhook) before `startSandbox` resolves. Default 0. */
  nodes?: number;
  /**
   * The EC2 emulator sends instance state changes and route writes (via CloudTrail) to an
   * EventBridge bus that invokes the cloud-events function (event-bus.ts). Default false.
   */
  cloudEvents?: boolean;
  /** IPv4 and IPv6 cluster CIDRs, dual-stack VPC and subnet. Default false. */
  dualStack?: boolean;
  /** Route tables tagged `kubernetes.io/cluster/<clusterName>=owned`. Default 2. */
  routeTables?: number;
  /** `routes` (VPC routes) or `prefixes` (ENI prefix delegation, /28 and /80). Default `routes`. */
  mode?: SandboxMode;
  /**
   * Prefixes mode: subnets in as many zones, each with `prefix` reservations, nodes spread over
   * them (world.ts). Unset: the one-subnet world of earlier versions. `npm start` defaults to 3.
   */
  subnets?: number;
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
  /**
   * Which target fields the EC2 emulator describes a route to an attached interface with: `both`
   * (default, as real EC2 is observed to) or `as-created` (only the field it was made with:
   * infra/local/ec2/records.ts, RouteTargetFields).
   */
  routeTargetFields?: RouteTargetFields;
  /** Routes mode: the IPv4 cluster CIDR (/24 node blocks). Default 100.64.0.0/10. */
  clusterCidr?: string;
  /** Routes per table (EC2 quota). Default: 50, raised (as one would ask AWS) to fit the cluster. */
  routeLimit?: number;
  /** Schedule period in ms (EventBridge's one minute, fast-forwarded). 0 = no schedule: call `tick()`. Default 2000. */
  tickMs?: number;
  /**
   * How many times faster than production the functions' waits run (SDK backoff, queue message
   * delays such as the node-left check's, visibility backoff): at least 1. Default: the schedule's
   * fast-forward factor (60000 / tickMs), 1 without a schedule. EC2's refill rates and launch lag
   * follow the schedule only.
   */
  timeScale?: number;
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
  /**
   * Nodes join as under an external cloud controller manager (kubeadm's and kOps' default): the
   * kubelet registers its Node without spec.providerID and tainted uninitialized, and a stand-in for
   * the CCM's node controller sets the providerID and removes the taint `ccmDelayMs` later, an UPDATE
   * the node-provider-id webhook admits. Default false (the providerID is there at CREATE, as on EKS).
   */
  externalCcm?: boolean;
  /** How long after a node's CREATE the stand-in CCM initializes it (`externalCcm`). Default 200 ms. */
  ccmDelayMs?: number;
}

export interface JoinOptions {
  /** false: create the Node without admission (as if the webhook were not installed). Default true. */
  webhook?: boolean;
  /**
   * Hostile registration: the kubelet sets these pod CIDRs on its own Node at CREATE (a kubelet may:
   * NodeRestriction does not check spec.podCIDR(s)). The sandbox records them as the node's own
   * claims, which the judge does not count as pod CIDRs podroute gave.
   */
  podCidrs?: readonly string[];
  /** Hostile registration: the kubelet names this providerID (e.g. another node's instance) instead of its own. */
  providerId?: string;
  /** Join as under an external CCM (see SandboxOptions.externalCcm); default the sandbox's setting. */
  externalCcm?: boolean;
  /** Register on this running instance (a re-join, e.g. after its Node was deleted) instead of launching one. */
  instanceId?: string;
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

export interface SandboxStatus extends Omit<RouteCounts, 'leakedCidrs' | 'routesToNonLeaseholder'> {
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
  /** The node webhook's local HTTP API, its URL token and its event signing key. */
  readonly webhook: { readonly url: string; readonly secret: string; readonly signingKey: string; readonly api: HttpApi };
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
  leakedLeases(): Promise<LeaseRecord[]>;
  /** Current CIDR leases, every set's, read straight from the CIDR table. */
  leases(): Promise<LeaseRecord[]>;
  /** The sandbox's own record of the nodes it registered: instance, and a hostile node's own claims. */
  readonly record: ReadonlyMap<string, NodeRecord>;
  /** Hostile: from now on every other node listing silently leaves out this many nodes (0 = honest listings). */
  setShortListings(dropPerListing: number): void;
  /** Starts or stops the schedule (ticks already running finish). */
  setSchedule(running: boolean): void;
  /** The EventBridge bus to the cloud-events function (`cloudEvents`), or null without it. */
  readonly events: EventBus | null;
  /** An EC2 client of another principal (an IAM user, `operator` by default): its route writes are not podroute's. */
  operatorEc2(user?: string): EC2Client;
  stop(): Promise<void>;
}
