/**
 * The gauges a reconcile run publishes for the alarms and the dashboard: NodesTotal, NodesReady,
 * NodesBlocked (NetworkUnavailable=True for longer than BLOCKED_NODE_SECONDS, by the condition's
 * lastTransitionTime), RoutesPending (creates + replaces planned), DeletionsWithheld and
 * ReconcileErrors, one value each per run, 0 included.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { NodeSource, RouteTables } from '../../lib/usecases/ports.ts';
import { MemoryNodeSource, MemoryRouteTables, MemoryWorkQueue } from '../fakes/index.ts';
import { inst } from '../routes/fixtures.ts';
import { withRoutesPlane } from '../support/plane.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

function node(name: string, n: number, podCidr: string | null, unavailable?: { status: string; since?: string }) {
  return {
    metadata: { name },
    spec: { providerID: `aws:///us-east-1a/${inst(n)}`, ...(podCidr ? { podCIDR: podCidr, podCIDRs: [podCidr] } : {}) },
    status: {
      conditions: unavailable
        ? [{ type: 'NetworkUnavailable', status: unavailable.status, ...(unavailable.since ? { lastTransitionTime: unavailable.since } : {}) }]
        : [],
    },
  };
}

type Table = Array<{ to: string; instance: number }>;
const table = (routes: Table): Table => routes;

async function run(nodes: ReadonlyArray<ReturnType<typeof node>>, tables: Table[], env: Record<string, string> = {}, tableIds: string[] = []) {
  const config = loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16', ...env });
  const log = memoryLogger();
  const nodeSource = new MemoryNodeSource(() => NOW);
  for (const object of nodes) nodeSource.put(object);
  const routeTables = new MemoryRouteTables({ clusterName: 'demo' });
  // The instances the routes point at (EC2 describes such a route with the instance and its interface).
  for (const n of new Set(tables.flat().map((r) => r.instance))) routeTables.addInstance({ id: inst(n) });
  for (const [i, routes] of tables.entries()) {
    const id = routeTables.addTable({ id: tableIds[i] ?? 'rtb-0000000000000000a' });
    for (const route of routes) routeTables.addRoute(id, route.to, { instanceId: inst(route.instance) });
  }
  await reconcile(
    withRoutesPlane({
      config,
      routeTables,
      nodes: nodeSource,
      queue: new MemoryWorkQueue(() => NOW),
      cidrSets: [await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24 })],
      log,
      now: () => NOW,
    }),
    { dryRun: true },
  );
  return gauges(log.lines);
}

/**
 * The run's metrics: `name` for a metric of the function's own dimensions, `name{Dim=value}` for
 * one with extra dimensions (memoryLogger writes each metric as its own EMF line).
 */
function gauges(lines: Array<Record<string, unknown>>): Record<string, unknown> {
  const metrics: Record<string, unknown> = {};
  for (const line of lines) {
    const emf = line._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: Array<{ Name: string }> }> } | undefined;
    const [directive] = emf?.CloudWatchMetrics ?? [];
    const name = directive?.Metrics[0]?.Name;
    if (!directive || name === undefined) continue;
    const dims = (directive.Dimensions[0] ?? []).map((dim) => `${dim}=${String(line[dim])}`);
    metrics[dims.length === 0 ? name : `${name}{${dims.join(',')}}`] = line[name];
  }
  return metrics;
}

