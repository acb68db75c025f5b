/**
 * The ownership decider (lib/routes/ownership.ts): which node a pod CIDR belongs to, from the
 * lease table when there is one, else by registration order; what is a conflict, and why.
 */
import { describe, expect, it } from 'vitest';
import { type LeaseTable, type OwnershipInput, decideOwnership } from '../../lib/routes/ownership.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { node } from './fixtures.ts';

const V4 = '10.120.0.0/16';
const SETS = [{ clusterCidr: V4, nodeMaskSize: 24 }];
const T1 = '2026-01-01T00:00:00Z';
const T2 = '2026-01-01T00:05:00Z';

const leaseTable = (leases: string[], migration: number[] = []): LeaseTable => ({
  leases: leases.map((text) => {
    const [cidr = '', owner = ''] = text.split('=');
    return { cidr, owner, since: 1 };
  }),
  sets: SETS,
  migrationMaskSizes: { 4: migration, 6: [] },
});

/** The decision as short strings: owners `cidr=node`, reserved, adoptable and conflicts `node cidr reason`. */
function decide(nodes: Node[], table?: LeaseTable) {
  const input: OwnershipInput = { nodes, clusterCidrs: [V4], ...(table ? { leaseTable: table } : {}) };
  const d = decideOwnership(input);
  return {
    owners: [...d.owners].map(([cidr, n]) => `${cidr}=${n}`).sort(),
    reserved: [...d.reserved].map(([cidr, n]) => `${cidr}=${n}`).sort(),
    adoptable: d.adoptable.map((a) => `${a.cidr}=${a.node}`),
    conflicts: d.conflicts.map((c) => `${c.node} ${c.cidr ?? '-'} ${c.reason}${c.other === undefined ? '' : ` (${c.other})`}`),
  };
}

const victim = (spec: { created?: string } = {}) => node('victim', { instance: 1, podCidrs: ['10.120.1.0/24'], created: T1, ...spec });

