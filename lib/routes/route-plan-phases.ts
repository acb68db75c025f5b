/**
 * The route planner's phases (lib/routes/route-plan.ts composes them; the step numbers below are
 * those of docs/decisions/0008-route-plan-rules.md). Each phase reads what the ones before produced
 * and adds its warnings; none does I/O.
 */
import { type Cidr, containsAddress, containsCidr, formatCidr, lastAddress, tryParseCidr } from '../cidr/cidr.ts';
import { type Node, instanceIdOf, podCidrsOf } from '../nodes/node.ts';
import { type UnmanagedReason, unmanagedReason } from '../nodes/managed-node.ts';
import type { ConflictReason, Ownership } from './ownership.ts';
import type { CreateOp, DeleteOp, PlanInput, PlanWarning, ReplaceOp } from './route-plan.ts';
import { type Route, isClusterTable } from './route-tables.ts';
import { nodeKindOf, wantedVerdict, withRoute } from './route-rules.ts';

export interface NodeFacts {
  readonly name: string;
  readonly node: Node;
  readonly instanceId: string | null;
  readonly unmanaged: UnmanagedReason | null;
  /** Canonical pod CIDRs this node owns (./ownership.ts), inside the cluster CIDRs. */
  readonly owned: string[];
  blocked: boolean;
  pending: boolean;
  /** Some pod CIDR of it waits for its lease (adoption by reconcile). */
  adopting: boolean;
  /** The first conflict of its pod CIDRs (./ownership.ts), if any. */
  conflict: ConflictReason | null;
}

type OwnerFacts = NodeFacts & { readonly instanceId: string };

/** The cluster tables (sorted ids) and their routes by (table, destination). */
interface TableIndex {
  readonly tableIds: string[];
  /** Static routes: the ones route calls act on. */
  readonly existing: Map<string, Route>;
  /** Propagated routes, apart: context only, never touched (a VPC Route Server one first). */
  readonly propagatedAt: Map<string, Route>;
}

const keyOf = (routeTableId: string, destinationCidr: string): string => `${routeTableId}|${destinationCidr}`;

export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Upstream `isResponsibleForRoute` (step 3): the first or last address lies in a cluster CIDR. */
export function isResponsible(destination: Cidr, clusters: readonly Cidr[]): boolean {
  const last = lastAddress(destination);
  return clusters.some(
    (cluster) =>
      containsAddress(cluster, destination.family, destination.network) || containsAddress(cluster, destination.family, last),
  );
}

/**
 * Step 1a: a route described with only a network interface that is some instance's primary one
 * (`primaryInterfaces`: instance -> primary interface) is a route to that instance. EC2 is observed
 * to describe a route to an attached interface with both ids, but the EC2 API reference (Route)
 * does not say so; this keeps a node's route its own when only the interface id comes back.
 */
export function matchInterfaceTarget(route: Route, instanceOfInterface: ReadonlyMap<string, string>): Route {
  if (route.target !== 'interface' || route.networkInterfaceId === null) return route;
  const instanceId = instanceOfInterface.get(route.networkInterfaceId);
  return instanceId === undefined ? route : { ...route, target: 'instance', instanceId };
}

/** Step 1: the cluster tables, one per id, sorted; their static routes indexed apart from the propagated ones. */
export function indexTables(input: Pick<PlanInput, 'routeTables' | 'clusterName' | 'primaryInterfaces'>, warnings: PlanWarning[]): TableIndex {
  const tableIds: string[] = [];
  const existing = new Map<string, Route>();
  const propagatedAt = new Map<string, Route>();
  const seen = new Set<string>();
  const instanceOfInterface = new Map<string, string>();
  for (const [instanceId, eni] of input.primaryInterfaces ?? []) instanceOfInterface.set(eni, instanceId);
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
    for (const listed of table.routes) {
      const route = matchInterfaceTarget(listed, instanceOfInterface);
      const key = keyOf(table.routeTableId, route.destinationCidr);
      const seen = withRoute({ static: existing.get(key), propagated: propagatedAt.get(key) }, route);
      if (seen.static !== undefined) existing.set(key, seen.static);
      if (seen.propagated !== undefined) propagatedAt.set(key, seen.propagated);
    }
  }
  tableIds.sort(compareText);
  return { tableIds, existing, propagatedAt };
}

/** Step 2: the nodes, one per name, sorted by name. */
export function collectNodes(input: Pick<PlanInput, 'nodes' | 'nodeSelector'>, warnings: PlanWarning[]): NodeFacts[] {
  const facts: NodeFacts[] = [];
  const seen = new Set<string>();
  for (const node of input.nodes) {
    const name = node.metadata.name;
    if (seen.has(name)) {
      warnings.push({ reason: 'duplicate-node', node: name, detail: `node ${name} was listed more than once; the first entry is used` });
      continue;
    }
    seen.add(name);
    const unmanaged = unmanagedReason(node, input.nodeSelector);
    facts.push({ name, node, instanceId: instanceIdOf(node), unmanaged, owned: [], blocked: false, pending: false, adopting: false, conflict: null });
  }
  facts.sort((a, b) => compareText(a.name, b.name));
  return facts;
}

/** Step 7: bad pod CIDRs (unparseable, outside every cluster CIDR) are warned about; one outside blocks its node. */
export function checkPodCidrs(facts: readonly NodeFacts[], clusters: readonly Cidr[], warnings: PlanWarning[]): void {
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
      if (clusters.some((cluster) => containsCidr(cluster, cidr))) continue;
      fact.blocked = true;
      if (fact.unmanaged !== null) continue; // not podroute's node: nothing to say about its CIDRs
      warnings.push({
        reason: 'outside-cluster-cidrs',
        node: fact.name,
        destinationCidr: canonical,
        detail: `pod CIDR ${canonical} is not inside any cluster CIDR; no route is made for it`,
      });
    }
  }
}

