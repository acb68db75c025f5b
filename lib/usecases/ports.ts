/**
 * The ports the use cases run over. The adapters in lib/aws and lib/kube implement them; tests and
 * the sandbox may pass anything of the same shape.
 */
import type { CidrSet } from '../ipam/index.ts';
import type { Node } from '../nodes/node.ts';
import type { GuardWindow } from '../routes/deletion-guard.ts';
import type { Route, RouteTable } from '../routes/route-tables.ts';
import type { WorkMessage } from '../messages/work-message.ts';
import type { InstanceState } from '../events/cloud-event.ts';
import type { WarningReason } from '../nodesync/node-sync-decision.ts';

export interface RouteSpec {
  routeTableId: string;
  destinationCidr: string;
  networkInterfaceId: string;
}

export interface RouteTables {
  /** The cluster's tables, all pages, in podroute's terms (lib/routes/route-tables.ts). */
  listRouteTables(): Promise<RouteTable[]>;
  createRoute(spec: RouteSpec): Promise<'created' | 'exists'>;
  replaceRoute(spec: RouteSpec): Promise<void>;
  deleteRoute(spec: { routeTableId: string; destinationCidr: string }): Promise<'deleted' | 'absent'>;
  /** A fresh read of one table's route to the destination (the static one when there is one), or null. */
  describeRoute(routeTableId: string, destinationCidr: string): Promise<Route | null>;
  /** Marks a table full (lib/routes/table-full.ts); optional for adapters that cannot tag. */
  markRouteTableFull?(routeTableId: string, mark: { routeCount: number; at: number }): Promise<void>;
  /** Removes the full mark. */
  clearRouteTableFull?(routeTableId: string): Promise<void>;
}

/** The node side of a route: the interface a route targets (lib/aws/ec2-route-targets.ts). */
export interface RouteTargets {
  /**
   * The instance's primary interface (device index 0), with that interface's source/destination
   * check turned off if it was on. Rejects with a ResourceNotFoundError (port-errors.ts) when the
   * cloud does not know the instance or interface (which may be launch lag: `mayBeLaunchLag`).
   */
  prepareRouteTarget(instanceId: string): Promise<{ instanceId: string; primaryEniId: string; sourceDestCheckChanged: boolean }>;
  /**
   * The instance whose primary interface (device index 0) this is, or null (another device index,
   * detached, unknown): a route naming the interface alone is then a route to that instance.
   * Optional for adapters that cannot read it.
   */
  interfaceInstance?(networkInterfaceId: string): Promise<string | null>;
}

/** What a node's NetworkUnavailable condition says besides its status (the data plane's readiness decider words it). */
export interface ConditionText {
  reason: string;
  message: string;
}

/** What a write did: `gone` = the node no longer exists (404), which callers treat as done. */
export type NodeWriteResult = 'patched' | 'unchanged' | 'gone';

export interface NodeSource {
  listNodes(): Promise<Node[]>;
  /** Rejects with NodeNotFoundError (port-errors.ts) when the node does not exist. */
  getNode(name: string): Promise<Node>;
  /** `text` is the data plane's wording (lib/dataplane/data-plane.ts `conditionText`). */
  setNetworkUnavailable(nodeName: string, unavailable: boolean, text: ConditionText): Promise<NodeWriteResult>;
  updatePodCidr(node: Node, cidrs: string | readonly string[]): Promise<NodeWriteResult>;
  warn(nodeName: string, reason: string, message: string): Promise<unknown>;
}

/** A node's primary interface (device index 0) as prefixes mode reads it. */
export interface NodeInterface {
  instanceId: string;
  networkInterfaceId: string;
  subnetId: string;
  /** Every prefix delegated to the interface (IPv4 `/28`s and IPv6 `/80`s, canonical), whoever delegated it. */
  prefixes: string[];
}