describe('decideOwnership with the lease table', () => {
  it.each<{ name: string; nodes: Node[]; leases: string[]; migration?: number[]; want: ReturnType<typeof decide> }>([
    {
      name: 'a leased pod CIDR is its node\'s',
      nodes: [victim()],
      leases: ['10.120.1.0/24=victim'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: [] },
    },
    {
      name: 'another node\'s exact pod CIDR: a conflict, whoever registered first or sorts first',
      nodes: [victim({ created: T2 }), node('attacker', { instance: 2, podCidrs: ['10.120.1.0/24'], created: T1 })],
      leases: ['10.120.1.0/24=victim'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['attacker 10.120.1.0/24 leased-to-another-node (victim)'] },
    },
    {
      name: 'a /25 and a /32 inside another node\'s block: conflicts, even with /25 as a migration mask',
      nodes: [victim(), node('a', { instance: 2, podCidrs: ['10.120.1.128/25'] }), node('b', { instance: 3, podCidrs: ['10.120.1.7/32'] })],
      leases: ['10.120.1.0/24=victim'],
      migration: [25, 32],
      want: {
        owners: ['10.120.1.0/24=victim'],
        reserved: [],
        adoptable: [],
        conflicts: ['a 10.120.1.128/25 leased-to-another-node (victim)', 'b 10.120.1.7/32 leased-to-another-node (victim)'],
      },
    },
    {
      name: 'the whole cluster CIDR: wider than the node mask, never adopted',
      nodes: [victim(), node('greedy', { instance: 2, podCidrs: [V4] })],
      leases: ['10.120.1.0/24=victim'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['greedy 10.120.0.0/16 mask-size'] },
    },
    {
      name: 'the whole cluster CIDR on an empty lease table: not adoptable (mask)',
      nodes: [node('greedy', { instance: 2, podCidrs: [V4] })],
      leases: [],
      want: { owners: [], reserved: [], adoptable: [], conflicts: ['greedy 10.120.0.0/16 mask-size'] },
    },
    {
      name: 'a super-range of another node\'s block with its mask named for migration: still a conflict',
      nodes: [victim(), node('wide', { instance: 2, podCidrs: ['10.120.0.0/23'] })],
      leases: ['10.120.1.0/24=victim'],
      migration: [23],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['wide 10.120.0.0/23 leased-to-another-node (victim)'] },
    },
    {
      name: 'adoption: an unleased pod CIDR of the node mask, no lease overlapping',
      nodes: [node('old', { instance: 1, podCidrs: ['10.120.7.0/24'] })],
      leases: [],
      want: { owners: [], reserved: ['10.120.7.0/24=old'], adoptable: ['10.120.7.0/24=old'], conflicts: [] },
    },
    {
      name: 'adoption of another mask only when named: /23 named, /25 not',
      nodes: [node('n23', { instance: 1, podCidrs: ['10.120.2.0/23'] }), node('n25', { instance: 2, podCidrs: ['10.120.9.0/25'] })],
      leases: [],
      migration: [23],
      want: { owners: [], reserved: ['10.120.2.0/23=n23'], adoptable: ['10.120.2.0/23=n23'], conflicts: ['n25 10.120.9.0/25 mask-size'] },
    },
    {
      name: 'a /23 adopted as both its blocks is its node\'s; half of it is still a candidate',
      nodes: [node('n23', { instance: 1, podCidrs: ['10.120.2.0/23'] }), node('half', { instance: 2, podCidrs: ['10.120.4.0/23'] })],
      leases: ['10.120.2.0/24=n23', '10.120.3.0/24=n23', '10.120.4.0/24=half'],
      migration: [23],
      want: { owners: ['10.120.2.0/23=n23'], reserved: ['10.120.4.0/23=half'], adoptable: ['10.120.4.0/23=half'], conflicts: [] },
    },
    {
      name: 'two smaller candidates in one unleased block: the first registered takes the block',
      nodes: [node('b', { instance: 1, podCidrs: ['10.120.5.128/25'] }), node('a', { instance: 2, podCidrs: ['10.120.5.0/25'] })],
      leases: [],
      migration: [25],
      want: { owners: [], reserved: ['10.120.5.0/25=a'], adoptable: ['10.120.5.0/25=a'], conflicts: ['b 10.120.5.128/25 overlaps-pod-cidr (a)'] },
    },
    {
      name: 'two candidates for one unleased CIDR: the first registered is adopted',
      nodes: [node('late', { instance: 1, podCidrs: ['10.120.5.0/24'], created: T2 }), node('early', { instance: 2, podCidrs: ['10.120.5.0/24'], created: T1 })],
      leases: [],
      want: { owners: [], reserved: ['10.120.5.0/24=early'], adoptable: ['10.120.5.0/24=early'], conflicts: ['late 10.120.5.0/24 overlaps-pod-cidr (early)'] },
    },
    {
      name: 'two nodes naming one instance, registered together: the one holding a lease keeps it',
      nodes: [victim({ created: T1 }), node('a-twin', { instance: 1, podCidrs: ['10.120.2.0/24'], created: T1 })],
      leases: ['10.120.1.0/24=victim'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['a-twin 10.120.2.0/24 instance-of-another-node (victim)'] },
    },
    {
      name: 'two nodes naming one instance: a migrated node registered first keeps it over a newer leased one',
      nodes: [node('old', { instance: 1, podCidrs: ['10.120.7.0/24'], created: T1 }), node('twin', { instance: 1, podCidrs: ['10.120.2.0/24'], created: T2 })],
      leases: ['10.120.2.0/24=twin'],
      want: { owners: [], reserved: ['10.120.7.0/24=old'], adoptable: ['10.120.7.0/24=old'], conflicts: ['twin 10.120.2.0/24 instance-of-another-node (old)'] },
    },
    {
      name: 'two nodes naming one instance, both leased: the first registered keeps it',
      nodes: [victim(), node('twin', { instance: 1, podCidrs: ['10.120.2.0/24'], created: T2 })],
      leases: ['10.120.1.0/24=victim', '10.120.2.0/24=twin'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['twin 10.120.2.0/24 instance-of-another-node (victim)'] },
    },
    {
      name: 'a node without a pod CIDR naming a leased node\'s instance is listed too',
      nodes: [victim(), node('twin', { instance: 1, created: T2 })],
      leases: ['10.120.1.0/24=victim'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['twin - instance-of-another-node (victim)'] },
    },
    {
      name: 'a pod CIDR with leading zeros (read as decimal by the node, 10.120.1.0/24) over another node\'s block: a conflict, the victim keeps it',
      nodes: [victim({ created: T2 }), node('zeros', { instance: 2, podCidrs: ['010.120.1.0/24'], created: T1 })],
      leases: ['10.120.1.0/24=victim'],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['zeros 10.120.1.0/24 non-canonical-pod-cidr'] },
    },
    {
      name: 'a pod CIDR with leading zeros on a free block: a conflict, never adopted nor leased',
      nodes: [node('zeros', { instance: 2, podCidrs: ['10.120.002.0/24'] }), node('prefix', { instance: 3, podCidrs: ['10.120.3.0/024'] })],
      leases: [],
      want: { owners: [], reserved: [], adoptable: [], conflicts: ['prefix 10.120.3.0/24 non-canonical-pod-cidr', 'zeros 10.120.2.0/24 non-canonical-pod-cidr'] },
    },
  ])('$name', ({ nodes, leases, migration, want }) => {
    expect(decide(nodes, leaseTable(leases, migration))).toStrictEqual(want);
  });
});

