/**
 * decideNodeSync as a pure function: upstream's sync_test.go cases (TestNodeSyncUpdate,
 * TestNodeSyncDelete) and ours (canonical text, IPv6, dual-stack, set placement), each as the exact
 * list of actions; nodeSyncConfig's refusals.
 */
import { describe, expect, it } from 'vitest';
import type { Node } from '../../lib/nodes/node.ts';
import { NodeSyncError, decideNodeSync, nodeSyncConfig } from '../../lib/nodesync/index.ts';
import type { NodeSyncAction, NodeSyncInput, SyncMode } from '../../lib/nodesync/index.ts';
import { deepFreeze, node } from './fakes.ts';

const V4 = '10.1.0.0/16';
const V6 = '2001:db8::/48';
const without = node('node1');
const withV4 = node('node1', { podCIDR: '10.1.1.0/24' });
const both = node('node1', { podCIDR: '10.1.1.0/24', podCIDRs: ['10.1.1.0/24', '2001:db8:0:7::/64'] });

const NU: NodeSyncAction = { kind: 'setNetworkUnavailable', unavailable: false };
const mismatch = (nodeText: string, alias: string): NodeSyncAction => ({
  kind: 'warn', reason: 'CloudCIDRAllocatorMismatch', message: `Node.Spec.PodCIDR != cloud alias (${nodeText} != ${alias})`,
});
const wrongMode = (warning: string, error: string, mode: SyncMode): NodeSyncAction[] => [
  { kind: 'warn', reason: 'CloudCIDRAllocatorInvalidMode', message: `${warning} "${mode}"` },
  { kind: 'fail', code: 'INVALID_MODE', message: `${error} "${mode}"` },
];

describe('decideNodeSync update, one set (upstream TestNodeSyncUpdate and ours)', () => {
  it.each<[string, SyncMode, Node, string[], NodeSyncAction[], string?]>([
    ['validate range ==', 'SyncFromCloud', withV4, ['10.1.1.0/24'], []],
    ['validate range !=', 'SyncFromCloud', withV4, ['192.168.0.0/24'], [mismatch('10.1.1.0/24', '192.168.0.0/24')]],
    ['update alias from node, wrong mode', 'SyncFromCloud', withV4, [], wrongMode('Cannot sync to cloud in mode', 'cannot sync to cloud in mode', 'SyncFromCloud')],
    ['update alias from node', 'SyncFromCluster', withV4, [], [
      { kind: 'occupy', set: 0, cidr: '10.1.1.0/24' }, { kind: 'addAlias', cidrs: [{ cidr: '10.1.1.0/24' }] }, NU,
    ]],
    ['update node from alias (host bits cleared)', 'SyncFromCloud', without, ['10.1.2.3/16'], [
      { kind: 'occupy', set: 0, cidr: '10.1.0.0/16' }, { kind: 'patchPodCidrs', cidrs: [{ cidr: '10.1.0.0/16' }] }, NU,
    ]],
    ['update node from alias, wrong mode', 'SyncFromCluster', without, ['10.1.2.3/16'],
      wrongMode('Cannot sync from cloud in mode', 'cannot sync from cloud in mode', 'SyncFromCluster')],
    ['allocate range, wrong mode', 'SyncFromCloud', without, [], wrongMode('Cannot allocate CIDRs in mode', 'controller cannot allocate CIDRs in mode', 'SyncFromCloud')],
    ['allocate range', 'SyncFromCluster', without, [], [
      { kind: 'allocate', set: 0 }, { kind: 'addAlias', cidrs: [{ allocated: 0 }] }, { kind: 'patchPodCidrs', cidrs: [{ allocated: 0 }] }, NU,
    ]],
    // ours
    ['host bits in podCIDR still validate', 'SyncFromCluster', node('node1', { podCIDR: '10.1.1.77/24' }), ['10.1.1.0/24'], []],
    ['an unparseable podCIDR against an alias is a mismatch', 'SyncFromCluster', node('node1', { podCIDR: 'invalid' }), ['10.1.1.0/24'],
      [mismatch('invalid', '10.1.1.0/24')]],
    ['an unparseable podCIDR for the cloud fails', 'SyncFromCluster', node('node1', { podCIDR: 'invalid' }), [],
      [{ kind: 'fail', code: 'INVALID_CIDR', message: 'invalid podCIDR of node node1: "invalid"' }]],
    ['an unparseable alias fails before the mode is judged', 'SyncFromCloud', without, ['10.1.0.0'],
      [{ kind: 'fail', code: 'INVALID_CIDR', message: 'invalid cloud alias of node node1: "10.1.0.0"' }]],
    ['a podCIDR outside the cluster is still occupied (the set refuses it)', 'SyncFromCluster', node('node1', { podCIDR: '192.168.0.0/24' }), [], [
      { kind: 'occupy', set: 0, cidr: '192.168.0.0/24' }, { kind: 'addAlias', cidrs: [{ cidr: '192.168.0.0/24' }] }, NU,
    ]],
    ['IPv6 canonical text goes to the cloud', 'SyncFromCluster', node('node1', { podCIDR: '2001:0DB8:0000:0005::1/64' }), [], [
      { kind: 'occupy', set: 0, cidr: '2001:db8:0:5::/64' }, { kind: 'addAlias', cidrs: [{ cidr: '2001:db8:0:5::/64' }] }, NU,
    ], V6],
    ['IPv6 upper case and zeros written out validate', 'SyncFromCloud', node('node1', { podCIDR: '2001:DB8:0:5:0:0:0:0/64' }), ['2001:db8:0:5::/64'], [], V6],
  ])('%s', (_desc, mode, victim, aliases, actions, cluster = V4) => {
    const input = structuredClone(victim);
    expect(decideNodeSync({ kind: 'update', node: victim, aliases }, nodeSyncConfig(mode, [cluster]))).toEqual(actions);
    expect(victim).toEqual(input);
  });
});

