/**
 * The planner's target matching: a node's route is found by its instance id or by its primary
 * interface's id, whichever of the two EC2 describes (PlanInput.primaryInterfaces), and a blackhole
 * is deleted as a blackhole, outside the mass-deletion guard.
 */
import { describe, expect, it } from 'vitest';
import { planRoutes } from '../../lib/routes/index.ts';
import type { RoutePlan } from '../../lib/routes/index.ts';
import { parseRouteTables } from '../../lib/routes/route-tables.ts';
import { inst, node, tables } from './fixtures.ts';
import type { RouteSpec } from './fixtures.ts';

const V4 = '10.120.0.0/16';
const RTB = 'rtb-0aaaaaaaaaaaaaaa1';
/** The primary interface of instance n, as the fixtures name it (fixtures.ts, rawRoute). */
const eni = (n: number): string => `eni-${inst(n).slice(2)}`;
const primaryInterfaces = new Map([
  [inst(1), eni(1)],
  [inst(2), eni(2)],
]);
const node1 = node('node-1', { instance: 1, podCidrs: ['10.120.0.0/24'] });
const node2 = node('node-2', { instance: 2, podCidrs: ['10.120.1.0/24'] });

type Summary = Pick<RoutePlan, 'create' | 'replace' | 'delete'> & { status: RoutePlan['nodes']; warnings: string[] };
const summary = (plan: RoutePlan): Summary => ({
  create: plan.create,
  replace: plan.replace,
  delete: plan.delete,
  status: plan.nodes,
  warnings: (plan.warnings ?? []).map((w) => `${w.reason} ${w.node ?? ''} ${w.destinationCidr ?? ''}`.trim()),
});

describe('planRoutes: a node’s route by instance id or primary interface id', () => {
  it.each<{ name: string; routes: RouteSpec[]; interfaces: boolean; want: Omit<Summary, 'status'> & { node1: boolean | 'pending' } }>([
    {
      name: 'described with the node’s primary interface only: the node’s route, nothing to do',
      routes: [{ to: '10.120.0.0/24', eni: eni(1) }],
      interfaces: true,
      want: { create: [], replace: [], delete: [], warnings: [], node1: false },
    },
    {
      name: 'the same without the interface map: a bare interface, foreign',
      routes: [{ to: '10.120.0.0/24', eni: eni(1) }],
      interfaces: false,
      want: { create: [], replace: [], delete: [], warnings: ['foreign-target node-1 10.120.0.0/24'], node1: true },
    },
    {
      name: 'another node’s primary interface: moved back to the owner',
      routes: [{ to: '10.120.0.0/24', eni: eni(2) }],
      interfaces: true,
      want: {
        create: [],
        replace: [{ routeTableId: RTB, destinationCidr: '10.120.0.0/24', node: 'node-1', instanceId: inst(1), reason: 'moved', expect: { instanceId: inst(2) } }],
        delete: [],
        warnings: [],
        node1: 'pending',
      },
    },
    {
      name: 'an interface that is no node’s primary one: foreign, left alone',
      routes: [{ to: '10.120.0.0/24', eni: 'eni-0000000000000beef' }],
      interfaces: true,
      want: { create: [], replace: [], delete: [], warnings: ['foreign-target node-1 10.120.0.0/24'], node1: true },
    },
    {
      name: 'a destination no node holds, on a node’s primary interface: deleted as no-owner',
      routes: [
        { to: '10.120.0.0/24', eni: eni(1) },
        { to: '10.120.9.0/24', eni: eni(2) },
      ],
      interfaces: true,
      want: { create: [], replace: [], delete: [{ routeTableId: RTB, destinationCidr: '10.120.9.0/24', reason: 'no-owner', expect: { instanceId: inst(2), blackhole: false } }], warnings: [], node1: false },
    },
  ])('$name', ({ routes, interfaces, want }) => {
    const plan = planRoutes({
      nodes: [node1, node2],
      routeTables: tables({ id: RTB, routes: [...routes, { to: '10.120.1.0/24', instance: 2 }] }),
      clusterCidrs: [V4],
      ...(interfaces ? { primaryInterfaces } : {}),
    });
    const { status, ...rest } = summary(plan);
    expect(rest).toEqual({ create: want.create, replace: want.replace, delete: want.delete, warnings: want.warnings });
    expect(status.find((s) => s.node === 'node-1')?.networkUnavailable).toBe(want.node1);
  });

  it('takes a route described with the instance only (no interface) as the node’s', () => {
    const routeTables = parseRouteTables({
      RouteTables: [
        {
          RouteTableId: RTB,
          Routes: [
            { DestinationCidrBlock: '10.120.0.0/24', InstanceId: inst(1), InstanceOwnerId: '123456789012', State: 'active', Origin: 'CreateRoute' },
            { DestinationCidrBlock: '10.120.1.0/24', InstanceId: inst(2), InstanceOwnerId: '123456789012', State: 'active', Origin: 'CreateRoute' },
          ],
        },
      ],
    });
    const plan = planRoutes({ nodes: [node1, node2], routeTables, clusterCidrs: [V4], primaryInterfaces });
    expect(summary(plan)).toEqual({
      create: [],
      replace: [],
      delete: [],
      status: [
        { node: 'node-1', networkUnavailable: false, patch: true },
        { node: 'node-2', networkUnavailable: false, patch: true },
      ],
      warnings: [],
    });
  });
});

describe('planRoutes: routes to terminated instances', () => {
  // EC2 API reference, Route: State `blackhole` = the target is not available (a terminated
  // instance's interface is gone; infra/local/ec2/state.ts, terminateInstance). Such a route sends
  // traffic nowhere: deleting it takes nothing from a live node, so the guard does not count it.
  const gone = ['10.120.4.0/24', '10.120.5.0/24', '10.120.6.0/24', '10.120.7.0/24', '10.120.8.0/24', '10.120.9.0/24'];
  it.each([
    { state: 'blackhole', reason: 'blackhole', unsafe: false },
    { state: 'active', reason: 'no-owner', unsafe: true },
  ] as const)('six routes no node holds, $state: deleted with reason $reason, guard tripped: $unsafe', ({ state, reason, unsafe }) => {
    const routes: RouteSpec[] = [
      { to: '10.120.0.0/24', instance: 1 },
      ...gone.map((to, i) => (state === 'blackhole' ? { to, eni: eni(10 + i), blackhole: true as const } : { to, instance: 10 + i })),
    ];
    const plan = planRoutes({ nodes: [node1], routeTables: tables({ id: RTB, routes }), clusterCidrs: [V4], minDeletesForGuard: 5, primaryInterfaces });
    expect(plan.delete).toEqual(gone.map((destinationCidr, i) => ({ routeTableId: RTB, destinationCidr, reason, expect: { instanceId: state === 'blackhole' ? null : inst(10 + i), blackhole: state === 'blackhole' } })));
    expect(plan.unsafe !== undefined).toBe(unsafe);
  });
});
