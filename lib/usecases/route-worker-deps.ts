/**
 * What the route worker (lib/usecases/route-worker.ts) runs over, and the constants its decisions
 * share with lib/usecases/route-writes.ts.
 */
import type { Config } from '../config.ts';
import type { DataPlane } from '../dataplane/data-plane.ts';
import type { CidrSet } from '../ipam/index.ts';
import { NodeNotFoundError } from './port-errors.ts';
import type { Logger } from '../log.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import type { Node } from '../nodes/node.ts';
import type { ClaimCensusStore, NodeSource, RouteTables, RouteTargets } from './ports.ts';
import type { RouteTableView } from './route-table-view.ts';

export { type Delivery, NodeNotStoredError } from './delivery-outcome.ts';

export const FAILED_TO_CREATE_ROUTE = 'FailedToCreateRoute';
/** The event reason when a route table holds as many routes as its quota allows. */
export const ROUTE_TABLE_FULL = 'RouteTableFull';

export interface RouteWorkerDeps {
  clusterCidrs: readonly string[];
  routeTables: RouteTables;
  routeTargets: RouteTargets;
  nodes: NodeSource;
  log: Logger;
  now: () => number;
  /** The cluster CIDRs' sets, that route writes judge ownership in (a `node-left` check releases in the plane's `leaseSets`). */
  cidrSets: readonly CidrSet[];
  /** LEASE_GRACE_SECONDS: a `node-left` check frees no lease younger than this (./node-left.ts). */
  leaseGraceSeconds: number;
  /** NODE_SELECTOR: a node outside it is not podroute's (absent = every node). */
  nodeSelector?: LabelSelector;
  /** MIGRATION_MASK_SIZES: masks besides the node mask a leased pod CIDR may have (lib/routes/ownership.ts). */
  migrationMaskSizes?: Config['migrationMaskSizes'];
  /** Instance -> primary interface, kept for the container's life (source/dest check already off). */
  targets?: Map<string, { primaryEniId: string; at: number }>;
  /**
   * The batch's shared listing of the route tables (lib/usecases/route-table-view.ts). Absent: the
   * message lists the tables itself, on first need.
   */
  view?: RouteTableView;
  /** The data plane chosen in the wiring: what a `sync-node` does, and whether a failure can find routes missing. */
  plane: Pick<DataPlane, 'workerSyncNode' | 'workerRouteWrite' | 'reportsMissingRoutes' | 'readiness' | 'leaseSets' | 'freeDepartedBlock'>;
  /**
   * Aborted when the invocation's time is up (functions/route-worker.ts): a message failing after
   * that reports nothing (no node is told, nothing is re-read); the queue delivers it again.
   */
  signal?: AbortSignal;
  /** The claim census a `node-left` check tells of a release before it makes it (./claim-census.ts). */
  claimCensus?: ClaimCensusStore;
}

/** The deps with the listing every write decides on. */
export type WriteDeps = RouteWorkerDeps & { view: RouteTableView };

/** How long a container trusts a remembered route target before describing the instance again. */
export const TARGET_CACHE_MS = 5 * 60_000;

/**
 * For this long after a node's creation, EC2 answering that its instance or interface does not
 * exist (`InvalidInstanceID.NotFound`, `InvalidNetworkInterfaceID.NotFound`) is retried instead of
 * reported. EC2 Developer Guide, "Eventual consistency in the Amazon EC2 API": a command with the id
 * of an instance just launched may fail with `InvalidInstanceID.NotFound`, which "does not mean the
 * instance does not exist"; it advises retrying with backoff for up to a few minutes. After this
 * window the answer is taken at its word: the failure is permanent and reported on the node.
 */
export const LAUNCH_LAG_WINDOW_MS = 5 * 60_000;

/** The node as stored now, or null when it does not exist. */
export async function currentNode(name: string, deps: Pick<RouteWorkerDeps, 'nodes'>): Promise<Node | null> {
  try {
    return await deps.nodes.getNode(name);
  } catch (error) {
    if (error instanceof NodeNotFoundError) return null;
    throw error;
  }
}

/**
 * The node as stored, for a `sync-node` from an admission (`admitted`): null while the stored node
 * is still the version before that admission, one without a providerID. The UPDATE that sets a
 * node's providerID is admitted, and its message queued, before the update is stored.
 */
export async function storedAfterAdmission(name: string, admitted: object | undefined, deps: Pick<RouteWorkerDeps, 'nodes'>): Promise<Node | null> {
  return afterAdmission(await currentNode(name, deps), admitted);
}

/** `storedAfterAdmission` over a node already read (null: not stored). */
export function afterAdmission(node: Node | null, admitted: object | undefined): Node | null {
  if (node && admitted !== undefined && (node.spec?.providerID ?? '') === '') return null;
  return node;
}
