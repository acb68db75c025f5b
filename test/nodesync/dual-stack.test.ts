import { describe, expect, it } from 'vitest';
import { CidrSetError, createCidrSet } from '../../lib/ipam/index.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { NodeSyncError, type NodeSyncOp, type SyncMode, syncNodeDualStack } from '../../lib/nodesync/index.ts';
import { dualStackFakes, errorOf, node, recordSet } from './fakes.ts';

const V4 = '10.1.0.0/16';
const V6 = '2001:db8::/48';

async function sets(order: 'v4v6' | 'v6v4' = 'v4v6', v6Cluster = V6) {
  const v4 = await createCidrSet({ clusterCidr: V4, nodeMaskSize: 24 });
  const v6 = await createCidrSet({ clusterCidr: v6Cluster, nodeMaskSize: 64 });
  return { v4, v6, list: order === 'v4v6' ? [v4, v6] : [v6, v4] };
}

interface Row {
  mode: SyncMode;
  node: Node;
  alias?: string[];
  order?: 'v4v6' | 'v6v4';
  calls: string[];
  error: string | null;
  leases4: string[];
  leases6: string[];
}

const without = node('node1');
const v4Only = node('node1', { podCIDR: '10.1.1.0/24', podCIDRs: ['10.1.1.0/24'] });
const both = node('node1', { podCIDR: '10.1.1.0/24', podCIDRs: ['10.1.1.0/24', '2001:db8:0:7::/64'] });
const SET_NU = 'setNetworkUnavailable node1 false';

