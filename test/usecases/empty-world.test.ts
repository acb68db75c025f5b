/**
 * Empty means stop: the rule (lib/usecases/absence.ts refuseWorld) table-driven, and reconcile
 * applying it: a run over an untagged table set, an empty node listing while leases exist or a
 * failed lease listing fails retryably, writes no condition and no lease, logs one line and counts
 * the `ReconcileRefused` metric.
 */
import { describe, expect, it } from 'vitest';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { refuseWorld } from '../../lib/usecases/absence.ts';
import type { InputRead, WorldReads } from '../../lib/usecases/absence.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';
import { withRoutesPlane } from '../support/plane.ts';

const n = (count: number): InputRead => ({ ok: true, count });
const failed: InputRead = { ok: false, error: new Error('connection reset') };
const TAG = 'kubernetes.io/cluster/alpha';

describe('refuseWorld', () => {
  it.each<[string, Omit<WorldReads, 'clusterTag'>, RegExp | null]>([
    ['a fresh cluster (tables, no nodes, no leases)', { tablesRequired: true, tables: n(1), nodes: n(0), leases: n(0) }, null],
    ['a running cluster', { tablesRequired: true, tables: n(2), nodes: n(14), leases: n(14) }, null],
    ['leases empty while nodes exist (a restored table: reconcile occupies them)', { tablesRequired: true, tables: n(1), nodes: n(14), leases: n(0) }, null],
    ['no tagged table in routes mode', { tablesRequired: true, tables: n(0), nodes: n(14), leases: n(14) }, /no route table carries the tag kubernetes\.io\/cluster\/alpha/],
    ['no tagged table, even on a fresh cluster', { tablesRequired: true, tables: n(0), nodes: n(0), leases: n(0) }, /no route table carries the tag/],
    ['prefixes mode reads no tables', { tablesRequired: false, tables: null, nodes: n(3), leases: n(3) }, null],
    ['the node listing empty while leases exist', { tablesRequired: true, tables: n(1), nodes: n(0), leases: n(14) }, /node listing is empty while 14 CIDR leases exist/],
    ['the node listing empty while leases exist (prefixes)', { tablesRequired: false, tables: null, nodes: n(0), leases: n(2) }, /node listing is empty while 2 CIDR leases exist/],
    ['the route tables unreadable', { tablesRequired: true, tables: failed, nodes: n(1), leases: n(1) }, /could not read the route tables \(connection reset\)/],
    ['the node listing failed', { tablesRequired: true, tables: n(1), nodes: failed, leases: n(1) }, /could not read the nodes/],
    ['the lease listing failed', { tablesRequired: true, tables: n(1), nodes: n(1), leases: failed }, /could not read the CIDR leases/],
    ['no managed node\'s pod CIDR in the cluster CIDRs (a CLUSTER_CIDRS typo)', { tablesRequired: true, tables: n(1), nodes: n(6), leases: n(0), strayPodCidrs: { carriers: 6, node: 'n-0', cidr: '100.64.0.0/24' }, clusterCidrs: ['100.65.0.0/16'] }, /no managed node's pod CIDR lies in CLUSTER_CIDRS 100\.65\.0\.0\/16 \(6 nodes .* e\.g\. n-0 100\.64\.0\.0\/24\)/],
    ['the node listing empty, every lease owner read 404 (a scale to zero that lost its node-left)', { tablesRequired: true, tables: n(1), nodes: n(0), leases: n(3), leaseOwners: { present: 0, unreadable: 0 } }, null],
    ['the node listing empty, a lease owner read present', { tablesRequired: true, tables: n(1), nodes: n(0), leases: n(3), leaseOwners: { present: 1, unreadable: 0 } }, /node listing is empty while 3 CIDR leases exist and a keyed read found 1 of their owners/],
    ['the node listing empty, a lease owner unreadable', { tablesRequired: true, tables: n(1), nodes: n(0), leases: n(3), leaseOwners: { present: 0, unreadable: 2 } }, /node listing is empty while 3 CIDR leases exist and 2 of their owners could not be read/],
  ])('%s', (_name, reads, expected) => {
    const refusal = refuseWorld({ ...reads, clusterTag: TAG });
    if (expected === null) expect(refusal).toBeNull();
    else expect(refusal).toMatch(expected);
  });
});

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

describe('reconcile: empty means stop', () => {
  const refusedMetrics = (lines: Array<Record<string, unknown>>) => lines.filter((line) => line.ReconcileRefused === 1);

  it('with no table carrying the cluster tag: fails retryably, no condition, no lease, one line and the metric', async () => {
    world.ec2.state.addRouteTable({ tags: { 'kubernetes.io/cluster/someone-else': 'owned' } });
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/24'], networkUnavailable: 'False' });
    await world.addNode('node-b');
    const w = await testWiring(world, local);
    world.resetStats();
    await expect(reconcile(w.reconcileDeps())).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/no route table carries the tag kubernetes\.io\/cluster\/alpha/) });
    expect(world.kubeWrites()).toBe(0);
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(w.dynamo.writes()).toBe(0);
    expect(await w.wiring.cidrSets[0]?.leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
    expect(w.log.lines.filter((line) => line.event === 'reconcile.refused')).toHaveLength(1);
    expect(refusedMetrics(w.log.lines)).toHaveLength(1);
  });

  it('with a CLUSTER_CIDRS typo (every node\'s pod CIDR outside): fails retryably, marks no node, one line and the metric', async () => {
    const table = world.addClusterTable();
    for (let i = 0; i < 6; i++) {
      const node = await world.addNode(`n-${i}`, { podCidrs: [`100.64.${i}.0/24`], networkUnavailable: 'False' });
      await world.routeTables.createRoute({ routeTableId: table, destinationCidr: `100.64.${i}.0/24`, networkInterfaceId: node.eniId });
    }
    const w = await testWiring(world, local, { CLUSTER_CIDRS: '100.65.0.0/16' });
    world.resetStats();
    await expect(reconcile(w.reconcileDeps())).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/no managed node's pod CIDR lies in CLUSTER_CIDRS 100\.65\.0\.0\/16/) });
    expect(world.kubeWrites()).toBe(0);
    expect(world.ec2Writes()).toBe(0);
    expect(Array.from({ length: 6 }, (_, i) => world.networkUnavailable(`n-${i}`))).toEqual(Array(6).fill('False'));
    expect(w.dynamo.writes()).toBe(0);
    expect(w.queue.sends).toEqual([]);
    expect(w.log.lines.filter((line) => line.event === 'reconcile.refused')).toHaveLength(1);
    expect(refusedMetrics(w.log.lines)).toHaveLength(1);
  });

  it('with the lease listing failing: fails retryably with the cause, and changes nothing', async () => {
    world.addClusterTable();
    await world.addNode('node-a');
    const w = await testWiring(world, local);
    const set = w.wiring.cidrSets[0];
    if (!set) throw new Error('no CIDR set');
    const broken: CidrSet = Object.assign(Object.create(set) as CidrSet, { leases: () => Promise.reject(new Error('DynamoDB Query failed')) });
    world.resetStats();
    await expect(reconcile(withRoutesPlane({ ...w.reconcileDeps(), cidrSets: [broken] }))).rejects.toMatchObject({ retryable: true, cause: expect.objectContaining({ message: 'DynamoDB Query failed' }) });
    expect(world.kubeWrites()).toBe(0);
    expect(world.podCidrs('node-a')).toEqual([]);
    expect(w.dynamo.writes()).toBe(0);
    expect(refusedMetrics(w.log.lines)).toHaveLength(1);
  });
});
