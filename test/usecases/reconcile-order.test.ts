/**
 * Reconcile reads the route tables before the nodes: a node listed after the tables covers every
 * route those tables hold. Read in parallel, a node created (and routed by the worker) while the
 * tables were being listed is missing from an earlier node snapshot, and its route, present in
 * the table snapshot, is planned as a `no-owner` deletion (one deletion never trips the guard).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { Node } from '../../lib/nodes/node.ts';
import type { RouteTable } from '../../lib/routes/route-tables.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { MemoryNodeSource, MemoryRouteTables, MemoryWorkQueue } from '../fakes/index.ts';
import { inst } from '../routes/fixtures.ts';
import { withRoutesPlane } from '../support/plane.ts';

const spec = (n: number, podCidr: string) => ({ instanceId: inst(n), podCidrs: [podCidr] });

describe('reconcile: read order', () => {
  it('plans no deletion for the route of a node created while the tables were listed', async () => {
    const order: string[] = [];
    const nodes = new (class extends MemoryNodeSource {
      override async listNodes(): Promise<Node[]> {
        order.push('nodes');
        return super.listNodes();
      }
    })();
    nodes.add('old', spec(1, '10.244.1.0/24'));
    const routeTables = new (class extends MemoryRouteTables {
      override async listRouteTables(): Promise<RouteTable[]> {
        order.push('tables:start');
        await Promise.resolve();
        // Meanwhile node "new" registers and the worker routes it; this listing sees its route.
        nodes.add('new', spec(2, '10.244.2.0/24'));
        await Promise.resolve();
        order.push('tables:end');
        return super.listRouteTables();
      }
    })({ clusterName: 'demo' });
    const table = routeTables.addTable({ id: 'rtb-0000000000000000a' });
    for (const n of [1, 2]) {
      routeTables.addInstance({ id: inst(n) });
      routeTables.addRoute(table, `10.244.${n}.0/24`, { instanceId: inst(n) });
    }
    const report = await reconcile(
      withRoutesPlane({
        config: loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16' }),
        routeTables,
        nodes,
        queue: new MemoryWorkQueue(),
        cidrSets: [await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24 })],
        log: memoryLogger(),
        now: () => Date.parse('2026-06-01T12:00:00Z'),
      }),
      { dryRun: true },
    );
    expect(report.plan.delete).toEqual([]);
    expect(report.nodes).toBe(2);
    expect(order).toEqual(['tables:start', 'tables:end', 'nodes']);
  });
});