describe('syncNodeDualStack update', () => {
  it.each<[string, Row]>([
    ['both families allocated', {
      mode: 'SyncFromCluster', node: without,
      calls: ['alias node1', `allocateNext ${V4} node1`, `allocateNext ${V6} node1`, 'addAlias node1 10.1.0.0/24,2001:db8::/64',
        'updatePodCidr node1 10.1.0.0/24,2001:db8::/64', SET_NU],
      error: null, leases4: ['10.1.0.0/24'], leases6: ['2001:db8::/64'],
    }],
    ['podCIDRs follow the order of the sets', {
      mode: 'SyncFromCluster', node: without, order: 'v6v4',
      calls: ['alias node1', `allocateNext ${V6} node1`, `allocateNext ${V4} node1`, 'addAlias node1 2001:db8::/64,10.1.0.0/24',
        'updatePodCidr node1 2001:db8::/64,10.1.0.0/24', SET_NU],
      error: null, leases4: ['10.1.0.0/24'], leases6: ['2001:db8::/64'],
    }],
    ['IPv4 present on node and cloud is adopted, IPv6 allocated', {
      mode: 'SyncFromCluster', node: v4Only, alias: ['10.1.1.0/24'],
      calls: ['alias node1', `allocateNext ${V6} node1`, 'addAlias node1 2001:db8::/64', 'updatePodCidr node1 10.1.1.0/24,2001:db8::/64', SET_NU],
      error: null, leases4: [], leases6: ['2001:db8::/64'],
    }],
    ['IPv4 on the node only is occupied and pushed to the cloud with the new IPv6', {
      mode: 'SyncFromCluster', node: v4Only,
      calls: ['alias node1', `occupy ${V4} 10.1.1.0/24 node1`, `allocateNext ${V6} node1`, 'addAlias node1 10.1.1.0/24,2001:db8::/64',
        'updatePodCidr node1 10.1.1.0/24,2001:db8::/64', SET_NU],
      error: null, leases4: ['10.1.1.0/24'], leases6: ['2001:db8::/64'],
    }],
    ['both on the node, none in the cloud', {
      mode: 'SyncFromCluster', node: both,
      calls: ['alias node1', `occupy ${V4} 10.1.1.0/24 node1`, `occupy ${V6} 2001:db8:0:7::/64 node1`,
        'addAlias node1 10.1.1.0/24,2001:db8:0:7::/64', SET_NU],
      error: null, leases4: ['10.1.1.0/24'], leases6: ['2001:db8:0:7::/64'],
    }],
    ['both in the cloud (any order, any spelling), none on the node', {
      mode: 'SyncFromCloud', node: without, alias: ['2001:DB8:0:7:0::/64', '10.1.1.0/24'],
      calls: ['alias node1', `occupy ${V4} 10.1.1.0/24 node1`, `occupy ${V6} 2001:db8:0:7::/64 node1`,
        'updatePodCidr node1 10.1.1.0/24,2001:db8:0:7::/64', SET_NU],
      error: null, leases4: ['10.1.1.0/24'], leases6: ['2001:db8:0:7::/64'],
    }],
    ['IPv4 on node and cloud, IPv6 only in the cloud: adopted from the cloud', {
      mode: 'SyncFromCloud', node: v4Only, alias: ['10.1.1.0/24', '2001:db8:0:9::/64'],
      calls: ['alias node1', `occupy ${V6} 2001:db8:0:9::/64 node1`, 'updatePodCidr node1 10.1.1.0/24,2001:db8:0:9::/64', SET_NU],
      error: null, leases4: [], leases6: ['2001:db8:0:9::/64'],
    }],
    ['both agree: nothing to do', {
      mode: 'SyncFromCloud', node: both, alias: ['10.1.1.0/24', '2001:db8:0:7::/64'],
      calls: ['alias node1'], error: null, leases4: [], leases6: [],
    }],
    ['IPv6 mismatch warns and writes nothing', {
      mode: 'SyncFromCluster', node: both, alias: ['10.1.1.0/24', '2001:db8:0:8::/64'],
      calls: ['alias node1', 'warn node1 CloudCIDRAllocatorMismatch'], error: null, leases4: [], leases6: [],
    }],
    ['SyncFromCloud cannot allocate the family the cloud lacks', {
      mode: 'SyncFromCloud', node: without, alias: ['2001:db8:0:9::/64'],
      calls: ['alias node1', 'warn node1 CloudCIDRAllocatorInvalidMode'], error: 'INVALID_MODE', leases4: [], leases6: [],
    }],
    ['SyncFromCluster cannot take a family from the cloud', {
      mode: 'SyncFromCluster', node: without, alias: ['2001:db8:0:9::/64'],
      calls: ['alias node1', 'warn node1 CloudCIDRAllocatorInvalidMode'], error: 'INVALID_MODE', leases4: [], leases6: [],
    }],
    ['an unparseable podCIDRs entry', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDRs: ['10.1.1.0/24', 'nope'] }),
      calls: ['alias node1'], error: 'INVALID_CIDR', leases4: [], leases6: [],
    }],
    ['an unparseable podCIDRs entry where the cloud has that family is a mismatch, as upstream validateRange', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDRs: ['10.1.1.0/24', 'nope'] }), alias: ['10.1.1.0/24', '2001:db8:0:7::/64'],
      calls: ['alias node1', 'warn node1 CloudCIDRAllocatorMismatch'], error: null, leases4: [], leases6: [],
    }],
    ['a node podCIDR outside its family set', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDRs: ['192.168.0.0/24'] }),
      calls: ['alias node1', `occupy ${V4} 192.168.0.0/24 node1`], error: 'OUT_OF_RANGE', leases4: [], leases6: [],
    }],
  ])('%s', async (_desc, row) => {
    const { v4, v6, list } = await sets(row.order);
    const fakes = dualStackFakes({ alias: row.alias ?? [] });
    const input = structuredClone(row.node);
    const error = await errorOf(syncNodeDualStack({ kind: 'update', nodeName: 'node1', node: row.node }, {
      mode: row.mode, cidrSets: list.map((s) => recordSet(s, fakes.calls)), cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(fakes.calls).toEqual(row.calls);
    if (row.error === null) expect(error).toBeNull();
    else expect((error as { code?: unknown }).code).toBe(row.error);
    expect((await v4.leases()).map((l) => l.cidr)).toEqual(row.leases4);
    expect((await v6.leases()).map((l) => l.cidr)).toEqual(row.leases6);
    expect(row.node).toEqual(input);
  });

  it('fetches the node when not given, and a resync converges', async () => {
    const { list } = await sets();
    const fakes = dualStackFakes({ stored: without });
    const deps = { mode: 'SyncFromCluster' as const, cidrSets: list, cloud: fakes.cloud, kube: fakes.kube };
    await syncNodeDualStack({ kind: 'update', nodeName: 'node1' }, deps);
    expect(fakes.state.node?.spec?.podCIDRs).toEqual(['10.1.0.0/24', '2001:db8::/64']);
    const before = fakes.calls.length;
    await syncNodeDualStack({ kind: 'update', nodeName: 'node1', node: null }, deps);
    expect(fakes.calls.slice(before)).toEqual(['getNode node1', 'alias node1']);
  });

  it('releases both new blocks when addAlias fails', async () => {
    const { v4, v6, list } = await sets();
    const boom = new Error('prefix quota');
    const fakes = dualStackFakes({ addAliasErr: boom });
    const error = await errorOf(syncNodeDualStack({ kind: 'update', nodeName: 'node1', node: without }, {
      mode: 'SyncFromCluster', cidrSets: list.map((s) => recordSet(s, fakes.calls)), cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBe(boom);
    expect(fakes.calls.slice(-3)).toEqual(['addAlias node1 10.1.0.0/24,2001:db8::/64', `release ${V4} 10.1.0.0/24 node1`, `release ${V6} 2001:db8::/64 node1`]);
    expect([(await v4.usage()).used, (await v6.usage()).used]).toEqual([0, 0]);
  });

  it('gives the IPv4 block back when the IPv6 set is full', async () => {
    const { v4, list } = await sets('v4v6', '2001:db8::/64');
    await list[1]?.allocateNext('other');
    const fakes = dualStackFakes();
    const error = await errorOf(syncNodeDualStack({ kind: 'update', nodeName: 'node1', node: without }, {
      mode: 'SyncFromCluster', cidrSets: list.map((s) => recordSet(s, fakes.calls)), cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBeInstanceOf(CidrSetError);
    expect((error as CidrSetError).code).toBe('FULL');
    expect(fakes.calls).toEqual(['alias node1', `allocateNext ${V4} node1`, 'allocateNext 2001:db8::/64 node1', `release ${V4} 10.1.0.0/24 node1`]);
    expect(await v4.usage()).toEqual({ used: 0, total: 256 });
  });

  it.each([
    ['no sets', () => []],
    ['two IPv4 sets', async () => [await createCidrSet({ clusterCidr: V4, nodeMaskSize: 24 }), await createCidrSet({ clusterCidr: '10.2.0.0/16', nodeMaskSize: 24 })]],
  ])('rejects %s with INVALID_CONFIG before any call', async (_desc, make) => {
    const fakes = dualStackFakes();
    const error = await errorOf(syncNodeDualStack({ kind: 'update', nodeName: 'node1', node: without }, {
      mode: 'SyncFromCluster', cidrSets: await make(), cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBeInstanceOf(NodeSyncError);
    expect((error as NodeSyncError).code).toBe('INVALID_CONFIG');
    expect(fakes.calls).toEqual([]);
  });

  it('rejects an unknown mode', async () => {
    const { list } = await sets();
    const fakes = dualStackFakes();
    const error = await errorOf(syncNodeDualStack({ kind: 'delete', node: both }, {
      mode: 'Both' as SyncMode, cidrSets: list, cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect((error as NodeSyncError).code).toBe('INVALID_MODE');
    expect(fakes.calls).toEqual([]);
  });
});

describe('syncNodeDualStack with one set is upstream\'s single-CIDR sync', () => {
  it('releases a podCIDR of a family the cluster has no set for from the set at its position', async () => {
    const v4 = await createCidrSet({ clusterCidr: V4, nodeMaskSize: 24 });
    const fakes = dualStackFakes();
    await syncNodeDualStack({ kind: 'delete', node: node('node1', { podCIDR: '2001:db8::/64' }) }, {
      mode: 'SyncFromCluster', cidrSets: [recordSet(v4, fakes.calls)], cloud: fakes.cloud, kube: fakes.kube,
    });
    expect(fakes.calls).toEqual([`release ${V4} 2001:db8::/64 node1`]);
  });

  it('warns a mismatch for an unparseable podCIDR the cloud has an alias for', async () => {
    const v4 = await createCidrSet({ clusterCidr: V4, nodeMaskSize: 24 });
    const fakes = dualStackFakes({ alias: ['10.1.1.0/24'] });
    const error = await errorOf(syncNodeDualStack({ kind: 'update', nodeName: 'node1', node: node('node1', { podCIDR: 'invalid' }) }, {
      mode: 'SyncFromCluster', cidrSets: [recordSet(v4, fakes.calls)], cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBeNull();
    expect(fakes.calls).toEqual(['alias node1', 'warn node1 CloudCIDRAllocatorMismatch']);
    expect(fakes.messages).toEqual(['Node.Spec.PodCIDR != cloud alias (invalid != 10.1.1.0/24)']);
  });
});

describe('syncNodeDualStack delete', () => {
  it.each<[string, Node, string[], string[], string[]]>([
    ['releases both families', both, [`release ${V4} 10.1.1.0/24 node1`, `release ${V6} 2001:db8:0:7::/64 node1`], [], ['2001:db8:0:8::/64']],
    ['nothing without podCIDRs', without, [], ['10.1.1.0/24'], ['2001:db8:0:7::/64', '2001:db8:0:8::/64']],
    ['single podCIDR field only', node('node1', { podCIDR: '10.1.1.0/24' }), [`release ${V4} 10.1.1.0/24 node1`], [], ['2001:db8:0:7::/64', '2001:db8:0:8::/64']],
    ['an invalid entry warns, the valid one is released', node('node1', { podCIDRs: ['bad', '2001:db8:0:7::/64'] }),
      ['warn node1 CloudCIDRAllocatorInvalidPodCIDR', `release ${V6} 2001:db8:0:7::/64 node1`], ['10.1.1.0/24'], ['2001:db8:0:8::/64']],
    ['a stale delete leaves the other node\'s block', node('node1', { podCIDRs: ['10.1.1.0/24', '2001:db8:0:8::/64'] }),
      [`release ${V4} 10.1.1.0/24 node1`, `release ${V6} 2001:db8:0:8::/64 node1`], [], ['2001:db8:0:7::/64', '2001:db8:0:8::/64']],
  ])('%s', async (_desc, victim, calls, leases4, leases6) => {
    const { v4, v6, list } = await sets();
    await v4.occupy('10.1.1.0/24', 'node1');
    await v6.occupy('2001:db8:0:7::/64', 'node1');
    await v6.occupy('2001:db8:0:8::/64', 'node2');
    const fakes = dualStackFakes();
    const op: NodeSyncOp = { kind: 'delete', node: victim };
    await syncNodeDualStack(op, { mode: 'SyncFromCloud', cidrSets: list.map((s) => recordSet(s, fakes.calls)), cloud: fakes.cloud, kube: fakes.kube });
    expect(fakes.calls).toEqual(calls);
    expect((await v4.leases()).map((l) => l.cidr)).toEqual(leases4);
    expect((await v6.leases()).map((l) => l.cidr)).toEqual(leases6);
  });
});