describe('reconcile gauges', () => {
  it('counts total, ready, blocked nodes and pending routes', async () => {
    const nodes = [
      node('ready', 1, '10.244.1.0/24', { status: 'False', since: ago(5000) }),
      node('routed-late', 2, '10.244.2.0/24', { status: 'True', since: ago(601) }), // route missing: a create
      node('fresh', 3, '10.244.3.0/24', { status: 'True', since: ago(30) }), // a create, not blocked yet
      node('moved', 4, '10.244.4.0/24', { status: 'True', since: ago(10_000) }), // route to another instance: a replace
      node('no-time', 5, null, { status: 'True' }),
    ];
    const tables = [table([{ to: '10.244.1.0/24', instance: 1 }, { to: '10.244.4.0/24', instance: 9 }])];
    expect(await run(nodes, tables)).toEqual({
      ReconcileErrors: 0,
      NodesTotal: 5,
      NodesReady: 1,
      NodesBlocked: 2,
      RoutesPending: 3,
      DeletionsWithheld: 0,
      // One table holding 3 of the default quota's 500 IPv4 routes: 2 to nodes and the VPC's local route.
      'RouteTableHeadroom{RouteTableId=rtb-0000000000000000a}': 0.6,
      RouteTableHeadroom: 0.6,
      ReconcileCompleted: 1,
    });
  });

  it('reports each table\'s use of ROUTE_QUOTA, and the fullest table without a table dimension', async () => {
    const routes = (count: number, from: number) => Array.from({ length: count }, (_, i) => ({ to: `10.244.${from + i}.0/24`, instance: 1 }));
    const nodes = [node('a', 1, '10.244.1.0/24', { status: 'False', since: ago(5000) })];
    const tables = [table(routes(3, 1)), table([...routes(1, 1), ...routes(39, 100)])];
    // Every route counts, podroute's or not (the 39 here are no node's: deletions the guard withholds),
    // and the VPC's local route too: 4 and 41 of 50.
    const metrics = await run(nodes, tables, { ROUTE_QUOTA: '50' }, ['rtb-0000000000000000a', 'rtb-0000000000000000b']);
    expect(metrics).toMatchObject({
      'RouteTableHeadroom{RouteTableId=rtb-0000000000000000a}': 8,
      'RouteTableHeadroom{RouteTableId=rtb-0000000000000000b}': 82,
      RouteTableHeadroom: 82,
      ReconcileCompleted: 1,
    });
  });

  it('sends no heartbeat from a run that refused to start', async () => {
    const log = memoryLogger();
    const config = loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16' });
    const deps = withRoutesPlane({
      config,
      routeTables: { listRouteTables: async () => [] } as unknown as RouteTables,
      nodes: { listNodes: async () => [node('a', 1, '10.244.1.0/24')] } as unknown as NodeSource,
      queue: new MemoryWorkQueue(),
      cidrSets: [await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24 })],
      log,
      now: () => NOW,
    });
    await expect(reconcile(deps)).rejects.toThrow(/refused/);
    expect(gauges(log.lines)).toEqual({ ReconcileRefused: 1 });
  });

  it('takes the threshold from BLOCKED_NODE_SECONDS', async () => {
    const nodes = [node('a', 1, '10.244.1.0/24', { status: 'True', since: ago(120) })];
    expect((await run(nodes, [table([])], { BLOCKED_NODE_SECONDS: '60' })).NodesBlocked).toBe(1);
    expect((await run(nodes, [table([])], { BLOCKED_NODE_SECONDS: '600' })).NodesBlocked).toBe(0);
  });

  it('reports deletions withheld by the mass-deletion guard', async () => {
    const routes = Array.from({ length: 8 }, (_, i) => ({ to: `10.244.${10 + i}.0/24`, instance: 20 + i }));
    const nodes = [node('only', 1, '10.244.1.0/24', { status: 'False', since: ago(5000) })];
    const metrics = await run(nodes, [table([{ to: '10.244.1.0/24', instance: 1 }, ...routes])]);
    expect(metrics.DeletionsWithheld).toBe(8);
  });

  it.each(['0', '59', '-5', '1.5', 'soon'])('refuses BLOCKED_NODE_SECONDS=%s', (value) => {
    expect(() => loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16', BLOCKED_NODE_SECONDS: value })).toThrow(/BLOCKED_NODE_SECONDS/);
  });

  it.each([
    ['exactly at the threshold', 600, 0],
    ['one second past it', 601, 1],
  ])('NodesBlocked: %s', async (_label, seconds, expected) => {
    const nodes = [node('a', 1, null, { status: 'True', since: ago(seconds) })];
    expect((await run(nodes, [table([])], { BLOCKED_NODE_SECONDS: '600' })).NodesBlocked).toBe(expected);
  });
});