describe('decideNodeSync update, dual-stack', () => {
  it.each<[string, SyncMode, Node, string[], string[], NodeSyncAction[]]>([
    ['both allocated, in the sets\' order', 'SyncFromCluster', without, [], [V6, V4], [
      { kind: 'allocate', set: 0 }, { kind: 'allocate', set: 1 },
      { kind: 'addAlias', cidrs: [{ allocated: 0 }, { allocated: 1 }] }, { kind: 'patchPodCidrs', cidrs: [{ allocated: 0 }, { allocated: 1 }] }, NU,
    ]],
    ['IPv4 agreed, IPv6 allocated: the patch keeps the IPv4 value', 'SyncFromCluster', withV4, ['10.1.1.0/24'], [V4, V6], [
      { kind: 'allocate', set: 1 }, { kind: 'addAlias', cidrs: [{ allocated: 1 }] },
      { kind: 'patchPodCidrs', cidrs: [{ cidr: '10.1.1.0/24' }, { allocated: 1 }] }, NU,
    ]],
    ['occupies before it allocates', 'SyncFromCluster', withV4, [], [V4, V6], [
      { kind: 'occupy', set: 0, cidr: '10.1.1.0/24' }, { kind: 'allocate', set: 1 },
      { kind: 'addAlias', cidrs: [{ cidr: '10.1.1.0/24' }, { allocated: 1 }] },
      { kind: 'patchPodCidrs', cidrs: [{ cidr: '10.1.1.0/24' }, { allocated: 1 }] }, NU,
    ]],
    ['aliases in any order and spelling go by family', 'SyncFromCloud', without, ['2001:DB8:0:7:0::/64', '10.1.1.0/24'], [V4, V6], [
      { kind: 'occupy', set: 0, cidr: '10.1.1.0/24' }, { kind: 'occupy', set: 1, cidr: '2001:db8:0:7::/64' },
      { kind: 'patchPodCidrs', cidrs: [{ cidr: '10.1.1.0/24' }, { cidr: '2001:db8:0:7::/64' }] }, NU,
    ]],
    ['a mismatch in one family writes nothing', 'SyncFromCluster', both, ['10.1.1.0/24', '2001:db8:0:8::/64'], [V4, V6],
      [mismatch('2001:db8:0:7::/64', '2001:db8:0:8::/64')]],
    ['the first forbidden branch refuses the whole sync', 'SyncFromCloud', without, ['2001:db8:0:9::/64'], [V4, V6],
      wrongMode('Cannot allocate CIDRs in mode', 'controller cannot allocate CIDRs in mode', 'SyncFromCloud')],
  ])('%s', (_desc, mode, victim, aliases, clusters, actions) => {
    expect(decideNodeSync({ kind: 'update', node: victim, aliases }, nodeSyncConfig(mode, clusters))).toEqual(actions);
  });
});

