/**
 * Routes mode's dry-run node sync (lib/dataplane/routes/routes-plane.ts `planNodeSync`): over one
 * run's lease listing, the blocks the planned syncs take are counted, so a sync rejects with the
 * FULL error `allocateNext` would give exactly when the set has no block left for it.
 */
import { describe, expect, it } from 'vitest';
import { routesPlane } from '../../lib/dataplane/routes/routes-plane.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import type { Node } from '../../lib/nodes/node.ts';

const CLUSTER = '100.64.0.0/23';
const node = (name: string, podCidrs: string[] = []): Node => ({
  metadata: { name },
  spec: { providerID: `aws:///us-east-1a/i-0${name.padStart(16, '0')}`, ...(podCidrs.length > 0 ? { podCIDR: podCidrs[0], podCIDRs: podCidrs } : {}) },
});

describe('routes plane: planNodeSync counts the blocks of one run', () => {
  it.each<[string, Array<[string, string]>, Node[], Array<[string, string]>]>([
    ['two free blocks, two new nodes', [], [node('a'), node('b')], [['a', 'allocate'], ['b', 'allocate']]],
    ['one free block, two new nodes: the second finds the set full', [['100.64.0.0/24', 'x']], [node('a'), node('b')], [['a', 'allocate'], ['b', 'FULL']]],
    ['no free block, but the node holds one already (a retry gets it back)', [['100.64.0.0/24', 'x'], ['100.64.1.0/24', 'b']], [node('b')], [['b', 'allocate']]],
    ['no free block for a node holding none', [['100.64.0.0/24', 'x'], ['100.64.1.0/24', 'y']], [node('c')], [['c', 'FULL']]],
    ['an unleased pod CIDR that node sync occupies takes the last free block', [['100.64.1.0/24', 'x']], [node('a', ['100.64.0.0/24']), node('b')], [['a', 'occupy'], ['b', 'FULL']]],
  ])('%s', async (_what, leased, nodes, want) => {
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    for (const [cidr, owner] of leased) await set.occupy(cidr, owner);
    const plane = routesPlane({
      config: { clusterCidrs: [CLUSTER], nodeSyncMode: 'SyncFromCluster', maxDeleteShare: 0.5, minDeletesForGuard: 5 },
      routeTables: { listRouteTables: async () => [{ routeTableId: 'rtb-1', vpcId: null, tags: {}, routes: [], skippedRoutes: 0 }] },
      cidrSets: [set],
      interfaces: null,
    });
    const { run } = await plane.readRun(async () => nodes, { now: Date.now(), messageWindowMs: 570_000 });
    if (!run) throw new Error('no run');
    const got: Array<[string, string]> = [];
    for (const n of nodes) {
      const outcome = await run.planNodeSync(n).then(
        (p) => p.actions.find((a) => a.kind === 'allocate' || a.kind === 'occupy')?.kind ?? 'none',
        (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
      );
      got.push([n.metadata.name, outcome]);
    }
    expect(got).toEqual(want);
    // A dry run takes nothing: the set is as it was.
    expect((await set.usage()).used).toBe(leased.length);
  });
});
