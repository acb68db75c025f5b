/** applyNodeSync: applies the decider's actions in order and refuses a list that cannot be applied. */
import { describe, expect, it } from 'vitest';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { NodeSyncError, applyNodeSync } from '../../lib/nodesync/index.ts';
import type { NodeSyncAction } from '../../lib/nodesync/index.ts';
import { dualStackFakes, errorOf, node, recordSet } from './fakes.ts';

const V4 = '10.1.0.0/16';

describe('applyNodeSync', () => {
  it('resolves an allocated block in the later writes', async () => {
    const set = await createCidrSet({ clusterCidr: V4, nodeMaskSize: 24 });
    const fakes = dualStackFakes();
    await applyNodeSync(
      [{ kind: 'allocate', set: 0 }, { kind: 'addAlias', cidrs: [{ allocated: 0 }] }, { kind: 'patchPodCidrs', cidrs: [{ allocated: 0 }] }],
      node('node1'),
      { cidrSets: [recordSet(set, fakes.calls)], cloud: fakes.cloud, kube: fakes.kube },
    );
    expect(fakes.calls).toEqual([`allocateNext ${V4} node1`, 'addAlias node1 10.1.0.0/24', 'updatePodCidr node1 10.1.0.0/24']);
  });

  it.each<[string, NodeSyncAction[], ErrorConstructor | typeof NodeSyncError]>([
    ['a block no allocate took', [{ kind: 'addAlias', cidrs: [{ allocated: 0 }] }], Error],
    ['a set that is not configured', [{ kind: 'occupy', set: 1, cidr: '10.1.1.0/24' }], NodeSyncError],
  ])('refuses %s and writes nothing', async (_desc, actions, type) => {
    const set = await createCidrSet({ clusterCidr: V4, nodeMaskSize: 24 });
    const fakes = dualStackFakes();
    const error = await errorOf(applyNodeSync(actions, node('node1'), { cidrSets: [recordSet(set, fakes.calls)], cloud: fakes.cloud, kube: fakes.kube }));
    expect(error).toBeInstanceOf(type);
    expect(fakes.calls).toEqual([]);
  });
});
