/** The cluster-CIDR typo rule (lib/nodes/pod-cidr-scope.ts), table-driven. */
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../lib/nodes/label-selector.ts';
import { strayPodCidrs } from '../../lib/nodes/pod-cidr-scope.ts';
import { node } from '../routes/fixtures.ts';

const routed = (name: string, cidrs: string[], labels?: Record<string, string>) => node(name, { instance: name.length, podCidrs: cidrs, ...(labels ? { labels } : {}) });

describe('strayPodCidrs', () => {
  it.each<[string, ReturnType<typeof node>[], string[], ReturnType<typeof strayPodCidrs>]>([
    ['every node outside the cluster CIDRs (a typo)', [routed('a', ['100.64.0.0/24']), routed('bb', ['100.64.1.0/24'])], ['100.65.0.0/16'], { carriers: 2, node: 'a', cidr: '100.64.0.0/24' }],
    ['one node inside is enough', [routed('a', ['100.64.0.0/24']), routed('bb', ['100.65.1.0/24'])], ['100.65.0.0/16'], null],
    ['a dual-stack node inside by its IPv4 CIDR', [routed('a', ['100.64.0.0/24', 'fd00:1::/64'])], ['100.64.0.0/16'], null],
    ['no node carries a pod CIDR (a fresh cluster)', [node('a', { instance: 1 })], ['100.65.0.0/16'], null],
    ['a node without a provider ID is not podroute\'s', [node('a', { instance: null, podCidrs: ['100.64.0.0/24'] })], ['100.65.0.0/16'], null],
    ['a super-range of the cluster CIDR does not lie in it', [routed('a', ['100.0.0.0/8'])], ['100.64.0.0/16'], { carriers: 1, node: 'a', cidr: '100.0.0.0/8' }],
    ['no nodes', [], ['100.64.0.0/16'], null],
  ])('%s', (_name, nodes, clusterCidrs, expected) => {
    expect(strayPodCidrs(nodes, clusterCidrs)).toEqual(expected);
  });

  it('counts only nodes inside the node selector', () => {
    const nodes = [routed('a', ['10.0.0.0/24'], { pool: 'other' }), routed('bb', ['100.64.1.0/24'], { pool: 'ours' })];
    expect(strayPodCidrs(nodes, ['100.65.0.0/16'], parseLabelSelector('pool=ours'))).toEqual({ carriers: 1, node: 'bb', cidr: '100.64.1.0/24' });
  });
});
