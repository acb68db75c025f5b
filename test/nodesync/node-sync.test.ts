/**
 * syncNode against upstream's sync_test.go (TestNodeSyncUpdate, TestNodeSyncResync, TestNodeSyncDelete)
 * with the exact call list asserted, plus our cases. The CIDR set is the real one over memory.
 */
import { describe, expect, it } from 'vitest';
import { PodrouteError } from '../../lib/errors.ts';
import { CidrSetError, createCidrSet } from '../../lib/ipam/index.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { NodeSyncError, type NodeSyncOp, type SyncMode, syncNode } from '../../lib/nodesync/index.ts';
import { deepFreeze, errorOf, node, recordSet, singleStackFakes } from './fakes.ts';

const CLUSTER = '10.1.0.0/16';
const nodeWithout = node('node1');
const nodeWith = node('node1', { podCIDR: '10.1.1.0/24' });

const MISMATCH = 'CloudCIDRAllocatorMismatch';
const INVALID_MODE = 'CloudCIDRAllocatorInvalidMode';
const INVALID_POD_CIDR = 'CloudCIDRAllocatorInvalidPodCIDR';

interface Row {
  mode: SyncMode;
  node: Node | null | undefined;
  stored?: Node;
  alias?: string | null;
  cluster?: string;
  mask?: number;
  calls: string[];
  /** Expected error code (NodeSyncError or CidrSetError), or null for success. */
  error: string | null;
  leases: Array<{ cidr: string; owner: string | null }>;
  /** Blocks used, when `leases` would be too long to list. */
  used?: number;
}

async function run(row: Row, op?: NodeSyncOp) {
  const cluster = row.cluster ?? CLUSTER;
  const fakes = singleStackFakes({ alias: row.alias ?? null, stored: row.stored });
  const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: row.mask ?? 24 });
  const error = await errorOf(
    syncNode(op ?? { kind: 'update', nodeName: 'node1', node: row.node }, {
      mode: row.mode,
      cidrSet: recordSet(set, fakes.calls),
      cloud: fakes.cloud,
      kube: fakes.kube,
    }),
  );
  return { ...fakes, set, error };
}

function expectError(error: unknown, code: string | null): void {
  if (code === null) {
    expect(error).toBeNull();
    return;
  }
  expect(error).toBeInstanceOf(Error);
  expect((error as { code?: unknown }).code).toBe(code);
}

