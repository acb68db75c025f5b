/**
 * The route planner with the lease table (reconcile's and the worker's input): a route targets a
 * node only when that node holds the lease for its pod CIDR. Claims that are not leased to their
 * node are conflicts that never move, shadow or taint the rightful owner's route.
 */
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../lib/nodes/label-selector.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { type RoutePlan, planRoutes } from '../../lib/routes/index.ts';
import type { LeaseTable } from '../../lib/routes/ownership.ts';
import type { RouteTable } from '../../lib/routes/route-tables.ts';
import { inst, node, tables } from './fixtures.ts';

const V4 = '10.120.0.0/16';
const RTB = 'rtb-0aaaaaaaaaaaaaaa1';
const T1 = '2026-01-01T00:00:00Z';
const T2 = '2026-01-01T00:05:00Z';

const leaseTable = (leases: string[], migration: number[] = []): LeaseTable => ({
  leases: leases.map((text) => {
    const [cidr = '', owner = ''] = text.split('=');
    return { cidr, owner, since: 1 };
  }),
  sets: [{ clusterCidr: V4, nodeMaskSize: 24 }],
  migrationMaskSizes: { 4: migration, 6: [] },
});

const victim = node('victim', { instance: 1, podCidrs: ['10.120.1.0/24'], networkUnavailable: 'False', created: T1 });
const VICTIM_LEASE = '10.120.1.0/24=victim';
const ready = { node: 'victim', networkUnavailable: false, patch: false };

interface Case {
  name: string;
  nodes: Node[];
  routeTables: RouteTable[];
  leases: string[];
  migration?: number[];
  want: Pick<RoutePlan, 'create' | 'replace' | 'delete' | 'nodes'>;
  /** The conflict warnings' (node, destination) pairs. */
  conflicts: string[];
}

describe('planRoutes with the lease table', () => {
  it.each<Case>([
    {
      name: 'another node\'s exact pod CIDR, route already re-pointed to it: moved back to the lease holder, claimant unavailable',
      nodes: [victim, node('attacker', { instance: 2, podCidrs: ['10.120.1.0/24'], created: T2 })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 2 }] }),
      leases: [VICTIM_LEASE],
      want: {
        create: [],
        replace: [{ routeTableId: RTB, destinationCidr: '10.120.1.0/24', node: 'victim', instanceId: inst(1), reason: 'moved', expect: { instanceId: inst(2) } }],
        delete: [],
        nodes: [{ node: 'attacker', networkUnavailable: true, patch: true, conflict: 'leased-to-another-node' }, { node: 'victim', networkUnavailable: 'pending', patch: false }],
      },
      conflicts: ['attacker 10.120.1.0/24'],
    },
    {
      name: 'the attacker registered first and sorts first: the lease still decides',
      nodes: [node('victim', { instance: 1, podCidrs: ['10.120.1.0/24'], networkUnavailable: 'False', created: T2 }), node('a', { instance: 2, podCidrs: ['10.120.1.0/24'], created: T1 })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 1 }] }),
      leases: [VICTIM_LEASE],
      want: { create: [], replace: [], delete: [], nodes: [{ node: 'a', networkUnavailable: true, patch: true, conflict: 'leased-to-another-node' }, ready] },
      conflicts: ['a 10.120.1.0/24'],
    },
    {
      name: 'a /25 and a /32 inside another node\'s block: no more-specific route; an existing one is deleted',
      nodes: [victim, node('sub', { instance: 2, podCidrs: ['10.120.1.128/25'] }), node('host', { instance: 3, podCidrs: ['10.120.1.7/32'] })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 1 }, { to: '10.120.1.128/25', instance: 2 }] }),
      leases: [VICTIM_LEASE],
      want: {
        create: [],
        replace: [],
        delete: [{ routeTableId: RTB, destinationCidr: '10.120.1.128/25', reason: 'no-owner', expect: { instanceId: inst(2), blackhole: false } }],
        nodes: [
          { node: 'host', networkUnavailable: true, patch: true, conflict: 'leased-to-another-node' },
          { node: 'sub', networkUnavailable: true, patch: true, conflict: 'leased-to-another-node' },
          ready,
        ],
      },
      conflicts: ['host 10.120.1.7/32', 'sub 10.120.1.128/25'],
    },
    {
      name: 'the whole cluster CIDR: never routed, the owner untouched',
      nodes: [victim, node('greedy', { instance: 2, podCidrs: [V4] })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 1 }] }),
      leases: [VICTIM_LEASE],
      want: { create: [], replace: [], delete: [], nodes: [{ node: 'greedy', networkUnavailable: true, patch: true, conflict: 'mask-size' }, ready] },
      conflicts: ['greedy 10.120.0.0/16'],
    },
    {
      name: 'a second node naming the victim\'s instance: the victim keeps its routes, the twin\'s route to that instance goes',
      nodes: [victim, node('twin', { instance: 1, podCidrs: ['10.120.2.0/24'], created: T2 })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 1 }, { to: '10.120.2.0/24', instance: 1 }] }),
      leases: [VICTIM_LEASE, '10.120.2.0/24=twin'],
      want: {
        create: [],
        replace: [],
        delete: [{ routeTableId: RTB, destinationCidr: '10.120.2.0/24', reason: 'no-owner', expect: { instanceId: inst(1), blackhole: false } }],
        nodes: [{ node: 'twin', networkUnavailable: true, patch: true, conflict: 'instance-of-another-node' }, ready],
      },
      conflicts: ['twin 10.120.2.0/24'],
    },
    {
      name: 'a pod CIDR not leased yet (to be adopted): not routed, and its existing route is not deleted',
      nodes: [node('old', { instance: 4, podCidrs: ['10.120.4.0/24'], networkUnavailable: 'False' })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.4.0/24', instance: 4 }] }),
      leases: [],
      want: { create: [], replace: [], delete: [], nodes: [{ node: 'old', networkUnavailable: 'pending', patch: false }] },
      conflicts: [],
    },
    {
      name: 'a /23 adopted under a migration mask is routed whole',
      nodes: [node('wide', { instance: 4, podCidrs: ['10.120.4.0/23'] })],
      routeTables: tables({ id: RTB, routes: [] }),
      leases: ['10.120.4.0/24=wide', '10.120.5.0/24=wide'],
      migration: [23],
      want: {
        create: [{ routeTableId: RTB, destinationCidr: '10.120.4.0/23', node: 'wide', instanceId: inst(4) }],
        replace: [],
        delete: [],
        nodes: [{ node: 'wide', networkUnavailable: 'pending', patch: false }],
      },
      conflicts: [],
    },
  ])('$name', ({ nodes, routeTables, leases, migration, want, conflicts }) => {
    const plan = planRoutes({ nodes, routeTables, clusterCidrs: [V4], leaseTable: leaseTable(leases, migration) });
    expect({ create: plan.create, replace: plan.replace, delete: plan.delete, nodes: plan.nodes }).toStrictEqual(want);
    expect((plan.warnings ?? []).filter((w) => w.reason === 'pod-cidr-conflict').map((w) => `${w.node ?? ''} ${w.destinationCidr ?? ''}`)).toEqual(conflicts);
  });
});