describe('decideOwnership without a lease table (the plan CLI): the first registered owns', () => {
  it.each<{ name: string; nodes: Node[]; want: ReturnType<typeof decide> }>([
    {
      name: 'the same CIDR: the older node, not the smaller name',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.1.0/24'], created: T2 }), node('b', { instance: 2, podCidrs: ['10.120.1.0/24'], created: T1 })],
      want: { owners: ['10.120.1.0/24=b'], reserved: [], adoptable: [], conflicts: ['a 10.120.1.0/24 overlaps-pod-cidr (b)'] },
    },
    {
      name: 'same creationTimestamp: by name',
      nodes: [node('b', { instance: 2, podCidrs: ['10.120.1.0/24'], created: T1 }), node('a', { instance: 1, podCidrs: ['10.120.1.0/24'], created: T1 })],
      want: { owners: ['10.120.1.0/24=a'], reserved: [], adoptable: [], conflicts: ['b 10.120.1.0/24 overlaps-pod-cidr (a)'] },
    },
    {
      name: 'a sub-range and a super-range of an older node\'s block',
      nodes: [victim(), node('sub', { instance: 2, podCidrs: ['10.120.1.0/25'], created: T2 }), node('super', { instance: 3, podCidrs: [V4], created: T2 })],
      want: {
        owners: ['10.120.1.0/24=victim'],
        reserved: [],
        adoptable: [],
        conflicts: ['sub 10.120.1.0/25 overlaps-pod-cidr (victim)', 'super 10.120.0.0/16 overlaps-pod-cidr (victim)'],
      },
    },
    {
      name: 'a node without creationTimestamp counts as registered last',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.1.0/24'] }), node('b', { instance: 2, podCidrs: ['10.120.1.0/24'], created: T2 })],
      want: { owners: ['10.120.1.0/24=b'], reserved: [], adoptable: [], conflicts: ['a 10.120.1.0/24 overlaps-pod-cidr (b)'] },
    },
    {
      name: 'two nodes naming one instance: the older keeps it',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.2.0/24'], created: T2 }), victim()],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['a 10.120.2.0/24 instance-of-another-node (victim)'] },
    },
    {
      name: 'a pod CIDR with leading zeros, registered first: it does not shadow the later node\'s block',
      nodes: [node('zeros', { instance: 2, podCidrs: ['010.120.1.0/24'], created: T1 }), victim({ created: T2 })],
      want: { owners: ['10.120.1.0/24=victim'], reserved: [], adoptable: [], conflicts: ['zeros 10.120.1.0/24 non-canonical-pod-cidr'] },
    },
  ])('$name', ({ nodes, want }) => {
    expect(decide(nodes)).toStrictEqual(want);
  });
});