describe('syncNode update (upstream TestNodeSyncUpdate)', () => {
  it.each<[string, Row]>([
    ['validate range ==', {
      mode: 'SyncFromCloud', node: nodeWith, alias: '10.1.1.0/24',
      calls: ['alias node1'], error: null, leases: [],
    }],
    ['validate range !=', {
      mode: 'SyncFromCloud', node: nodeWith, alias: '192.168.0.0/24',
      calls: ['alias node1', `warn node1 ${MISMATCH}`], error: null, leases: [],
    }],
    ['update alias from node, wrong mode', {
      mode: 'SyncFromCloud', node: nodeWith,
      calls: ['alias node1', `warn node1 ${INVALID_MODE}`], error: 'INVALID_MODE', leases: [],
    }],
    ['update alias from node', {
      mode: 'SyncFromCluster', node: nodeWith,
      calls: ['alias node1', `occupy ${CLUSTER} 10.1.1.0/24 node1`, 'addAlias node1 10.1.1.0/24', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '10.1.1.0/24', owner: 'node1' }],
    }],
    ['update node from alias (host bits and a whole-cluster range, as upstream)', {
      mode: 'SyncFromCloud', node: nodeWithout, alias: '10.1.2.3/16',
      calls: ['alias node1', `occupy ${CLUSTER} 10.1.0.0/16 node1`, 'updatePodCidr node1 10.1.0.0/16', 'setNetworkUnavailable node1 false'],
      error: null, leases: [], used: 256,
    }],
    ['update node from alias', {
      mode: 'SyncFromCloud', node: nodeWithout, alias: '10.1.7.0/24',
      calls: ['alias node1', `occupy ${CLUSTER} 10.1.7.0/24 node1`, 'updatePodCidr node1 10.1.7.0/24', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '10.1.7.0/24', owner: 'node1' }],
    }],
    ['update node from alias, wrong mode', {
      mode: 'SyncFromCluster', node: nodeWithout, alias: '10.1.2.3/16',
      calls: ['alias node1', `warn node1 ${INVALID_MODE}`], error: 'INVALID_MODE', leases: [],
    }],
    ['allocate range, wrong mode', {
      mode: 'SyncFromCloud', node: nodeWithout,
      calls: ['alias node1', `warn node1 ${INVALID_MODE}`], error: 'INVALID_MODE', leases: [],
    }],
    ['allocate range', {
      mode: 'SyncFromCluster', node: nodeWithout,
      calls: ['alias node1', `allocateNext ${CLUSTER} node1`, 'addAlias node1 10.1.0.0/24', 'updatePodCidr node1 10.1.0.0/24', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '10.1.0.0/24', owner: 'node1' }],
    }],
    ['update with node == null', {
      mode: 'SyncFromCluster', node: null, stored: nodeWith,
      calls: ['getNode node1', 'alias node1', `occupy ${CLUSTER} 10.1.1.0/24 node1`, 'addAlias node1 10.1.1.0/24', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '10.1.1.0/24', owner: 'node1' }],
    }],
    // ours: canonical comparison and errors where upstream returns them
    ['validate range with host bits in podCIDR', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDR: '10.1.1.77/24' }), alias: '10.1.1.0/24',
      calls: ['alias node1'], error: null, leases: [],
    }],
    ['validate range with an unparseable podCIDR is a mismatch', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDR: 'invalid' }), alias: '10.1.1.0/24',
      calls: ['alias node1', `warn node1 ${MISMATCH}`], error: null, leases: [],
    }],
    ['update alias from an unparseable podCIDR', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDR: 'invalid' }),
      calls: ['alias node1'], error: 'INVALID_CIDR', leases: [],
    }],
    ['update alias from a podCIDR outside the cluster', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDR: '192.168.0.0/24' }),
      calls: ['alias node1', `occupy ${CLUSTER} 192.168.0.0/24 node1`], error: 'OUT_OF_RANGE', leases: [],
    }],
    ['update node from an alias outside the cluster', {
      mode: 'SyncFromCloud', node: nodeWithout, alias: '10.2.0.0/24',
      calls: ['alias node1', `occupy ${CLUSTER} 10.2.0.0/24 node1`], error: 'OUT_OF_RANGE', leases: [],
    }],
    ['an unparseable alias from the cloud', {
      mode: 'SyncFromCloud', node: nodeWithout, alias: '10.1.0.0',
      calls: ['alias node1'], error: 'INVALID_CIDR', leases: [],
    }],
    ['allocate range in a one-block set', {
      mode: 'SyncFromCluster', node: nodeWithout, cluster: '10.1.0.0/24', mask: 24,
      calls: ['alias node1', 'allocateNext 10.1.0.0/24 node1', 'addAlias node1 10.1.0.0/24', 'updatePodCidr node1 10.1.0.0/24', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '10.1.0.0/24', owner: 'node1' }],
    }],
    // ours: IPv6
    ['IPv6 allocate range', {
      mode: 'SyncFromCluster', node: nodeWithout, cluster: '2001:db8::/48', mask: 64,
      calls: ['alias node1', 'allocateNext 2001:db8::/48 node1', 'addAlias node1 2001:db8::/64', 'updatePodCidr node1 2001:db8::/64', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '2001:db8::/64', owner: 'node1' }],
    }],
    ['IPv6 validate range, upper case and zeros written out', {
      mode: 'SyncFromCloud', node: node('node1', { podCIDR: '2001:DB8:0:5:0:0:0:0/64' }), alias: '2001:db8:0:5::/64', cluster: '2001:db8::/48', mask: 64,
      calls: ['alias node1'], error: null, leases: [],
    }],
    ['IPv6 validate range !=', {
      mode: 'SyncFromCloud', node: node('node1', { podCIDR: '2001:db8:0:5::/64' }), alias: '2001:db8:0:6::/64', cluster: '2001:db8::/48', mask: 64,
      calls: ['alias node1', `warn node1 ${MISMATCH}`], error: null, leases: [],
    }],
    ['IPv6 update alias from node, canonical text to the cloud', {
      mode: 'SyncFromCluster', node: node('node1', { podCIDR: '2001:0DB8:0000:0005::1/64' }), cluster: '2001:db8::/48', mask: 64,
      calls: ['alias node1', 'occupy 2001:db8::/48 2001:db8:0:5::/64 node1', 'addAlias node1 2001:db8:0:5::/64', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '2001:db8:0:5::/64', owner: 'node1' }],
    }],
    ['IPv6 update node from alias', {
      mode: 'SyncFromCloud', node: nodeWithout, alias: '2001:db8:0:9::/64', cluster: '2001:db8::/48', mask: 64,
      calls: ['alias node1', 'occupy 2001:db8::/48 2001:db8:0:9::/64 node1', 'updatePodCidr node1 2001:db8:0:9::/64', 'setNetworkUnavailable node1 false'],
      error: null, leases: [{ cidr: '2001:db8:0:9::/64', owner: 'node1' }],
    }],
  ])('%s', async (_desc, row) => {
    const input = row.node ? structuredClone(row.node) : row.node;
    const { calls, error, set } = await run(row);
    expect(calls).toEqual(row.calls);
    expectError(error, row.error);
    const leases = await set.leases();
    if (row.used === undefined) expect(leases).toEqual(row.leases);
    else expect(leases.filter((l) => l.owner === 'node1')).toHaveLength(row.used);
    if (row.node) expect(row.node).toEqual(input);
  });

  it('warning messages say what upstream says', async () => {
    const mismatch = await run({ mode: 'SyncFromCloud', node: nodeWith, alias: '192.168.0.0/24', calls: [], error: null, leases: [] });
    expect(mismatch.messages).toEqual(['Node.Spec.PodCIDR != cloud alias (10.1.1.0/24 != 192.168.0.0/24)']);
    const modes = await Promise.all([
      run({ mode: 'SyncFromCloud', node: nodeWithout, calls: [], error: null, leases: [] }),
      run({ mode: 'SyncFromCluster', node: nodeWithout, alias: '10.1.0.0/24', calls: [], error: null, leases: [] }),
      run({ mode: 'SyncFromCloud', node: nodeWith, calls: [], error: null, leases: [] }),
    ]);
    expect(modes.map((m) => m.messages[0])).toEqual([
      'Cannot allocate CIDRs in mode "SyncFromCloud"',
      'Cannot sync from cloud in mode "SyncFromCluster"',
      'Cannot sync to cloud in mode "SyncFromCloud"',
    ]);
    for (const m of modes) {
      expect(m.error).toBeInstanceOf(NodeSyncError);
      expect(m.error).toBeInstanceOf(PodrouteError);
      expect((m.error as NodeSyncError).retryable).toBe(false);
    }
  });

  it('rejects with the CidrSetError itself when the set is full', async () => {
    const fakes = singleStackFakes();
    const set = await createCidrSet({ clusterCidr: '10.1.0.0/24', nodeMaskSize: 24 });
    await set.allocateNext('other');
    const error = await errorOf(syncNode({ kind: 'update', nodeName: 'node1', node: nodeWithout }, {
      mode: 'SyncFromCluster', cidrSet: recordSet(set, fakes.calls), cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBeInstanceOf(CidrSetError);
    expect((error as CidrSetError).code).toBe('FULL');
    expect(fakes.calls).toEqual(['alias node1', 'allocateNext 10.1.0.0/24 node1']);
  });
});

describe('syncNode update: port errors propagate unchanged', () => {
  const boom = new Error('boom');
  it.each<[string, Parameters<typeof singleStackFakes>[0], NodeSyncOp, SyncMode, string[]]>([
    ['getNode', { getNodeErr: boom }, { kind: 'update', nodeName: 'node1' }, 'SyncFromCluster', ['getNode node1']],
    ['alias', { aliasErr: boom }, { kind: 'update', nodeName: 'node1', node: nodeWith }, 'SyncFromCluster', ['alias node1']],
    ['addAlias (from node)', { addAliasErr: boom }, { kind: 'update', nodeName: 'node1', node: nodeWith }, 'SyncFromCluster',
      ['alias node1', `occupy ${CLUSTER} 10.1.1.0/24 node1`, 'addAlias node1 10.1.1.0/24']],
    ['updatePodCidr (from alias)', { alias: '10.1.3.0/24', updatePodCidrErr: boom }, { kind: 'update', nodeName: 'node1', node: nodeWithout }, 'SyncFromCloud',
      ['alias node1', `occupy ${CLUSTER} 10.1.3.0/24 node1`, 'updatePodCidr node1 10.1.3.0/24']],
    ['setNetworkUnavailable', { unavailableErr: boom }, { kind: 'update', nodeName: 'node1', node: nodeWithout }, 'SyncFromCluster',
      ['alias node1', `allocateNext ${CLUSTER} node1`, 'addAlias node1 10.1.0.0/24', 'updatePodCidr node1 10.1.0.0/24', 'setNetworkUnavailable node1 false']],
  ])('%s', async (_port, opts, op, mode, calls) => {
    const fakes = singleStackFakes(opts);
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    const error = await errorOf(syncNode(op, { mode, cidrSet: recordSet(set, fakes.calls), cloud: fakes.cloud, kube: fakes.kube }));
    expect(error).toBe(boom);
    expect(fakes.calls).toEqual(calls);
  });
});

describe('syncNode: ours', () => {
  it('does not leak the block when addAlias fails after allocateNext', async () => {
    const boom = new Error('prefix quota');
    const fakes = singleStackFakes({ addAliasErr: boom });
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    await set.occupy('10.1.5.0/24', 'node2');
    const error = await errorOf(syncNode({ kind: 'update', nodeName: 'node1', node: nodeWithout }, {
      mode: 'SyncFromCluster', cidrSet: recordSet(set, fakes.calls), cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBe(boom);
    expect(fakes.calls).toEqual([
      'alias node1', `allocateNext ${CLUSTER} node1`, 'addAlias node1 10.1.0.0/24', `release ${CLUSTER} 10.1.0.0/24 node1`,
    ]);
    expect(await set.usage()).toEqual({ used: 1, total: 256 });
    expect(await set.leases()).toEqual([{ cidr: '10.1.5.0/24', owner: 'node2' }]);
  });

  it('keeps the cloud error when giving the block back fails too', async () => {
    const boom = new Error('prefix quota');
    const fakes = singleStackFakes({ addAliasErr: boom });
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    const failingRelease = { ...recordSet(set, fakes.calls), release: async () => { throw new Error('store down'); } };
    const error = await errorOf(syncNode({ kind: 'update', nodeName: 'node1', node: nodeWithout }, {
      mode: 'SyncFromCluster', cidrSet: failingRelease, cloud: fakes.cloud, kube: fakes.kube,
    }));
    expect(error).toBe(boom);
  });

  it('a retry after a failed updatePodCidr gets the same block', async () => {
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    await set.occupy('10.1.0.0/24', 'node0');
    // the cloud has not shown the alias yet (eventual consistency), so the retry allocates again
    const first = singleStackFakes({ updatePodCidrErr: new Error('conflict'), aliasVisible: false, stored: nodeWithout });
    const deps = (f: typeof first) => ({ mode: 'SyncFromCluster' as const, cidrSet: recordSet(set, f.calls), cloud: f.cloud, kube: f.kube });
    expect(await errorOf(syncNode({ kind: 'update', nodeName: 'node1' }, deps(first)))).toEqual(new Error('conflict'));
    // another node allocates meanwhile: the cursor moved, the retry still gets node1's block
    expect(await set.allocateNext('node2')).toBe('10.1.2.0/24');
    const retry = singleStackFakes({ aliasVisible: false, stored: nodeWithout });
    await syncNode({ kind: 'update', nodeName: 'node1' }, deps(retry));
    expect(retry.calls).toEqual([
      'getNode node1', 'alias node1', `allocateNext ${CLUSTER} node1`, 'addAlias node1 10.1.1.0/24',
      'updatePodCidr node1 10.1.1.0/24', 'setNetworkUnavailable node1 false',
    ]);
    expect(first.calls).toContain('updatePodCidr node1 10.1.1.0/24');
    expect(await set.usage()).toEqual({ used: 3, total: 256 });
  });

  it('converges: a resync after allocating only reads (upstream TestNodeSyncResync)', async () => {
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    const fakes = singleStackFakes({ stored: nodeWithout });
    const deps = { mode: 'SyncFromCluster' as const, cidrSet: recordSet(set, fakes.calls), cloud: fakes.cloud, kube: fakes.kube };
    await syncNode({ kind: 'update', nodeName: 'node1' }, deps);
    const afterFirst = fakes.calls.length;
    await syncNode({ kind: 'update', nodeName: 'node1', node: null }, deps);
    expect(fakes.calls.slice(afterFirst)).toEqual(['getNode node1', 'alias node1']);
    expect(fakes.state.node?.spec?.podCIDR).toBe('10.1.0.0/24');
    expect(await set.leases()).toEqual([{ cidr: '10.1.0.0/24', owner: 'node1' }]);
  });

  it.each([['Bogus'], [''], [undefined], ['syncfromcluster']])('rejects the mode %j before any call', async (mode) => {
    const fakes = singleStackFakes({ stored: nodeWith });
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    for (const op of [{ kind: 'update', nodeName: 'node1' }, { kind: 'delete', node: nodeWith }] as const) {
      const error = await errorOf(syncNode(op, {
        mode: mode as SyncMode, cidrSet: recordSet(set, fakes.calls), cloud: fakes.cloud, kube: fakes.kube,
      }));
      expect(error).toBeInstanceOf(NodeSyncError);
      expect((error as NodeSyncError).code).toBe('INVALID_MODE');
    }
    expect(fakes.calls).toEqual([]);
  });

  it('never mutates the node objects it is given or fetches', async () => {
    const given = deepFreeze({ metadata: { name: 'node1', labels: { a: 'b' } }, spec: { providerID: 'aws:///z/i-0123456789abcdef0' }, status: { conditions: [] } });
    const snapshot = structuredClone(given);
    const fakes = singleStackFakes({ stored: given });
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    const deps = { mode: 'SyncFromCluster' as const, cidrSet: set, cloud: fakes.cloud, kube: fakes.kube };
    await syncNode({ kind: 'update', nodeName: 'node1', node: given }, deps);
    await syncNode({ kind: 'update', nodeName: 'node1' }, deps);
    await syncNode({ kind: 'delete', node: given }, deps);
    expect(given).toEqual(snapshot);
    expect(Object.isFrozen(given.spec)).toBe(true);
  });
});

describe('syncNode delete (upstream TestNodeSyncDelete)', () => {
  it.each<[string, Node, Array<[string, string]>, string[], Array<{ cidr: string; owner: string | null }>]>([
    ['delete', nodeWith, [['10.1.1.0/24', 'node1']], [`release ${CLUSTER} 10.1.1.0/24 node1`], []],
    ['delete without CIDR range', nodeWithout, [['10.1.1.0/24', 'node1']], [], [{ cidr: '10.1.1.0/24', owner: 'node1' }]],
    ['delete with invalid CIDR range', node('node1', { podCIDR: 'invalid' }), [], [`warn node1 ${INVALID_POD_CIDR}`], []],
    // ours
    ['delete with empty podCIDR', node('node1', { podCIDR: '' }), [], [], []],
    ['delete with host bits', node('node1', { podCIDR: '10.1.1.9/24' }), [['10.1.1.0/24', 'node1']], [`release ${CLUSTER} 10.1.1.0/24 node1`], []],
    ['stale delete leaves the block of the node that holds it now', nodeWith, [['10.1.1.0/24', 'node2']],
      [`release ${CLUSTER} 10.1.1.0/24 node1`], [{ cidr: '10.1.1.0/24', owner: 'node2' }]],
    ['delete of an ownerless (occupied at start-up) block', nodeWith, [['10.1.1.0/24', '']], [`release ${CLUSTER} 10.1.1.0/24 node1`], []],
    ['delete with a podCIDR outside the cluster', node('node1', { podCIDR: '192.168.1.0/24' }), [['10.1.1.0/24', 'node1']],
      [`release ${CLUSTER} 192.168.1.0/24 node1`], [{ cidr: '10.1.1.0/24', owner: 'node1' }]],
    ['delete with an IPv6 podCIDR from an IPv4 set', node('node1', { podCIDR: '2001:db8::/64' }), [], [`release ${CLUSTER} 2001:db8::/64 node1`], []],
  ])('%s', async (_desc, victim, held, calls, leases) => {
    const fakes = singleStackFakes();
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    for (const [cidr, owner] of held) await set.occupy(cidr, owner === '' ? undefined : owner);
    await syncNode({ kind: 'delete', node: victim }, { mode: 'SyncFromCluster', cidrSet: recordSet(set, fakes.calls), cloud: fakes.cloud, kube: fakes.kube });
    expect(fakes.calls).toEqual(calls);
    expect(await set.leases()).toEqual(leases);
  });

  it('says which podCIDR is invalid', async () => {
    const fakes = singleStackFakes();
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    await syncNode({ kind: 'delete', node: node('node1', { podCIDR: 'invalid' }) }, { mode: 'SyncFromCloud', cidrSet: set, cloud: fakes.cloud, kube: fakes.kube });
    expect(fakes.messages).toEqual(['Node "node1" has an invalid PodCIDR: "invalid"']);
  });

  it('rejects when the store fails to release, so the delete is retried', async () => {
    const fakes = singleStackFakes();
    const set = await createCidrSet({ clusterCidr: CLUSTER, nodeMaskSize: 24 });
    const down = new Error('store down');
    const failing = { ...recordSet(set, fakes.calls), release: async () => { throw down; } };
    expect(await errorOf(syncNode({ kind: 'delete', node: nodeWith }, { mode: 'SyncFromCluster', cidrSet: failing, cloud: fakes.cloud, kube: fakes.kube }))).toBe(down);
  });
});