describe('decideNodeSync delete (upstream TestNodeSyncDelete and ours)', () => {
  it.each<[string, Node, string[], NodeSyncAction[]]>([
    ['delete', withV4, [V4], [{ kind: 'release', set: 0, cidr: '10.1.1.0/24' }]],
    ['delete without CIDR range', without, [V4], []],
    ['delete with invalid CIDR range', node('node1', { podCIDR: 'invalid' }), [V4],
      [{ kind: 'warn', reason: 'CloudCIDRAllocatorInvalidPodCIDR', message: 'Node "node1" has an invalid PodCIDR: "invalid"' }]],
    ['host bits cleared', node('node1', { podCIDR: '10.1.1.9/24' }), [V4], [{ kind: 'release', set: 0, cidr: '10.1.1.0/24' }]],
    ['a family without a set goes by position', node('node1', { podCIDR: '2001:db8::/64' }), [V4], [{ kind: 'release', set: 0, cidr: '2001:db8::/64' }]],
    ['dual-stack: each family from its set', both, [V6, V4], [
      { kind: 'release', set: 1, cidr: '10.1.1.0/24' }, { kind: 'release', set: 0, cidr: '2001:db8:0:7::/64' },
    ]],
    ['an entry past the sets is left alone', node('node1', { podCIDRs: ['10.1.1.0/24', '10.1.2.0/24'] }), [V4], [{ kind: 'release', set: 0, cidr: '10.1.1.0/24' }]],
  ])('%s', (_desc, victim, clusters, actions) => {
    expect(decideNodeSync({ kind: 'delete', node: victim }, nodeSyncConfig('SyncFromCloud', clusters))).toEqual(actions);
  });
});

describe('nodeSyncConfig', () => {
  it.each<[string, unknown, string[], string]>([
    ['an unknown mode', 'Bogus', [V4], 'INVALID_MODE'],
    ['a mode in the wrong case', 'syncfromcluster', [V4], 'INVALID_MODE'],
    ['no sets', 'SyncFromCluster', [], 'INVALID_CONFIG'],
    ['two sets of one family', 'SyncFromCluster', [V4, '10.2.0.0/16'], 'INVALID_CONFIG'],
    ['an unparseable cluster CIDR', 'SyncFromCluster', ['10.1.0.0'], 'INVALID_CONFIG'],
  ])('refuses %s', (_desc, mode, clusters, code) => {
    expect(() => nodeSyncConfig(mode, clusters)).toThrow(NodeSyncError);
    expect(() => nodeSyncConfig(mode, clusters)).toThrow(expect.objectContaining({ code }));
  });

  it('gives the family of each set, in order', () => {
    expect(nodeSyncConfig('SyncFromCloud', [V6, V4])).toEqual({ mode: 'SyncFromCloud', families: [6, 4] });
  });

  it('decides without changing a frozen input', () => {
    const input: NodeSyncInput = deepFreeze({ kind: 'update', node: both, aliases: [] });
    expect(decideNodeSync(input, nodeSyncConfig('SyncFromCluster', [V4, V6]))).toEqual([
      { kind: 'occupy', set: 0, cidr: '10.1.1.0/24' }, { kind: 'occupy', set: 1, cidr: '2001:db8:0:7::/64' },
      { kind: 'addAlias', cidrs: [{ cidr: '10.1.1.0/24' }, { cidr: '2001:db8:0:7::/64' }] }, NU,
    ]);
  });
});
