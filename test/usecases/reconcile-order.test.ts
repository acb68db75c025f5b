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
import { MemoryWorkQueue } from '../../lib/messages/work-queue.ts';
import { parseNode, type Node } from '../../lib/nodes/node.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { NodeSource, RouteTables } from '../../lib/usecases/ports.ts';
import { inst } from '../routes/fixtures.ts';
import { parseRouteTables } from '../../lib/routes/index.ts';

const node = (name: string, n: number, podCidr: string): Node =>
  parseNode({ metadata: { name }, spec: { providerID: `aws:///us-east-1a/${inst(n)}`, podCIDR: podCidr, podCIDRs: [podCidr] } });

describe('reconcile: read order', () => {
  it('plans no deletion for the route of a node created while the tables were listed', async () => {
    const live: Node[] = [node('old', 1, '10.244.1.0/24')];
    const order: string[] = [];
    const routeTables = {
      listRouteTables: async () => {
        order.push('tables:start');
        await Promise.resolve();
        // Meanwhile node "new" registers and the worker routes it; this listing sees its route.
        live.push(node('new', 2, '10.244.2.0/24'));
        await Promise.resolve();
        order.push('tables:end');
        // The adapter answers in podroute's terms: EC2's shape through the one translation.
        return parseRouteTables({ RouteTables: [{
          RouteTableId: 'rtb-0000000000000000a',
          Tags: [{ Key: 'kubernetes.io/cluster/demo', Value: 'owned' }],
          Routes: [
            { DestinationCidrBlock: '10.244.1.0/24', InstanceId: inst(1), State: 'active', Origin: 'CreateRoute' },
            { DestinationCidrBlock: '10.244.2.0/24', InstanceId: inst(2), State: 'active', Origin: 'CreateRoute' },
          ],
        }] });
      },
    } as unknown as RouteTables;
    const nodes = {
      listNodes: async () => {
        order.push('nodes');
        return [...live];
      },
    } as unknown as NodeSource;
    const report = await reconcile(
      {
        config: loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16' }),
        routeTables,
        nodes,
        queue: new MemoryWorkQueue(),
        cidrSets: [await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24 })],
        log: memoryLogger(),
        now: () => Date.parse('2026-06-01T12:00:00Z'),
      },
      { dryRun: true },
    );
    expect(report.plan.delete).toEqual([]);
    expect(report.nodes).toBe(2);
    expect(order).toEqual(['tables:start', 'tables:end', 'nodes']);
  });
});
