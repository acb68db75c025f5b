/**
 * The route planner: upstream route controller's `reconcile` as a pure function from {nodes, route
 * tables, cluster CIDRs} to a plan of creates, replaces, deletes and node statuses. No I/O, no clock;
 * the same input in any order gives the same plan. Its rules, step by step, are
 * docs/decisions/0008-route-plan-rules.md; the shared per-destination rules are ./route-rules.ts.
 */
import { type Cidr, tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { type Node, networkUnavailableOf } from '../nodes/node.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import type { UnmanagedReason } from '../nodes/managed-node.ts';
import { EMPTY_WINDOW, judgeDeletions } from './deletion-guard.ts';
import { type ConflictReason, type LeaseTable, decideOwnership } from './ownership.ts';
import { type RouteTable, clusterTagKey } from './route-tables.ts';
import {
  type NodeFacts,
  assignOwners,
  checkPodCidrs,
  collectNodes,
  compareText,
  indexTables,
  isResponsible,
  planDeletes,
  planWantedRoutes,
} from './route-plan-phases.ts';

export interface CreateOp {
  routeTableId: string;
  destinationCidr: string;
  node: string;
  instanceId: string;
}

export interface ReplaceOp {
  routeTableId: string;
  destinationCidr: string;
  node: string;
  instanceId: string;
  reason: 'blackhole' | 'moved';
  /** A `moved` route's present instance, as planned on: the worker replaces only a route still to it. */
  expect?: { instanceId: string | null };
}

export interface DeleteOp {
  routeTableId: string;
  destinationCidr: string;
  reason: 'blackhole' | 'no-owner';
  /** The route the deletion was planned on (a route named by its interface alone matched to its instance, step 1a). */
  expect: { instanceId: string | null; blackhole: boolean };
}

interface NodeStatus {
  node: string;
  networkUnavailable: boolean | 'pending';
  patch: boolean;
  /** Present only for a node that is not podroute's (then `patch` is false): why. */
  unmanaged?: UnmanagedReason;
  /** Present only for a node claiming a pod CIDR or an instance that is not its own (./ownership.ts): why. */
  conflict?: ConflictReason;
}

type PlanWarningReason =
  | 'foreign-target'
  | 'propagated-route'
  | 'invalid-pod-cidr'
  | 'outside-cluster-cidrs'
  | 'pod-cidr-conflict'
  | 'duplicate-node'
  | 'duplicate-route-table'
  | 'no-route-tables'
  | 'pod-cidr-mask-mismatch';

export interface PlanWarning {
  reason: PlanWarningReason;
  node?: string;
  routeTableId?: string;
  destinationCidr?: string;
  detail: string;
}

export interface RoutePlan {
  create: CreateOp[];
  replace: ReplaceOp[];
  delete: DeleteOp[];
  nodes: NodeStatus[];
  /** Present only when the mass-deletion guard trips: why the deletions must be withheld. */
  unsafe?: string;
  /** Present only when non-empty. */
  warnings?: PlanWarning[];
}

export interface PlanInput {
  nodes: readonly Node[];
  routeTables: readonly RouteTable[];
  clusterCidrs: readonly string[];
  clusterName?: string;
  /** Share of live routes a plan may delete before it is unsafe, in (0, 1]. Default 0.5. */
  maxDeleteShare?: number;
  /** The share guard only trips from this many live deletions on. Default 5. */
  minDeletesForGuard?: number;
  /** Only nodes whose labels match are podroute's (NODE_SELECTOR). Default: every node. */
  nodeSelector?: LabelSelector;
  /**
   * The CIDR leases, the authority on who owns a pod CIDR (reconcile, the worker). Absent (the plan
   * CLI): of overlapping pod CIDRs, the node registered first owns (./ownership.ts).
   */
  leaseTable?: LeaseTable;
  /**
   * Instance id -> its primary network interface id. A route described with only that interface
   * (no InstanceId) is then a route to the instance (step 1a). Default: none.
   */
  primaryInterfaces?: ReadonlyMap<string, string>;
}

export const DEFAULT_MAX_DELETE_SHARE = 0.5;
export const DEFAULT_MIN_DELETES_FOR_GUARD = 5;

/** Upstream `isResponsibleForRoute` over text: false for an unparseable destination. */
export function isResponsibleForRoute(destinationCidr: string, clusterCidrs: readonly string[]): boolean {
  const destination = tryParseCidr(destinationCidr);
  return destination !== null && isResponsible(destination, parseClusterCidrs(clusterCidrs));
}

function parseClusterCidrs(texts: readonly string[]): Cidr[] {
  if (texts.length === 0) throw new InvalidInputError('at least one cluster CIDR is required');
  return texts.map((text) => {
    const cidr = tryParseCidr(text);
    if (!cidr) throw new InvalidInputError(`invalid cluster CIDR ${JSON.stringify(text)}: want an address/prefix such as 10.0.0.0/16 or fd00::/48`);
    return cidr;
  });
}

function validateOptions(maxDeleteShare: number, minDeletesForGuard: number): void {
  if (typeof maxDeleteShare !== 'number' || !(maxDeleteShare > 0 && maxDeleteShare <= 1)) {
    throw new RangeError(`maxDeleteShare must be a number in (0, 1], got ${String(maxDeleteShare)}`);
  }
  if (typeof minDeletesForGuard !== 'number' || !Number.isInteger(minDeletesForGuard) || minDeletesForGuard < 0) {
    throw new RangeError(`minDeletesForGuard must be a whole number >= 0, got ${String(minDeletesForGuard)}`);
  }
}

const compareOps = (a: { routeTableId: string; destinationCidr: string }, b: { routeTableId: string; destinationCidr: string }): number =>
  compareText(a.routeTableId, b.routeTableId) || compareText(a.destinationCidr, b.destinationCidr);

/**
 * The plan with its deletions judged alone (no window of runs), as the plan CLI and one node's
 * route work want it: `unsafe` is set when the guard would withhold them.
 */
export function planRoutes(input: PlanInput): RoutePlan {
  const { plan, live } = planRoutesCounted(input);
  const { unsafe } = judgeDeletions({
    live,
    unconfirmed: plan.delete.filter((op) => op.reason === 'no-owner').map(deletionKey),
    noNodes: input.nodes.length === 0,
    window: EMPTY_WINDOW,
    now: 0,
    limits: { ...guardLimits(input), windowMs: 0 },
  });
  if (unsafe === null) return plan;
  // In contract order: unsafe before warnings.
  const { warnings, ...rest } = plan;
  return { ...rest, unsafe, ...(warnings === undefined ? {} : { warnings }) };
}

const guardLimits = (input: PlanInput) => ({
  maxDeleteShare: input.maxDeleteShare ?? DEFAULT_MAX_DELETE_SHARE,
  minDeletesForGuard: input.minDeletesForGuard ?? DEFAULT_MIN_DELETES_FOR_GUARD,
});

/**
 * The plan without `unsafe`, and the guard's count of live routes (responsible active instance
 * routes in cluster tables), for the route decider (./route-work.ts): it judges the deletions once,
 * over a window of runs, and alone decides `unsafe`.
 */
export function planRoutesCounted(input: PlanInput): { plan: RoutePlan; live: number } {
  const { maxDeleteShare, minDeletesForGuard } = guardLimits(input);
  validateOptions(maxDeleteShare, minDeletesForGuard);
  const clusters = parseClusterCidrs(input.clusterCidrs);
  const warnings: PlanWarning[] = [];

  const index = indexTables(input, warnings);
  const facts = collectNodes(input, warnings);
  checkPodCidrs(facts, clusters, warnings);
  const ownership = decideOwnership({
    nodes: facts.map((fact) => fact.node),
    clusterCidrs: input.clusterCidrs,
    ...(input.leaseTable ? { leaseTable: input.leaseTable } : {}),
    ...(input.nodeSelector ? { nodeSelector: input.nodeSelector } : {}),
  });
  const owners = assignOwners(facts, ownership, warnings);
  // Instances only unmanaged nodes name: routes to them are someone else's and are left alone.
  const { unmanagedInstances } = ownership;
  if (index.tableIds.length === 0 && facts.length > 0) {
    warnings.push({
      reason: 'no-route-tables',
      detail:
        input.clusterName === undefined
          ? 'no route tables were given; no node can be routed'
          : `no route table is tagged ${clusterTagKey(input.clusterName)}; no node can be routed`,
    });
  }
  const { create, replace } = planWantedRoutes(index, owners.wanted, unmanagedInstances, warnings);
  const { deletes, live } = planDeletes(index.existing, owners, unmanagedInstances, clusters);

  const nodes: NodeStatus[] = facts.map((fact) => statusOf(fact, index.tableIds.length > 0));

  deletes.sort(compareOps);
  const plan: RoutePlan = { create, replace, delete: deletes, nodes };
  // Every warning above is built with its keys in contract order: reason, node, routeTableId, destinationCidr, detail.
  if (warnings.length > 0) plan.warnings = warnings.sort(compareWarnings);
  return { plan, live };
}

function statusOf(fact: NodeFacts, haveTables: boolean): NodeStatus {
  if (fact.unmanaged !== null) {
    return { node: fact.name, networkUnavailable: networkUnavailableOf(fact.node) === 'True', patch: false, unmanaged: fact.unmanaged };
  }
  let wantedStatus: boolean | 'pending';
  if (fact.blocked || !haveTables || (fact.owned.length === 0 && !fact.adopting)) wantedStatus = true;
  else if (fact.pending || fact.adopting) wantedStatus = 'pending';
  else wantedStatus = false;
  if (wantedStatus === 'pending') return { node: fact.name, networkUnavailable: 'pending', patch: false };
  const current = networkUnavailableOf(fact.node);
  const status: NodeStatus = { node: fact.name, networkUnavailable: wantedStatus, patch: current !== (wantedStatus ? 'True' : 'False') };
  if (fact.conflict !== null) status.conflict = fact.conflict;
  return status;
}

/** The guard's key of a route deletion (lib/routes/deletion-guard.ts): its table and destination. */
export const deletionKey = (op: { routeTableId: string; destinationCidr: string }): string => `${op.routeTableId}|${op.destinationCidr}`;

const compareWarnings = (a: PlanWarning, b: PlanWarning): number =>
  compareText(a.node ?? '', b.node ?? '') ||
  compareText(a.routeTableId ?? '', b.routeTableId ?? '') ||
  compareText(a.destinationCidr ?? '', b.destinationCidr ?? '') ||
  compareText(a.reason, b.reason) ||
  compareText(a.detail, b.detail);