/**
 * Steps 2, 4a and 7: the owner of each pod CIDR, from the ownership decider (./ownership.ts).
 * Wanted destinations are owned by a managed node with an instance; reserved ones belong to an
 * unmanaged node or wait for their lease (neither routed nor deleted). A conflict blocks its node.
 */
export function assignOwners(
  facts: readonly NodeFacts[],
  ownership: Ownership,
  warnings: PlanWarning[],
): { wanted: Map<string, OwnerFacts>; reserved: Set<string> } {
  const byName = new Map(facts.map((fact) => [fact.name, fact]));
  const wanted = new Map<string, OwnerFacts>();
  const reserved = new Set<string>();
  for (const [cidr, name] of ownership.owners) {
    const owner = byName.get(name);
    if (!owner) continue;
    owner.owned.push(cidr);
    if (hasInstance(owner)) wanted.set(cidr, owner);
    else reserved.add(cidr);
  }
  for (const [cidr, name] of ownership.reserved) {
    reserved.add(cidr);
    const fact = byName.get(name);
    if (fact) fact.adopting = true;
  }
  for (const conflict of ownership.conflicts) {
    const fact = byName.get(conflict.node);
    if (!fact) continue;
    if (fact.unmanaged === null) {
      fact.blocked = true;
      fact.conflict ??= conflict.reason;
    } else if (conflict.reason !== 'instance-of-another-node') {
      continue; // an unmanaged node's pod CIDRs are not podroute's to judge; its naming a managed node's instance is told
    }
    warnings.push({
      reason: 'pod-cidr-conflict',
      node: conflict.node,
      ...(conflict.cidr === undefined ? {} : { destinationCidr: conflict.cidr }),
      detail: conflict.detail,
    });
  }
  return { wanted, reserved };
}

/**
 * Step 5: create, replace or keep each wanted destination in each cluster table. Tables and
 * destinations are walked in sorted order, so create and replace come out sorted.
 */
export function planWantedRoutes(
  { tableIds, existing, propagatedAt }: TableIndex,
  wanted: ReadonlyMap<string, OwnerFacts>,
  unmanagedInstances: ReadonlySet<string | null>,
  warnings: PlanWarning[],
): { create: CreateOp[]; replace: ReplaceOp[] } {
  const wantedSorted = [...wanted].sort((a, b) => compareText(a[0], b[0]));
  const create: CreateOp[] = [];
  const replace: ReplaceOp[] = [];
  for (const routeTableId of tableIds) {
    for (const [destinationCidr, owner] of wantedSorted) {
      const key = keyOf(routeTableId, destinationCidr);
      const verdict = wantedVerdict({ static: existing.get(key), propagated: propagatedAt.get(key) }, owner, unmanagedInstances);
      const op = { routeTableId, destinationCidr, node: owner.name, instanceId: owner.instanceId };
      if (verdict.kind === 'keep') continue;
      if (verdict.kind === 'blocked') {
        owner.blocked = true;
        warnings.push({ reason: verdict.reason, node: owner.name, routeTableId, destinationCidr, detail: blockedDetail(verdict.route, op) });
        continue;
      }
      owner.pending = true;
      if (verdict.kind === 'replace') {
        const moved = verdict.reason === 'moved' ? { expect: { instanceId: existing.get(key)?.instanceId ?? null } } : {};
        replace.push({ ...op, reason: verdict.reason, ...moved });
        continue;
      }
      create.push(op);
      if (verdict.beside !== undefined) {
        warnings.push({
          reason: 'propagated-route',
          node: owner.name,
          routeTableId,
          destinationCidr,
          detail: `${routeTableId} has a propagated route (EnableVgwRoutePropagation) for ${destinationCidr}; the static route to node ${owner.name} takes priority over it`,
        });
      }
    }
  }
  return { create, replace };
}

/** Steps 4, 6 and 9's counts: responsible node-kind routes that no node wants, and the live routes. */
export function planDeletes(
  existing: ReadonlyMap<string, Route>,
  claimed: { wanted: ReadonlyMap<string, unknown>; reserved: ReadonlySet<string> },
  unmanagedInstances: ReadonlySet<string | null>,
  clusters: readonly Cidr[],
): { deletes: DeleteOp[]; live: number; liveDeletes: number } {
  const { wanted, reserved } = claimed;
  const deletes: DeleteOp[] = [];
  const responsibleCache = new Map<string, boolean>();
  let live = 0;
  let liveDeletes = 0;
  for (const route of existing.values()) {
    if (nodeKindOf(route) === null) continue;
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
      expect: { instanceId: route.instanceId, blackhole: route.blackhole },
    });
    if (!route.blackhole) liveDeletes++;
  }
  return { deletes, live, liveDeletes };
}

const hasInstance = (fact: NodeFacts): fact is NodeFacts & { readonly instanceId: string } => fact.instanceId !== null && fact.unmanaged === null;

/** Why a wanted route is blocked: a VPC Route Server route alone, or a target podroute does not replace. */
function blockedDetail(route: Route, op: { routeTableId: string; destinationCidr: string; node: string }): string {
  const { routeTableId, destinationCidr, node } = op;
  if (route.propagated !== undefined) {
    return `${routeTableId} has a propagated route (VPC Route Server) for ${destinationCidr}; EC2 cannot replace it, so node ${node} is not routed there`;
  }
  return `${routeTableId} routes ${destinationCidr} to ${describeTarget(route)}, not to node ${node}; podroute does not replace it`;
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

