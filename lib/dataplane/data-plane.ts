/**
 * A data plane: how the VPC carries a node's pod CIDRs (routes in the cluster's route tables, or
 * prefixes delegated to the node's primary interface). One is chosen in the wiring
 * (functions/wiring.ts); reconcile, the webhook and the route worker run over this interface and
 * never ask which one it is. docs/decisions/0001-data-plane-modes.md says why. Each plane's folder
 * also holds its `podroute doctor` checks (doctor-checks.ts), chosen in lib/cli/doctor-wiring.ts.
 */
import { tryParseCidr } from '../cidr/cidr.ts';
import type { CidrSet, Lease } from '../ipam/index.ts';
import type { Admitted, RouteWriteMessage, SyncNodeMessage } from '../messages/work-message.ts';
import { podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import type { DualStackKubeNodes, NodeSyncAction } from '../nodesync/index.ts';
import type { LeaseTable, RoutePlan, RouteTable } from '../routes/index.ts';
import type { ConditionText } from '../usecases/ports.ts';
import type { Delivery, WriteDeps } from '../usecases/route-worker-deps.ts';

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export const settled = <T>(promise: Promise<T>): Promise<Settled<T>> =>
  promise.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

export type { ConditionText } from '../usecases/ports.ts';

/** The facts a readiness decider judges a node on. */
export interface ReadinessFacts {
  /** The node holds one pod CIDR inside each cluster CIDR, and none outside. */
  podCidrsComplete: boolean;
  /** Every pod CIDR of the node is carried by the VPC (routed in every table, or delegated to its interface). */
  carried: boolean;
  /** The VPC cannot carry the node now (a route that failed, a subnet without a pod range). */
  refused?: boolean;
}

/** A readiness decision: NetworkUnavailable true, false, or not decided yet ('pending'), and its text. */
export interface Readiness extends ConditionText {
  networkUnavailable: boolean | 'pending';
}

/** What a reconcile run read, around its node listing (each plane reads in the order it needs). */
export interface RunRead {
  /** The cluster's route tables; null: this plane reads none. */
  tables: Settled<RouteTable[]> | null;
  nodes: Settled<Node[]>;
  /** One lease list per set of `run.sets`. */
  leases: Settled<Lease[][]>;
  /** The cloud side of the run; null when what it needs could not be read. */
  run: PlaneRun | null;
}

/** What a reconcile run tells its plane besides the nodes: its clock, how long a queued message may live, and the work queue's backlog. */
export interface RunFacts {
  now: number;
  /** How long a message sent now may still be delivered and run: the shorter of the lease grace and a message's lifetime (lib/messages/work-queue.ts). */
  messageWindowMs: number;
  /** Messages the work queue holds (visible, in flight, delayed); absent when the queue cannot say. Read only when asked. */
  backlog?: () => Promise<number>;
}

/** The cloud side of one reconcile run, as read. */
export interface PlaneRun {
  tables: RouteTable[];
  /** The CIDR sets the run allocates from and judges leases against. */
  sets: CidrSet[];
  /** A read that failed without stopping the run (told in the report, step `prefix-read`). */
  error?: string;
  /** CIDRs the VPC holds for nodes now (delegated prefixes): reclaim keeps their leases. */
  delegated: string[];
  /** The plan of the run; `live` counts the routes the mass-deletion guard judges against. */
  plan(input: { nodes: Node[]; leaseTable: LeaseTable }): Promise<{ plan: RoutePlan; live: number }>;
  /** Node sync of one node over this run's reads; answers 'synced' when node sync ran (else why it did not). */
  syncNode(node: Node, kube: DualStackKubeNodes): Promise<string>;
  /** What `syncNode` would do for the node over this run's reads: node sync's decision, not applied (a dry run). */
  planNodeSync(node: Node): Promise<PlannedNodeSync>;
}

/** Node sync of one node as decided over a run's reads, not applied. */
export interface PlannedNodeSync {
  node: string;
  /**
   * `sync`: node sync's actions below; `left-to-worker`: nothing, the node's queued message does its
   * work (lib/dataplane/prefixes/assigner.ts); otherwise the node is refused (and kept NetworkUnavailable).
   */
  outcome: 'sync' | 'left-to-worker' | 'no-reservation' | 'shared-prefix-reservation';
  /** Node sync's decider's actions (lib/nodesync decideNodeSync), in the order they would be applied. */
  actions: NodeSyncAction[];
  /** Prefixes mode, SyncFromCloud: the pod ranges EC2 would pick a prefix from first (node sync then adopts it). */
  ec2Picks?: string[];
}

/** Whether a departed node's lease may go now, the cloud side having let go of its block. */
export type DepartedBlock =
  /** `unassignedFrom`: the interface the block's prefix was taken off first. */
  | { release: true; unassignedFrom?: string }
  /** Kept for a later check: why. */
  | { release: false; why: string };

export interface DataPlane {
  /** The config value (MODE) that chose it: for logs and the doctor's output only. */
  readonly name: string;
  /** Reads a reconcile run's cloud side and its leases; `listNodes` is called once, when the plane needs the nodes. */
  readRun(listNodes: () => Promise<Node[]>, facts: RunFacts): Promise<RunRead>;
  /** A table listing that finds none refuses the run (lib/usecases/absence.ts). */
  readonly tablesRequired: boolean;
  /** The sets an admission judges claims against (lib/webhook/claims.ts). */
  leaseSets(): Promise<CidrSet[]>;
  /**
   * Lets the cloud side go of a departed owner's block (its Node read 404, its lease past the
   * grace) before the node-left check (lib/usecases/node-left.ts) or reclaim
   * (lib/usecases/lease-upkeep.ts) releases the lease. `stillGone`, a keyed re-read of the owner,
   * is asked right before any write to the cloud side; without it the plane writes nothing there.
   */
  freeDepartedBlock(cidr: string, owner: string, stillGone?: () => Promise<boolean>): Promise<DepartedBlock>;
  /** Whether a managed node needs node sync this run. */
  needsNodeSync(node: Node): boolean;
  /** What a NodeJoined event does for a stored node: node sync, over fresh reads of the cloud side. */
  syncNewNode(node: Node, kube: DualStackKubeNodes): Promise<void>;
  /**
   * What the admission does for a node not stored yet: node sync over fresh reads, taking its
   * blocks; the cloud side's writes are left to the worker's `sync-node` (queued when `queuesSyncNode`).
   */
  admitNewNode(node: Node, kube: DualStackKubeNodes): Promise<void>;
  /** Whether a node just synced gets a `sync-node` message; `admitted` when the node is not stored yet. */
  queuesSyncNode(admitted: Admitted | undefined): boolean;
  /** What the route worker does for a `sync-node` message. */
  workerSyncNode(message: SyncNodeMessage, deps: WriteDeps, delivery?: Delivery): Promise<string>;
  /** What the route worker does for a create, replace or delete message; answers its status. */
  workerRouteWrite(message: RouteWriteMessage, deps: WriteDeps): Promise<string>;
  /**
   * Whether the worker judges a node that names a stored node's instance on its own fresh reads
   * (the ownership decider's instance rule), so an admission may queue it without listing the
   * nodes (lib/usecases/claim-census.ts `admissionReads`).
   */
  readonly workerJudgesInstance: boolean;
  /** Whether a failed message's node can be told its routes are missing (the worker's report). */
  readonly reportsMissingRoutes: boolean;
  /** Whether node sync's own "NetworkUnavailable=false" is written (else the worker writes it, seeing the routes). */
  readonly nodeSyncMarksReady: boolean;
  /** The one readiness decider of this plane: pure. */
  readiness(facts: ReadinessFacts): Readiness;
}

/** The facts that give each readiness state: a refusal, a node not carried yet, a node carried. */
const FACTS_OF: Record<'refused' | 'pending' | 'ready', ReadinessFacts> = {
  refused: { podCidrsComplete: false, carried: false, refused: true },
  pending: { podCidrsComplete: false, carried: false },
  ready: { podCidrsComplete: true, carried: true },
};

/**
 * The condition text a plane writes for a state: `true` a node the VPC cannot carry, `false` a
 * node carried, `'pending'` a node not carried yet (NetworkUnavailable=True until it is).
 */
export function conditionText(plane: Pick<DataPlane, 'readiness'>, state: boolean | 'pending'): ConditionText {
  const { reason, message } = plane.readiness(FACTS_OF[state === 'pending' ? 'pending' : state ? 'refused' : 'ready']);
  return { reason, message };
}

/** Whether the node lacks a pod CIDR of some cluster CIDR's family (node sync allocates it). */
export function lacksPodCidrFamily(node: Node, clusterCidrs: readonly string[]): boolean {
  const families = new Set(podCidrsOf(node).map((text) => tryParseCidr(text)?.family));
  return clusterCidrs.some((text) => !families.has(tryParseCidr(text)?.family));
}
