/**
 * The route planner: upstream route controller's `reconcile` as a pure function from
 * {nodes, route tables, cluster CIDRs} to a plan. No I/O, no clock, no randomness; the same input
 * (in any order) gives the same plan, byte for byte once serialised.
 *
 * Semantics (ARCHITECTURE.md §1 is the contract for the plan's shape):
 *  1. Tables. With `clusterName`, only tables tagged `kubernetes.io/cluster/<clusterName>` (any
 *     value) are the cluster's; other tables are never touched. Without it every table given is the
 *     cluster's. Every cluster table must hold every wanted pod-CIDR route, and a VPC table holds one
 *     route per destination. A table id given twice: the first wins (warning `duplicate-route-table`).
 *  2. Nodes. A node's instance is `instanceIdOf(node)`; its pod CIDRs are `podCidrsOf(node)`, parsed
 *     and canonicalised (host bits cleared). Its wanted routes are its valid pod CIDRs that lie wholly
 *     inside some cluster CIDR, in every cluster table. A node name given twice: the first wins
 *     (warning `duplicate-node`).
 *  3. Responsibility (upstream `isResponsibleForRoute`): a route is ours when its destination parses
 *     and its first or last address lies in a cluster CIDR of the same family. Prefix-list routes,
 *     unparseable destinations, `local` routes and routes that are not ours never appear in
 *     create/replace/delete.
 *  4. Only node-kind routes are ever deleted or replaced: blackholes, and active routes to an
 *     instance. Routes to a gateway of any kind or only to an ENI are left alone, even inside the
 *     cluster CIDRs. Propagated routes (`Origin: EnableVgwRoutePropagation`, and VPC Route Server's
 *     `Advertisement`) are never deleted or replaced, blackhole or not: DeleteRoute and ReplaceRoute
 *     act on routes made with CreateRoute; a propagated route goes only when its gateway stops
 *     propagating it (EC2 API reference, Route.Origin; Amazon VPC User Guide, "Route propagation").
 *     A table can hold a static and a propagated route to one destination side by side, and the
 *     static one wins (Amazon VPC User Guide, "How route priority works"), so every decision looks
 *     at a destination's static route only; propagated routes are context (step 5).
 *     Routes to the instance of an unmanaged node (4a) are left alone too.
 *  4a. Unmanaged nodes (`unmanagedReason`: outside `nodeSelector`, a providerID naming no EC2
 *     instance, no providerID yet) are never routed and their condition is never written: they
 *     appear in `nodes` with `unmanaged` set, `patch: false` and `networkUnavailable` = their current
 *     condition (false when absent). Their pod CIDRs are reserved (neither routed nor deleted).
 *  5. For each cluster table and wanted destination (owned by one node):
 *     active route to the node's instance -> done; no route -> `create`; a blackhole -> `replace`
 *     reason `blackhole`; an active route to another instance -> `replace` reason `moved`; any other
 *     route (gateway, ENI only, unknown target, an unmanaged node's instance) -> no op, warning
 *     `foreign-target`, the node stays unavailable. No static route but a propagated one: a VGW
 *     route -> `create` plus warning `propagated-route` (CreateRoute accepts a destination that only
 *     a propagated route has, and the static route takes priority: Amazon VPC User Guide, "How route
 *     priority works"; terraform-provider-aws#36510/#36512 and ansible#43415 create static routes
 *     over propagated VGW routes); a VPC Route Server route -> no op, warning `propagated-route`,
 *     the node stays unavailable (CreateRoute beside one is not documented, so it is not tried).
 *  6. Deletes: every responsible node-kind route whose destination no node wants is deleted, reason
 *     `blackhole` or `no-owner`. The pod CIDRs of unmanaged nodes (4a) are neither wanted nor
 *     deleted. (A node without an EC2 instance id is always unmanaged, so the former `no-instance`
 *     warning has become the `unmanaged` reasons `no-provider-id` / `not-an-ec2-instance`.)
 *  7. Bad node data never breaks planning: an unparseable pod CIDR (warning `invalid-pod-cidr`) is
 *     ignored; a pod CIDR not inside any cluster CIDR gets no route (warning
 *     `outside-cluster-cidrs`); a pod CIDR claimed by several nodes stays with the node an existing
 *     active route already targets (the smallest name if several are), else with the smallest node
 *     name (plain code-unit order); the others get warning `duplicate-pod-cidr` and no route for it.
 *  8. Node status, for every node: no wanted pod CIDR -> `true`; a route blocked by a warning
 *     (`foreign-target`, `propagated-route`, `duplicate-pod-cidr`, `outside-cluster-cidrs`) -> `true`;
 *     no cluster table at all -> `true`; a route of it to create or replace -> `'pending'` (the
 *     worker settles it, `patch` false); otherwise `false`. A blocked node is `true` even while its
 *     other routes are pending, because it cannot become ready this round. `patch` is true when the
 *     NetworkUnavailable condition is missing or differs from the wanted `True`/`False` (`Unknown`
 *     differs from both); always false for `'pending'`.
 *  9. Mass-deletion guard. live = responsible active instance routes in cluster tables; liveDeletes
 *     = `no-owner` deletes. The plan is `unsafe` when the node list is empty and live > 0, or when
 *     liveDeletes > maxDeleteShare * live and liveDeletes >= minDeletesForGuard. Blackhole deletes
 *     never count. `delete` still lists everything; callers withhold the deletions.
 * Output arrays are sorted by (routeTableId, destinationCidr) as plain strings, `nodes` by name,
 * warnings by (node, routeTableId, destinationCidr, reason); `unsafe` and `warnings` are present
 * only when set.
 */