/** The interfaces of prefix mode: read in batches, prefixes delegated one at a time. */
export interface EniPrefixes {
  /**
   * The primary interfaces of these instances, read in as few calls as EC2 allows (one call per
   * page of ids, not one per instance). Instances EC2 does not list (yet) are absent from the map.
   */
  describeInterfaces(instanceIds: readonly string[]): Promise<Map<string, NodeInterface>>;
  /** Delegates exactly `cidr` to the interface. */
  assignPrefix(networkInterfaceId: string, cidr: string): Promise<void>;
  /** Lets EC2 pick one prefix of the family (from a `prefix` reservation when there is one); answers it. */
  assignAnyPrefix(networkInterfaceId: string, family: 4 | 6): Promise<string>;
  /**
   * The interface of the subnet that holds `cidr` as a delegated prefix now (read afresh), or null
   * when none does. Absent in ports that cannot read it.
   */
  prefixHolder?(subnetId: string, cidr: string): Promise<string | null>;
  /**
   * The interface holding `cidr` as a delegated prefix now, wherever it is (read afresh, in the
   * subnet whose block holds it), or null when none does. Rejects when it cannot be read.
   */
  prefixDelegation(cidr: string): Promise<string | null>;
  /** Takes exactly `cidr` (a delegated prefix) off the interface. */
  unassignPrefix(networkInterfaceId: string, cidr: string): Promise<void>;
}

/** The primary network interfaces of instances, with their own tags (the doctor's; lib/aws/ec2-primary-interfaces.ts). */
export interface PrimaryInterfaces {
  primaryInterfaces(instanceIds: readonly string[]): Promise<Array<{ instanceId: string; networkInterfaceId: string; tags: Record<string, string> }>>;
}

/** The account's "Routes per route table" quota in Service Quotas (the doctor's; lib/aws/service-quotas.ts). */
export interface RouteQuotaSource {
  /** The applied value (GetServiceQuota); throws when Service Quotas does not retrieve one. */
  applied(): Promise<number>;
  /** AWS's default value (GetAWSDefaultServiceQuota). */
  awsDefault(): Promise<number>;
}

/** A subnet CIDR reservation (EC2 `SubnetCidrReservation`). */
export interface SubnetReservation {
  reservationId: string;
  cidr: string;
  /** `prefix`: EC2 picks prefixes from it; `explicit`: only who names its addresses gets them. */
  type: 'prefix' | 'explicit';
  description: string | undefined;
}

export interface Subnet {
  subnetId: string;
  availabilityZone: string | undefined;
  /** The subnet's IPv4 block and its associated IPv6 blocks. */
  cidrs: string[];
  reservations: SubnetReservation[];
}

/** Subnets and their CIDR reservations. */
export interface Subnets {
  /** These subnets with their reservations; unknown ids are absent. */
  describeSubnets(subnetIds: readonly string[]): Promise<Map<string, Subnet>>;
}

/**
 * The CIDR set of one pod range (a podroute reservation cut to a cluster CIDR), one partition of
 * the CIDR table each; the same range answers the same set.
 */
export type ReservationSets = (range: string) => Promise<CidrSet>;

/**
 * Prefixes mode: the CIDR sets of every pod range podroute has registered (lib/ipam/set-registry.ts),
 * found by one keyed read of the registry, with no EC2 call and without registering anything.
 */
export type UsedReservationSets = () => Promise<CidrSet[]>;

/**
 * Where the mass-deletion guard keeps its window of runs (lib/routes/deletion-guard.ts), written
 * conditionally so that two overlapping runs cannot both spend the same share.
 */
export interface DeletionWindowStore {
  /** The stored window and its version (0: none stored yet). */
  read(): Promise<{ window: GuardWindow; version: number }>;
  /** Stores `window` if the stored version is still `version`; false when another run wrote first. */
  write(window: GuardWindow, version: number): Promise<boolean>;
}

export interface SendResult {
  /** Messages accepted by the queue (after deduplication). */
  readonly sent: number;
  /** Messages dropped because an earlier message in the same call had the same `messageKey`. */
  readonly duplicates: number;
}

export interface SendOptions {
  /**
   * Hold the messages back this many seconds (0..900) before the worker may see them (SQS
   * SendMessageBatch `DelaySeconds`). The webhook uses it so the worker reads a node the API server
   * has had time to store.
   */
  readonly delaySeconds?: number;
  /**
   * The id that ties the messages to what sent them (an admission's uid, a reconcile run's request
   * id), carried beside the body, never in it: a worker of any release reads the body as before.
   */
  readonly correlationId?: string;
}

/** Where reconcile, the node webhook and cloud events hand work messages to the route worker. */
export interface WorkQueue {
  send(messages: readonly WorkMessage[], options?: SendOptions): Promise<SendResult>;
  /**
   * Makes a received message visible again after `seconds` instead of after the queue's visibility
   * timeout, so a retryable failure is retried soon (with backoff) rather than minutes later.
   */
  retryAfter?(receiptHandle: string, seconds: number): Promise<void>;
  /** Messages waiting, in flight or delayed (approximate, as SQS counts them). */
  backlog?(): Promise<number>;
}