// With NODE_SELECTOR, a kubelet outside it may still name a managed node's instance in its
// providerID: the instance stays the managed node's, and the unmanaged claimant is only reported.
describe('planRoutes: an unmanaged node naming a managed node\'s instance', () => {
  const POOL = { pool: 'podroute' };
  const managedVictim = node('victim', { instance: 1, podCidrs: ['10.120.1.0/24'], networkUnavailable: 'False', created: T1, labels: POOL });
  const hostile = node('zz-hostile', { instance: 1, created: T2, labels: { pool: 'other' } });
  const outside = (name: string) => ({ node: name, networkUnavailable: false, patch: false, unmanaged: 'outside-node-selector' });
  it.each<{ name: string; nodes: Node[]; routeTables: RouteTable[]; want: Pick<RoutePlan, 'create' | 'replace' | 'delete' | 'nodes'>; warned: string[] }>([
    {
      name: 'the victim\'s route in place: the victim stays ready, the claimant is a conflict',
      nodes: [managedVictim, hostile],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 1 }] }),
      want: { create: [], replace: [], delete: [], nodes: [ready, outside('zz-hostile')] },
      warned: ['pod-cidr-conflict zz-hostile'],
    },
    {
      name: 'a stale route to the victim\'s instance is still podroute\'s to delete',
      nodes: [managedVictim, hostile],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 1 }, { to: '10.120.7.0/24', instance: 1 }] }),
      want: { create: [], replace: [], delete: [{ routeTableId: RTB, destinationCidr: '10.120.7.0/24', reason: 'no-owner', expect: { instanceId: inst(1), blackhole: false } }], nodes: [ready, outside('zz-hostile')] },
      warned: ['pod-cidr-conflict zz-hostile'],
    },
    {
      name: 'an instance only an unmanaged node names stays someone else\'s: foreign-target, nothing moved',
      nodes: [managedVictim, node('zz-other', { instance: 9, created: T2, labels: { pool: 'other' } })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.1.0/24', instance: 9 }] }),
      want: { create: [], replace: [], delete: [], nodes: [{ node: 'victim', networkUnavailable: true, patch: true }, outside('zz-other')] },
      warned: ['foreign-target victim'],
    },
  ])('$name', ({ nodes, routeTables, want, warned }) => {
    const plan = planRoutes({ nodes, routeTables, clusterCidrs: [V4], leaseTable: leaseTable([VICTIM_LEASE]), nodeSelector: parseLabelSelector('pool=podroute') });
    expect({ create: plan.create, replace: plan.replace, delete: plan.delete, nodes: plan.nodes }).toStrictEqual(want);
    expect((plan.warnings ?? []).map((w) => `${w.reason} ${w.node ?? ''}`)).toEqual(warned);
  });
});