import { type Cidr, containsAddress, containsCidr, formatCidr, lastAddress, tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { type Node, instanceIdOf, networkUnavailableOf, podCidrsOf } from '../nodes/node.ts';
import type { LabelSelector } from '../nodes/label-selector.ts';
import { type UnmanagedReason, unmanagedReason } from '../nodes/managed-node.ts';
import { type Route, type RouteTable, clusterTagKey, isClusterTable } from './route-tables.ts';

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
}

export interface DeleteOp {
  routeTableId: string;
  destinationCidr: string;
  reason: 'blackhole' | 'no-owner';
}

export interface NodeStatus {
  node: string;
  networkUnavailable: boolean | 'pending';
  patch: boolean;
  /** Present only for a node that is not podroute's (then `patch` is false): why. */
  unmanaged?: UnmanagedReason;
}

export type PlanWarningReason =
  | 'foreign-target'
  | 'propagated-route'
  | 'invalid-pod-cidr'
  | 'outside-cluster-cidrs'
  | 'duplicate-pod-cidr'
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
}

export const DEFAULT_MAX_DELETE_SHARE = 0.5;
export const DEFAULT_MIN_DELETES_FOR_GUARD = 5;

/** Upstream `isResponsibleForRoute` over text: false for an unparseable destination. */
export function isResponsibleForRoute(destinationCidr: string, clusterCidrs: readonly string[]): boolean {
  const destination = tryParseCidr(destinationCidr);
  return destination !== null && isResponsible(destination, parseClusterCidrs(clusterCidrs));
}