/** An instance's state as EC2 answers it now, or null when EC2 does not know the instance. */
export interface InstanceStates {
  instanceState(instanceId: string): Promise<InstanceState | null>;
}

/** A question the doctor puts to the API server's authorizers (lib/kube/kube-access.ts). */
export interface AccessQuestion {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

export interface AccessAnswer {
  allowed: boolean;
  reason: string;
}

export interface WebhookRegistration {
  configuration: string;
  webhook: string;
  host: string;
  rules: Array<{ apiGroups: string[]; apiVersions: string[]; operations: string[]; resources: string[] }>;
}

/** The Kubernetes identity the functions authenticate as: a user name and its groups (at least one of the two). */
export interface AccessSubject {
  user: string;
  groups: readonly string[];
}

/** The cluster-side questions of the doctor (lib/kube/kube-access.ts). */
export interface ClusterAccess {
  /** Whether `subject` may do what `question` asks, as the API server's authorizers answer. */
  allows(subject: AccessSubject, question: AccessQuestion): Promise<AccessAnswer>;
  mutatingWebhooks(): Promise<WebhookRegistration[]>;
}

/** The stack's resources (lib/aws/stack-resources.ts). */
export interface StackResources {
  queue(url: string): Promise<{ exists: boolean; detail: string }>;
  table(name: string): Promise<{ exists: boolean; detail: string }>;
}

/** Node sync's cloud side (lib/nodesync/node-sync.ts): a node's pod CIDRs (on AWS: the ENI prefixes delegated to it, or its routes). */
export interface DualStackCloudAlias {
  /** The node's alias ranges, any order; empty when it has none. */
  alias(node: Node): Promise<string[]>;
  /** Adds these ranges (those the cloud lacks), in cluster CIDR order. */
  addAlias(node: Node, cidrs: string[]): Promise<void>;
}

/** Node sync's Kubernetes side (lib/nodesync/node-sync.ts). */
export interface DualStackKubeNodes {
  getNode(name: string): Promise<Node>;
  /** Sets the node's `spec.podCIDRs` to `cidrs` (and `spec.podCIDR` to the first). */
  updatePodCidr(node: Node, cidrs: string[]): Promise<void>;
  setNetworkUnavailable(nodeName: string, unavailable: boolean): Promise<void>;
  warn(nodeName: string, reason: WarningReason, message: string): Promise<void>;
}

/** Node sync's cloud side for one family (lib/nodesync/index.ts `syncNode`): the node's alias range, or null when it has none. */
export interface CloudAlias {
  alias(node: Node): Promise<string | null>;
  addAlias(node: Node, cidr: string): Promise<void>;
}

/** Node sync's Kubernetes side for one family. */
export interface KubeNodes {
  getNode(name: string): Promise<Node>;
  updatePodCidr(node: Node, cidr: string): Promise<void>;
  setNetworkUnavailable(nodeName: string, unavailable: boolean): Promise<void>;
  warn(nodeName: string, reason: WarningReason, message: string): Promise<void>;
}

/** The claim census (./claim-census.ts) as stored: each field only ever moves forward in time. */
export interface ClaimCensusRecord {
  /** The last reconcile run recorded: when its node listing started, and whether it left no unleased claim. */
  run?: { at: number; clear: boolean };
  /** The latest time an admission saw a node arrive with a pod CIDR the lease table does not hold. */
  claimAt?: number;
}

/** Where the claim census lives (an item of the CIDR table); each write keeps a later one that is there. */
export interface ClaimCensusStore {
  read(): Promise<ClaimCensusRecord>;
  /**
   * Records a reconcile run that listed from `at` (every run does), written at `writtenAt` by the
   * writer's clock. A run that is not clear always replaces the stored one: a doubt never waits
   * behind a clock. A clear run replaces only a run that started earlier, or one stamped more than
   * `CENSUS_CLOCK_SKEW_MS` ahead of `writtenAt` (a wrong clock's: no run on a right clock can have
   * started after the time of the write).
   */
  recordRun(run: { at: number; clear: boolean; writtenAt: number }): Promise<void>;
  /**
   * Records an unleased claim seen at `at` (the writer's clock), unless a later one is recorded
   * already; a stored claim more than `CENSUS_CLOCK_SKEW_MS` ahead of `at` is a wrong clock's and is
   * replaced.
   */
  recordClaim(at: number): Promise<void>;
}
