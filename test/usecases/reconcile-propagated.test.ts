/**
 * Reconcile's delete messages carry the static route they were planned from (`expect`), also when
 * a propagated route to the same destination is listed after it (Amazon VPC User Guide, "How route
 * priority works": both coexist). Taken from the propagated route, `expect` would name no instance
 * and the worker would drop the delete as stale (`stale:target-changed`) every time.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryWorkQueue } from '../../lib/messages/work-queue.ts';
import { parseNode } from '../../lib/nodes/node.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { NodeSource, RouteTables } from '../../lib/usecases/ports.ts';
import { inst } from '../routes/fixtures.ts';
import { parseRouteTables } from '../../lib/routes/index.ts';
import { withRoutesPlane } from '../support/plane.ts';

describe('reconcile: delete messages beside propagated routes', () => {
  it.each([
    ['static first', false],
    ['propagated first', true],
  ])('expects the static route, not the propagated one (%s)', async (_order, propagatedFirst) => {
    const staticRoute = { DestinationCidrBlock: '10.244.9.0/24', InstanceId: inst(9), NetworkInterfaceId: 'eni-0000000000000009a', State: 'active', Origin: 'CreateRoute' };
    const vgwRoute = { DestinationCidrBlock: '10.244.9.0/24', GatewayId: 'vgw-0a1b2c3d4e5f60001', State: 'active', Origin: 'EnableVgwRoutePropagation' };
    const routeTables = {
      listRouteTables: async () => parseRouteTables({ RouteTables: [{
        RouteTableId: 'rtb-0000000000000000a',
        Tags: [{ Key: 'kubernetes.io/cluster/demo', Value: 'owned' }],
        Routes: propagatedFirst ? [vgwRoute, staticRoute] : [staticRoute, vgwRoute],
      }] }),
    } as unknown as RouteTables;
    const node = parseNode({ metadata: { name: 'a' }, spec: { providerID: `aws:///us-east-1a/${inst(1)}`, podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] }, status: { conditions: [{ type: 'NetworkUnavailable', status: 'True' }] } });
    const nodes = { listNodes: async () => [node], setNetworkUnavailable: async () => 'unchanged' } as unknown as NodeSource;
    const queue = new MemoryWorkQueue();
    await reconcile(withRoutesPlane({
      config: loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16', MIN_DELETES_FOR_GUARD: '1000' }),
      routeTables,
      nodes,
      queue,
      cidrSets: [await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24 })],
      log: memoryLogger(),
      now: () => Date.parse('2026-06-01T12:00:00Z'),
    }));
    expect(queue.sent.filter((m) => m.kind === 'delete')).toEqual([
      { v: 1, kind: 'delete', routeTableId: 'rtb-0000000000000000a', destinationCidr: '10.244.9.0/24', reason: 'no-owner', expect: { instanceId: inst(9), blackhole: false } },
    ]);
  });
});