function isResponsible(destination: Cidr, clusters: readonly Cidr[]): boolean {
  const last = lastAddress(destination);
  return clusters.some(
    (cluster) =>
      containsAddress(cluster, destination.family, destination.network) || containsAddress(cluster, destination.family, last),
  );
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

interface NodeFacts {
  readonly name: string;
  readonly node: Node;
  readonly instanceId: string | null;
  readonly unmanaged: UnmanagedReason | null;
  /** Canonical pod CIDRs this node owns after duplicate resolution (inside the cluster CIDRs). */
  readonly owned: string[];
  blocked: boolean;
  pending: boolean;
}

const keyOf = (routeTableId: string, destinationCidr: string): string => `${routeTableId}|${destinationCidr}`;

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const compareOps = (a: { routeTableId: string; destinationCidr: string }, b: { routeTableId: string; destinationCidr: string }): number =>
  compareText(a.routeTableId, b.routeTableId) || compareText(a.destinationCidr, b.destinationCidr);

/** Total order for two static routes of one table with one destination (EC2 never holds both; stay deterministic). */
const compareDuplicateRoutes = (a: Route, b: Route): number =>
  Number(a.blackhole) - Number(b.blackhole) ||
  Number(a.target !== 'instance') - Number(b.target !== 'instance') ||
  compareText(a.instanceId ?? '', b.instanceId ?? '') ||
  compareText(a.networkInterfaceId ?? '', b.networkInterfaceId ?? '') ||
  compareText(a.target, b.target);

export function planRoutes(input: PlanInput): RoutePlan {
  const maxDeleteShare = input.maxDeleteShare ?? DEFAULT_MAX_DELETE_SHARE;
  const minDeletesForGuard = input.minDeletesForGuard ?? DEFAULT_MIN_DELETES_FOR_GUARD;
  validateOptions(maxDeleteShare, minDeletesForGuard);
  const clusters = parseClusterCidrs(input.clusterCidrs);
  const warnings: PlanWarning[] = [];

  // Cluster tables, one per id, sorted; their static routes indexed by (table, destination), and
  // apart from them the propagated ones (context: never touched; a VPC Route Server one first).
  const tableIds: string[] = [];
  const existing = new Map<string, Route>();
  const propagatedAt = new Map<string, Route>();
  {
    const seen = new Set<string>();
    for (const table of input.routeTables) {
      if (input.clusterName !== undefined && !isClusterTable(table, input.clusterName)) continue;
      if (seen.has(table.routeTableId)) {
        warnings.push({
          reason: 'duplicate-route-table',
          routeTableId: table.routeTableId,
          detail: `route table ${table.routeTableId} was given more than once; the first copy is used`,
        });
        continue;
      }
      seen.add(table.routeTableId);
      tableIds.push(table.routeTableId);
      for (const route of table.routes) {
        const key = keyOf(table.routeTableId, route.destinationCidr);
        if (route.propagated !== undefined) {
          if (!propagatedAt.has(key) || route.propagated === 'route-server') propagatedAt.set(key, route);
          continue;
        }
        const other = existing.get(key);
        if (other === undefined || compareDuplicateRoutes(route, other) < 0) existing.set(key, route);
      }
    }
    tableIds.sort(compareText);
  }

  // Nodes, one per name, sorted by name; their pod CIDRs parsed once.
  const facts: NodeFacts[] = [];
  {
    const seen = new Set<string>();
    for (const node of input.nodes) {
      const name = node.metadata.name;
      if (seen.has(name)) {
        warnings.push({ reason: 'duplicate-node', node: name, detail: `node ${name} was listed more than once; the first entry is used` });
        continue;
      }
      seen.add(name);
      const unmanaged = unmanagedReason(node, input.nodeSelector);
      facts.push({ name, node, instanceId: instanceIdOf(node), unmanaged, owned: [], blocked: false, pending: false });
    }
    facts.sort((a, b) => compareText(a.name, b.name));
  }

  // Claims: canonical pod CIDR -> claiming nodes, in name order.
  const claims = new Map<string, NodeFacts[]>();
  for (const fact of facts) {
    const mine = new Set<string>();
    for (const text of podCidrsOf(fact.node)) {
      const cidr = tryParseCidr(text);
      if (!cidr) {
        if (fact.unmanaged === null) warnings.push({ reason: 'invalid-pod-cidr', node: fact.name, detail: `pod CIDR ${JSON.stringify(text)} does not parse; it is ignored` });
        continue;
      }
      const canonical = formatCidr(cidr);
      if (mine.has(canonical)) continue;
      mine.add(canonical);
      if (!clusters.some((cluster) => containsCidr(cluster, cidr))) {
        fact.blocked = true;
        if (fact.unmanaged !== null) continue; // not podroute's node: nothing to say about its CIDRs
        warnings.push({
          reason: 'outside-cluster-cidrs',
          node: fact.name,
          destinationCidr: canonical,
          detail: `pod CIDR ${canonical} is not inside any cluster CIDR; no route is made for it`,
        });
        continue;
      }
      const claimants = claims.get(canonical);
      if (claimants) claimants.push(fact);
      else claims.set(canonical, [fact]);
    }
  }

  // Owners: wanted destinations (owner has an instance) and reserved ones (owner has none).
  const wanted = new Map<string, NodeFacts & { readonly instanceId: string }>();
  const reserved = new Set<string>();
  for (const [cidr, claimants] of claims) {
    const owner = claimants.length === 1 ? claimants[0] : pickOwner(cidr, claimants, tableIds, existing);
    if (!owner) continue;
    for (const loser of claimants) {
      if (loser === owner) continue;
      loser.blocked = true;
      warnings.push({
        reason: 'duplicate-pod-cidr',
        node: loser.name,
        destinationCidr: cidr,
        detail: `pod CIDR ${cidr} is also claimed by node ${owner.name}, which keeps it; no route is made for ${loser.name}`,
      });
    }
    owner.owned.push(cidr);
    if (hasInstance(owner)) wanted.set(cidr, owner);
    else reserved.add(cidr);
  }
  // Instances of unmanaged nodes: routes to them are someone else's and are left alone.
  const unmanagedInstances = new Set(facts.filter((f) => f.unmanaged !== null && f.instanceId !== null).map((f) => f.instanceId));
  if (tableIds.length === 0 && facts.length > 0) {
    warnings.push({
      reason: 'no-route-tables',
      detail:
        input.clusterName === undefined
          ? 'no route tables were given; no node can be routed'
          : `no route table is tagged ${clusterTagKey(input.clusterName)}; no node can be routed`,
    });
  }

  // Wanted routes: create, replace or keep, per cluster table. Tables and destinations are walked
  // in sorted order, so create and replace come out sorted.
  const wantedSorted = [...wanted].sort((a, b) => compareText(a[0], b[0]));
  const create: CreateOp[] = [];
  const replace: ReplaceOp[] = [];
  for (const routeTableId of tableIds) {
    for (const [destinationCidr, owner] of wantedSorted) {
      const route = existing.get(keyOf(routeTableId, destinationCidr));
      const op = { routeTableId, destinationCidr, node: owner.name, instanceId: owner.instanceId };
      if (route === undefined) {
        const propagated = propagatedAt.get(keyOf(routeTableId, destinationCidr));
        if (propagated?.propagated === 'route-server') {
          owner.blocked = true;
          warnings.push({
            reason: 'propagated-route',
            node: owner.name,
            routeTableId,
            destinationCidr,
            detail: `${routeTableId} has a propagated route (VPC Route Server) for ${destinationCidr}; EC2 cannot replace it, so node ${owner.name} is not routed there`,
          });
          continue;
        }
        create.push(op);
        owner.pending = true;
        if (propagated !== undefined) {
          warnings.push({
            reason: 'propagated-route',
            node: owner.name,
            routeTableId,
            destinationCidr,
            detail: `${routeTableId} has a propagated route (EnableVgwRoutePropagation) for ${destinationCidr}; the static route to node ${owner.name} takes priority over it`,
          });
        }
      } else if (route.blackhole) {
        replace.push({ ...op, reason: 'blackhole' });
        owner.pending = true;
      } else if (route.target === 'instance' && !(route.instanceId !== null && unmanagedInstances.has(route.instanceId))) {
        if (route.instanceId !== owner.instanceId) {
          replace.push({ ...op, reason: 'moved' });
          owner.pending = true;
        }
      } else {
        owner.blocked = true;
        warnings.push({
          reason: 'foreign-target',
          node: owner.name,
          routeTableId,
          destinationCidr,
          detail: `${routeTableId} routes ${destinationCidr} to ${describeTarget(route)}, not to node ${owner.name}; podroute does not replace it`,
        });
      }
    }
  }

  // Deletes: responsible node-kind routes that no node wants.
  const deletes: DeleteOp[] = [];
  const responsibleCache = new Map<string, boolean>();
  let live = 0;
  let liveDeletes = 0;
  for (const route of existing.values()) {
    if (route.target === 'local' || route.propagated !== undefined) continue;
    if (!route.blackhole && route.target !== 'instance') continue;
    if (!route.blackhole && route.instanceId !== null && unmanagedInstances.has(route.instanceId)) continue;
    // A wanted or reserved destination is a pod CIDR inside a cluster CIDR: ours without parsing.
    const claimed = wanted.has(route.destinationCidr) || reserved.has(route.destinationCidr);
    let responsible = claimed || responsibleCache.get(route.destinationCidr);
    if (responsible === undefined) {
      const destination = tryParseCidr(route.destinationCidr);
      responsible = destination !== null && isResponsible(destination, clusters);
      responsibleCache.set(route.destinationCidr, responsible);
    }
    if (!responsible) continue;
    if (!route.blackhole) live++;
    if (claimed) continue;
    deletes.push({
      routeTableId: route.routeTableId,
      destinationCidr: route.destinationCidr,
      reason: route.blackhole ? 'blackhole' : 'no-owner',
    });
    if (!route.blackhole) liveDeletes++;
  }

  const nodes: NodeStatus[] = facts.map((fact) => statusOf(fact, tableIds.length > 0));

  deletes.sort(compareOps);
  const plan: RoutePlan = { create, replace, delete: deletes, nodes };
  const unsafe = guard(input.nodes.length, live, liveDeletes, maxDeleteShare, minDeletesForGuard);
  if (unsafe !== null) plan.unsafe = unsafe;
  // Every warning above is built with its keys in contract order: reason, node, routeTableId, destinationCidr, detail.
  if (warnings.length > 0) plan.warnings = warnings.sort(compareWarnings);
  return plan;
}

const hasInstance = (fact: NodeFacts): fact is NodeFacts & { readonly instanceId: string } => fact.instanceId !== null && fact.unmanaged === null;

/** Of several claimants: one an active route already targets (smallest name), else the smallest name. */
function pickOwner(cidr: string, claimants: readonly NodeFacts[], tableIds: readonly string[], existing: ReadonlyMap<string, Route>): NodeFacts | undefined {
  const targeted = new Set<string>();
  for (const routeTableId of tableIds) {
    const route = existing.get(keyOf(routeTableId, cidr));
    if (route && !route.blackhole && route.target === 'instance' && route.instanceId !== null) targeted.add(route.instanceId);
  }
  return claimants.find((c) => c.instanceId !== null && targeted.has(c.instanceId)) ?? claimants[0];
}

function statusOf(fact: NodeFacts, haveTables: boolean): NodeStatus {
  if (fact.unmanaged !== null) {
    return { node: fact.name, networkUnavailable: networkUnavailableOf(fact.node) === 'True', patch: false, unmanaged: fact.unmanaged };
  }
  let wantedStatus: boolean | 'pending';
  if (fact.owned.length === 0 || fact.blocked || !haveTables) wantedStatus = true;
  else if (fact.pending) wantedStatus = 'pending';
  else wantedStatus = false;
  if (wantedStatus === 'pending') return { node: fact.name, networkUnavailable: 'pending', patch: false };
  const current = networkUnavailableOf(fact.node);
  return { node: fact.name, networkUnavailable: wantedStatus, patch: current !== (wantedStatus ? 'True' : 'False') };
}

function guard(nodeCount: number, live: number, liveDeletes: number, maxDeleteShare: number, minDeletesForGuard: number): string | null {
  if (nodeCount === 0 && live > 0) {
    return `node list is empty but ${live} routes exist in the cluster CIDRs; refusing to delete them`;
  }
  if (liveDeletes > maxDeleteShare * live && liveDeletes >= minDeletesForGuard) {
    const share = Math.round((liveDeletes / live) * 1000) / 10;
    const allowed = Math.round(maxDeleteShare * 1000) / 10;
    return `plan deletes ${liveDeletes} of ${live} live routes in the cluster CIDRs (${share}%, more than the ${allowed}% allowed); refusing to delete them`;
  }
  return null;
}

function describeTarget(route: Route): string {
  switch (route.target) {
    case 'gateway':
      return 'a gateway';
    case 'interface':
      return `network interface ${route.networkInterfaceId ?? '(unknown)'} without an instance`;
    case 'local':
      return 'the VPC (local route)';
    case 'instance':
      return `instance ${route.instanceId ?? '(unknown)'}`;
    case 'other':
      return 'a target podroute does not know';
  }
}

const compareWarnings = (a: PlanWarning, b: PlanWarning): number =>
  compareText(a.node ?? '', b.node ?? '') ||
  compareText(a.routeTableId ?? '', b.routeTableId ?? '') ||
  compareText(a.destinationCidr ?? '', b.destinationCidr ?? '') ||
  compareText(a.reason, b.reason) ||
  compareText(a.detail, b.detail);
