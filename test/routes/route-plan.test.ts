import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { parseLabelSelector } from '../../lib/nodes/label-selector.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { type PlanInput, type RoutePlan, planRoutes } from '../../lib/routes/index.ts';
import type { RouteTable } from '../../lib/routes/route-tables.ts';
import { inst, node, shuffled, tables } from './fixtures.ts';

const V4 = '10.120.0.0/16';
const V6 = 'ace:cab:deca::/8'; // upstream's dual-stack cluster CIDR; canonical a00::/8
const RTB = 'rtb-0aaaaaaaaaaaaaaa1';

/** A full plan from the parts a case cares about. */
function plan(parts: Partial<RoutePlan> & Pick<RoutePlan, 'nodes'>): RoutePlan {
  const { create = [], replace = [], delete: deletes = [], nodes, unsafe, warnings } = parts;
  return {
    create,
    replace,
    delete: deletes,
    nodes,
    ...(unsafe === undefined ? {} : { unsafe }),
    ...(warnings === undefined ? {} : { warnings }),
  };
}

interface Case {
  name: string;
  nodes: Node[];
  routeTables: RouteTable[];
  clusterCidrs?: string[];
  clusterName?: string;
  options?: Pick<PlanInput, 'maxDeleteShare' | 'minDeletesForGuard'>;
  /** NODE_SELECTOR text. */
  selector?: string;
  want: RoutePlan;
}

const run = (c: Case): RoutePlan =>
  planRoutes({
    nodes: c.nodes,
    routeTables: c.routeTables,
    clusterCidrs: c.clusterCidrs ?? [V4],
    clusterName: c.clusterName,
    ...c.options,
    ...(c.selector === undefined ? {} : { nodeSelector: parseLabelSelector(c.selector) }),
  });

// Upstream's fixtures, given instances: node-1/node-2 single-stack, node-3/node-4 dual-stack.
const node1 = node('node-1', { instance: 1, podCidrs: ['10.120.0.0/24'] });
const node2 = node('node-2', { instance: 2, podCidrs: ['10.120.1.0/24'] });
const nodeNoCidr = node('node-2', { instance: 2 });
const node3 = node('node-3', { instance: 3, podCidrs: ['10.120.0.0/24', 'a00:100::/24'] });
const node4 = node('node-4', { instance: 4, podCidrs: ['10.120.1.0/24', 'a00:200::/24'] });

const pending = (name: string) => ({ node: name, networkUnavailable: 'pending' as const, patch: false });
const ready = (name: string, patch = true) => ({ node: name, networkUnavailable: false, patch });
const unavailable = (name: string, patch = true) => ({ node: name, networkUnavailable: true, patch });
const op = (destinationCidr: string, name: string, instance: number | string, routeTableId = RTB) => ({
  routeTableId,
  destinationCidr,
  node: name,
  instanceId: typeof instance === 'number' ? inst(instance) : instance,
});

describe('planRoutes: upstream TestReconcile, adapted', () => {
  const dual = [V4, V6];
  const cases: Case[] = [
    {
      name: 'dual-stack: two nodes and no routes -> every route created, nodes pending',
      nodes: [node3, node4],
      routeTables: tables({ id: RTB, routes: [] }),
      clusterCidrs: dual,
      want: plan({
        create: [op('10.120.0.0/24', 'node-3', 3), op('10.120.1.0/24', 'node-4', 4), op('a00:100::/24', 'node-3', 3), op('a00:200::/24', 'node-4', 4)],
        nodes: [pending('node-3'), pending('node-4')],
      }),
    },
    {
      name: 'dual-stack: all routes there -> nothing to do, nodes become available',
      nodes: [node3, node4],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.0.0/24', instance: 3 },
          { to: '10.120.1.0/24', instance: 4 },
          { to: 'a00:100::/24', instance: 3 },
          { to: 'a00:200::/24', instance: 4 },
        ],
      }),
      clusterCidrs: dual,
      want: plan({ nodes: [ready('node-3'), ready('node-4')] }),
    },
    {
      name: 'dual-stack: routes swapped between the nodes -> each replaced as moved',
      nodes: [node3, node4],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.1.0/24', instance: 3 },
          { to: '10.120.0.0/24', instance: 4 },
          { to: 'a00:200::/24', instance: 3 },
          { to: 'a00:100::/24', instance: 4 },
        ],
      }),
      clusterCidrs: dual,
      want: plan({
        replace: [
          { ...op('10.120.0.0/24', 'node-3', 3), reason: 'moved', expect: { instanceId: inst(4) } },
          { ...op('10.120.1.0/24', 'node-4', 4), reason: 'moved', expect: { instanceId: inst(3) } },
          { ...op('a00:100::/24', 'node-3', 3), reason: 'moved', expect: { instanceId: inst(4) } },
          { ...op('a00:200::/24', 'node-4', 4), reason: 'moved', expect: { instanceId: inst(3) } },
        ],
        nodes: [pending('node-3'), pending('node-4')],
      }),
    },
    {
      name: 'dual-stack: some routes there -> only the missing ones created',
      nodes: [node3, node4],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 3 }, { to: 'a00:200::/24', instance: 4 }] }),
      clusterCidrs: dual,
      want: plan({
        create: [op('10.120.1.0/24', 'node-4', 4), op('a00:100::/24', 'node-3', 3)],
        nodes: [pending('node-3'), pending('node-4')],
      }),
    },
    {
      name: 'dual-stack: too many routes -> routes to instances of no node deleted',
      nodes: [node3, node4],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.0.0/24', instance: 3 },
          { to: '10.120.1.0/24', instance: 4 },
          { to: '10.120.2.0/24', instance: 0x55 },
          { to: 'a00:100::/24', instance: 3 },
          { to: 'a00:200::/24', instance: 4 },
          { to: 'a00:300::/24', instance: 0x66 },
        ],
      }),
      clusterCidrs: dual,
      want: plan({
        delete: [
          { routeTableId: RTB, destinationCidr: '10.120.2.0/24', reason: 'no-owner', expect: { instanceId: inst(0x55), blackhole: false } },
          { routeTableId: RTB, destinationCidr: 'a00:300::/24', reason: 'no-owner', expect: { instanceId: inst(0x66), blackhole: false } },
        ],
        nodes: [ready('node-3'), ready('node-4')],
      }),
    },
    {
      name: 'single-stack: routes there -> nothing to do',
      nodes: [node1, node2],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.1.0/24', instance: 2 }] }),
      want: plan({ nodes: [ready('node-1'), ready('node-2')] }),
    },
    {
      name: 'single-stack: the nodes moved to new instances (upstream: node addresses changed) -> replaced as moved',
      nodes: [node1, node2],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 0x11 }, { to: '10.120.1.0/24', instance: 0x12 }] }),
      want: plan({
        replace: [
          { ...op('10.120.0.0/24', 'node-1', 1), reason: 'moved', expect: { instanceId: inst(0x11) } },
          { ...op('10.120.1.0/24', 'node-2', 2), reason: 'moved', expect: { instanceId: inst(0x12) } },
        ],
        nodes: [pending('node-1'), pending('node-2')],
      }),
    },
    {
      name: 'single-stack: one of two routes there -> the other created',
      nodes: [node1, node2],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }] }),
      want: plan({ create: [op('10.120.1.0/24', 'node-2', 2)], nodes: [ready('node-1'), pending('node-2')] }),
    },
    {
      name: 'single-stack: no routes -> both created',
      nodes: [node1, node2],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({ create: [op('10.120.0.0/24', 'node-1', 1), op('10.120.1.0/24', 'node-2', 2)], nodes: [pending('node-1'), pending('node-2')] }),
    },
    {
      name: 'single-stack: too many routes -> the two of deleted nodes deleted',
      nodes: [node1, node2],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.0.0/24', instance: 1 },
          { to: '10.120.1.0/24', instance: 2 },
          { to: '10.120.2.0/24', instance: 3 },
          { to: '10.120.3.0/24', instance: 4 },
        ],
      }),
      want: plan({
        delete: [
          { routeTableId: RTB, destinationCidr: '10.120.2.0/24', reason: 'no-owner', expect: { instanceId: inst(3), blackhole: false } },
          { routeTableId: RTB, destinationCidr: '10.120.3.0/24', reason: 'no-owner', expect: { instanceId: inst(4), blackhole: false } },
        ],
        nodes: [ready('node-1'), ready('node-2')],
      }),
    },
    {
      name: 'single-stack: one right and one wrong route -> missing created, wrong deleted',
      nodes: [node1, node2],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.2.0/24', instance: 3 }] }),
      want: plan({
        create: [op('10.120.1.0/24', 'node-2', 2)],
        delete: [{ routeTableId: RTB, destinationCidr: '10.120.2.0/24', reason: 'no-owner', expect: { instanceId: inst(3), blackhole: false } }],
        nodes: [ready('node-1'), pending('node-2')],
      }),
    },
    {
      name: 'single-stack: a node without pod CIDR -> no route for it, NetworkUnavailable=True',
      nodes: [node1, nodeNoCidr],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({ create: [op('10.120.0.0/24', 'node-1', 1)], nodes: [pending('node-1'), unavailable('node-2')] }),
    },
    {
      name: 'single-stack: an extra blackhole in our range -> deleted',
      nodes: [node1, node2],
      routeTables: tables({
        id: RTB,
        routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.1.0/24', instance: 2 }, { to: '10.120.2.0/24', instance: 9, blackhole: true }],
      }),
      want: plan({ delete: [{ routeTableId: RTB, destinationCidr: '10.120.2.0/24', reason: 'blackhole', expect: { instanceId: inst(9), blackhole: true } }], nodes: [ready('node-1'), ready('node-2')] }),
    },
    {
      name: 'single-stack: an extra blackhole outside our range -> untouched',
      nodes: [node1, node2],
      routeTables: tables({
        id: RTB,
        routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.1.0/24', instance: 2 }, { to: '10.1.2.0/24', instance: 9, blackhole: true }],
      }),
      want: plan({ nodes: [ready('node-1'), ready('node-2')] }),
    },
    {
      name: 'conditions already right -> no patch (updateNetworkingCondition skips)',
      nodes: [
        node('node-1', { instance: 1, podCidrs: ['10.120.0.0/24'], networkUnavailable: 'False' }),
        node('node-2', { instance: 2, networkUnavailable: 'True' }),
      ],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }] }),
      want: plan({ nodes: [ready('node-1', false), unavailable('node-2', false)] }),
    },
    {
      name: 'conditions wrong or Unknown -> patched',
      nodes: [
        node('node-1', { instance: 1, podCidrs: ['10.120.0.0/24'], networkUnavailable: 'True' }),
        node('node-2', { instance: 2, networkUnavailable: 'False' }),
        node('node-3', { instance: 3, networkUnavailable: 'Unknown' }),
        node('node-4', { instance: 4, podCidrs: ['10.120.4.0/24'], networkUnavailable: 'Unknown' }),
      ],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.4.0/24', instance: 4 }] }),
      want: plan({ nodes: [ready('node-1'), unavailable('node-2'), unavailable('node-3'), ready('node-4')] }),
    },
  ];

  it.each(cases)('$name', (c) => {
    expect(run(c)).toStrictEqual(c.want);
  });
});

describe('planRoutes: AWS shapes, families and tables', () => {
  const RTB2 = 'rtb-0bbbbbbbbbbbbbbb2';
  const RTB3 = 'rtb-0ccccccccccccccc3';
  const tag = { 'kubernetes.io/cluster/prod': 'owned' };
  const cases: Case[] = [
    {
      name: 'IPv6-only cluster',
      nodes: [node('a', { instance: 1, podCidrs: ['fd00:0:0:1::/64'] }), node('b', { instance: 2, podCidrs: ['fd00::2:0:0:0:0/64'] })],
      routeTables: tables({ id: RTB, routes: [{ to: 'fd00:0:0:1::/64', instance: 1 }, { to: 'fd00:0:0:9::/64', instance: 9 }] }),
      clusterCidrs: ['fd00::/48'],
      want: plan({
        create: [op('fd00:0:0:2::/64', 'b', 2)],
        delete: [{ routeTableId: RTB, destinationCidr: 'fd00:0:0:9::/64', reason: 'no-owner', expect: { instanceId: inst(9), blackhole: false } }],
        nodes: [ready('a'), pending('b')],
      }),
    },
    {
      name: 'dual-stack node: v4 there, v6 missing -> only v6 created',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.5.0/24', 'fd00:0:0:5::/64'] })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.5.0/24', instance: 1 }] }),
      clusterCidrs: [V4, 'fd00::/48'],
      want: plan({ create: [op('fd00:0:0:5::/64', 'a', 1)], nodes: [pending('a')] }),
    },
    {
      name: 'two route tables, a route missing from only one -> created there only',
      nodes: [node1, node2],
      routeTables: tables(
        { id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.1.0/24', instance: 2 }] },
        { id: RTB2, routes: [{ to: '10.120.0.0/24', instance: 1 }] },
      ),
      want: plan({ create: [op('10.120.1.0/24', 'node-2', 2, RTB2)], nodes: [ready('node-1'), pending('node-2')] }),
    },
    {
      name: 'three tables: a route moved in one, a blackhole in another',
      nodes: [node1],
      routeTables: tables(
        { id: RTB3, routes: [{ to: '10.120.0.0/24', instance: 1, blackhole: true }] },
        { id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }] },
        { id: RTB2, routes: [{ to: '10.120.0.0/24', instance: 7 }] },
      ),
      want: plan({
        replace: [
          { ...op('10.120.0.0/24', 'node-1', 1, RTB2), reason: 'moved', expect: { instanceId: inst(7) } },
          { ...op('10.120.0.0/24', 'node-1', 1, RTB3), reason: 'blackhole' },
        ],
        nodes: [pending('node-1')],
      }),
    },
    {
      name: 'NAT instance: default route to it untouched, a route to it inside the cluster CIDR deleted',
      nodes: [node1],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.0.0.0/16', gateway: 'local' },
          { to: '0.0.0.0/0', instance: 'i-0badc0ffee0000001' },
          { to: '10.120.0.0/24', instance: 1 },
          { to: '10.120.99.0/24', instance: 'i-0badc0ffee0000001' },
        ],
      }),
      want: plan({ delete: [{ routeTableId: RTB, destinationCidr: '10.120.99.0/24', reason: 'no-owner', expect: { instanceId: 'i-0badc0ffee0000001', blackhole: false } }], nodes: [ready('node-1')] }),
    },
    {
      name: 'NAT gateway, internet gateway, peering and ENI routes inside the cluster CIDR -> never deleted',
      nodes: [node1],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.0.0/24', instance: 1 },
          { to: '10.120.50.0/24', nat: 'nat-0123456789abcdef0' },
          { to: '10.120.51.0/24', gateway: 'igw-0123456789abcdef0' },
          { to: '10.120.52.0/24', gateway: 'pcx-0123456789abcdef0' },
          { to: '10.120.53.0/24', eni: 'eni-0123456789abcdef0' },
          { to: '10.120.0.0/16', gateway: 'local' },
        ],
      }),
      want: plan({ nodes: [ready('node-1')] }),
    },
    {
      name: 'blackholed NAT gateway route inside the cluster CIDR -> deleted as blackhole',
      nodes: [node1],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }, { to: '10.120.60.0/24', nat: 'nat-0123456789abcdef0', blackhole: true }] }),
      want: plan({ delete: [{ routeTableId: RTB, destinationCidr: '10.120.60.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } }], nodes: [ready('node-1')] }),
    },
    {
      name: 'host bits in pod CIDRs and in route destinations are cleared before comparing',
      nodes: [
        node('a', { instance: 1, podCidrs: ['10.120.7.77/24', 'fd00:0:0:7::1/64'] }),
        node('b', { instance: 2, podCidr: '10.120.8.1/24' }),
      ],
      routeTables: tables({
        id: RTB,
        routes: [{ to: '10.120.7.5/24', instance: 1 }, { to: 'FD00:0000:0:7:0:0:0:9/64', instance: 1 }, { to: '10.120.9.200/24', instance: 5 }],
      }),
      clusterCidrs: ['10.120.0.1/16', 'fd00::1/48'],
      want: plan({
        create: [op('10.120.8.0/24', 'b', 2)],
        delete: [{ routeTableId: RTB, destinationCidr: '10.120.9.0/24', reason: 'no-owner', expect: { instanceId: inst(5), blackhole: false } }],
        nodes: [ready('a'), pending('b')],
      }),
    },
    {
      name: 'with clusterName: untagged table ignored, tagged tables (any value) used',
      nodes: [node1],
      routeTables: tables(
        { id: RTB, routes: [{ to: '10.120.9.0/24', instance: 9 }] },
        { id: RTB2, routes: [], tags: tag },
        { id: RTB3, routes: [], tags: { 'kubernetes.io/cluster/prod': 'shared', Name: 'private' } },
        { id: 'rtb-0ddddddddddddddd4', routes: [], tags: { 'kubernetes.io/cluster/staging': 'owned' } },
      ),
      clusterName: 'prod',
      want: plan({ create: [op('10.120.0.0/24', 'node-1', 1, RTB2), op('10.120.0.0/24', 'node-1', 1, RTB3)], nodes: [pending('node-1')] }),
    },
    {
      name: 'without clusterName every table is the cluster\'s',
      nodes: [node1],
      routeTables: tables({ id: RTB, routes: [] }, { id: RTB2, routes: [], tags: { 'kubernetes.io/cluster/other': 'owned' } }),
      want: plan({ create: [op('10.120.0.0/24', 'node-1', 1), op('10.120.0.0/24', 'node-1', 1, RTB2)], nodes: [pending('node-1')] }),
    },
    {
      name: 'local route and prefix-list route inside the cluster CIDR ignored',
      nodes: [node1],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.0.0/16', gateway: 'local' },
          { prefixList: 'pl-0123456789abcdef0', gateway: 'vpce-0123456789abcdef0' },
          { to: '10.120.0.0/24', instance: 1 },
        ],
      }),
      want: plan({ nodes: [ready('node-1')] }),
    },
    {
      name: 'node with only the old spec.podCIDR field',
      nodes: [node('old', { instance: 1, podCidr: '10.120.3.0/24' })],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({ create: [op('10.120.3.0/24', 'old', 1)], nodes: [pending('old')] }),
    },
  ];

  it.each(cases)('$name', (c) => {
    expect(run(c)).toStrictEqual(c.want);
  });
});

describe('planRoutes: bad data gives warnings, never a failure', () => {
  const cases: Case[] = [
    {
      name: 'foreign-target: a NAT gateway holds a node\'s pod CIDR -> no op, node unavailable',
      nodes: [node1],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', nat: 'nat-0123456789abcdef0' }] }),
      want: plan({
        nodes: [unavailable('node-1')],
        warnings: [
          {
            reason: 'foreign-target',
            node: 'node-1',
            routeTableId: RTB,
            destinationCidr: '10.120.0.0/24',
            detail: `${RTB} routes 10.120.0.0/24 to a gateway, not to node node-1; podroute does not replace it`,
          },
        ],
      }),
    },
    {
      name: 'foreign-target: an ENI-only route holds the pod CIDR, while another route is still to create',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.0.0/24', 'fd00::/64'] })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', eni: 'eni-0123456789abcdef0' }] }),
      clusterCidrs: [V4, 'fd00::/48'],
      want: plan({
        create: [op('fd00::/64', 'a', 1)],
        nodes: [unavailable('a')],
        warnings: [
          {
            reason: 'foreign-target',
            node: 'a',
            routeTableId: RTB,
            destinationCidr: '10.120.0.0/24',
            detail: `${RTB} routes 10.120.0.0/24 to network interface eni-0123456789abcdef0 without an instance, not to node a; podroute does not replace it`,
          },
        ],
      }),
    },
    {
      name: 'invalid-pod-cidr: ignored, the valid one still routed',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.0.0/24', '10.120.300.0/24'] }), node('b', { instance: 2, podCidrs: ['nonsense'] })],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }] }),
      want: plan({
        nodes: [ready('a'), unavailable('b')],
        warnings: [
          { reason: 'invalid-pod-cidr', node: 'a', detail: 'pod CIDR "10.120.300.0/24" does not parse; it is ignored' },
          { reason: 'invalid-pod-cidr', node: 'b', detail: 'pod CIDR "nonsense" does not parse; it is ignored' },
        ],
      }),
    },
    {
      name: 'outside-cluster-cidrs: no route for it; a v6 pod CIDR in a v4-only cluster blocks readiness',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.0.0/24', 'fd00::/64'] }), node('b', { instance: 2, podCidrs: ['192.168.0.0/24'] })],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({
        create: [op('10.120.0.0/24', 'a', 1)],
        nodes: [unavailable('a'), unavailable('b')],
        warnings: [
          { reason: 'outside-cluster-cidrs', node: 'a', destinationCidr: 'fd00::/64', detail: 'pod CIDR fd00::/64 is not inside any cluster CIDR; no route is made for it' },
          { reason: 'outside-cluster-cidrs', node: 'b', destinationCidr: '192.168.0.0/24', detail: 'pod CIDR 192.168.0.0/24 is not inside any cluster CIDR; no route is made for it' },
        ],
      }),
    },
    {
      name: 'pod-cidr-conflict: no route yet, same creationTimestamp -> the smallest node name keeps it',
      nodes: [node('node-b', { instance: 2, podCidrs: ['10.120.0.0/24'] }), node('node-a', { instance: 1, podCidrs: ['10.120.0.0/24'] })],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({
        create: [op('10.120.0.0/24', 'node-a', 1)],
        nodes: [pending('node-a'), { ...unavailable('node-b'), conflict: 'overlaps-pod-cidr' }],
        warnings: [
          {
            reason: 'pod-cidr-conflict',
            node: 'node-b',
            destinationCidr: '10.120.0.0/24',
            detail: 'pod CIDR 10.120.0.0/24 of node node-b overlaps 10.120.0.0/24 of node node-a, registered first; it is not routed to node-b',
          },
        ],
      }),
    },
    {
      name: 'pod-cidr-conflict: the node registered first keeps it, not the one an existing route targets',
      nodes: [
        node('node-a', { instance: 1, podCidrs: ['10.120.0.0/24'], created: '2026-01-01T00:00:00Z' }),
        node('node-b', { instance: 2, podCidrs: ['10.120.0.0/24'], created: '2026-01-01T00:00:01Z' }),
      ],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 2 }] }),
      want: plan({
        replace: [{ ...op('10.120.0.0/24', 'node-a', 1), reason: 'moved', expect: { instanceId: inst(2) } }],
        nodes: [pending('node-a'), { ...unavailable('node-b'), conflict: 'overlaps-pod-cidr' }],
        warnings: [
          {
            reason: 'pod-cidr-conflict',
            node: 'node-b',
            destinationCidr: '10.120.0.0/24',
            detail: 'pod CIDR 10.120.0.0/24 of node node-b overlaps 10.120.0.0/24 of node node-a, registered first; it is not routed to node-b',
          },
        ],
      }),
    },
    {
      name: 'pod-cidr-conflict: a blackhole to the later node is replaced for the first',
      nodes: [
        node('node-a', { instance: 1, podCidrs: ['10.120.0.0/24'], created: '2026-01-01T00:00:00Z' }),
        node('node-b', { instance: 2, podCidrs: ['10.120.0.0/24'], created: '2026-01-01T00:00:01Z' }),
      ],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 2, blackhole: true }] }),
      want: plan({
        replace: [{ ...op('10.120.0.0/24', 'node-a', 1), reason: 'blackhole' }],
        nodes: [pending('node-a'), { ...unavailable('node-b'), conflict: 'overlaps-pod-cidr' }],
        warnings: [
          {
            reason: 'pod-cidr-conflict',
            node: 'node-b',
            destinationCidr: '10.120.0.0/24',
            detail: 'pod CIDR 10.120.0.0/24 of node node-b overlaps 10.120.0.0/24 of node node-a, registered first; it is not routed to node-b',
          },
        ],
      }),
    },
    {
      name: 'unmanaged (no providerID yet, another cloud): pod CIDR routes left alone (even a blackhole), condition never written',
      nodes: [
        node('bare', { instance: null, podCidrs: ['10.120.0.0/24', '10.120.1.0/24'] }),
        node('gce', { providerId: 'gce://p/z/vm-1', podCidrs: ['10.120.2.0/24'], networkUnavailable: 'True' }),
      ],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 9 }, { to: '10.120.1.0/24', instance: 8, blackhole: true }, { to: '10.120.2.0/24', instance: 7 }] }),
      want: plan({
        nodes: [
          { node: 'bare', networkUnavailable: false, patch: false, unmanaged: 'no-provider-id' },
          { node: 'gce', networkUnavailable: true, patch: false, unmanaged: 'not-an-ec2-instance' },
        ],
      }),
    },
    {
      name: 'unmanaged Fargate node: no route, no condition, no warning',
      nodes: [
        node('fargate-ip-192-168-1-5.ec2.internal', {
          providerId: 'aws:///us-east-1a/120328e333-369fe1b7ba8b4416ab87216be91dc4f1/fargate-ip-192-168-1-5.ec2.internal',
        }),
        node('ec2', { instance: 1, podCidrs: ['10.120.0.0/24'] }),
      ],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({
        create: [op('10.120.0.0/24', 'ec2', 1)],
        nodes: [pending('ec2'), { node: 'fargate-ip-192-168-1-5.ec2.internal', networkUnavailable: false, patch: false, unmanaged: 'not-an-ec2-instance' }],
      }),
    },
    {
      name: 'outside the node selector: never routed; routes to its instance are neither deleted nor replaced',
      selector: 'podroute.example.com/managed=true',
      nodes: [
        node('cni', { instance: 5, podCidrs: ['10.120.5.0/24'], labels: { 'eks.amazonaws.com/nodegroup': 'cni' } }),
        node('ours', { instance: 1, podCidrs: ['10.120.1.0/24'], labels: { 'podroute.example.com/managed': 'true' } }),
      ],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.5.0/24', instance: 5 }, // the unmanaged node's own CIDR: left alone, not "done"
          { to: '10.120.9.0/24', instance: 5 }, // no node wants it, but it targets an unmanaged node's instance
          { to: '10.120.1.0/24', instance: 5 }, // ours, but pointing at the unmanaged instance: not replaced
        ],
      }),
      want: plan({
        nodes: [
          { node: 'cni', networkUnavailable: false, patch: false, unmanaged: 'outside-node-selector' },
          unavailable('ours'),
        ],
        warnings: [
          {
            reason: 'foreign-target',
            node: 'ours',
            routeTableId: RTB,
            destinationCidr: '10.120.1.0/24',
            detail: `${RTB} routes 10.120.1.0/24 to instance ${inst(5)}, not to node ours; podroute does not replace it`,
          },
        ],
      }),
    },
    {
      name: 'propagated routes (EnableVgwRoutePropagation) are never deleted or replaced, even blackholes; a pod CIDR on one only is created beside it, with a warning',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.0.0/24'] })],
      routeTables: tables({
        id: RTB,
        routes: [
          { to: '10.120.0.0/24', vgw: 'vgw-0123456789abcdef0' },
          { to: '10.120.7.0/24', vgw: 'vgw-0123456789abcdef0', blackhole: true },
          { to: '10.120.8.0/24', vgw: 'vgw-0123456789abcdef0' },
        ],
      }),
      want: plan({
        create: [op('10.120.0.0/24', 'a', 1)],
        nodes: [pending('a')],
        warnings: [
          {
            reason: 'propagated-route',
            node: 'a',
            routeTableId: RTB,
            destinationCidr: '10.120.0.0/24',
            detail: `${RTB} has a propagated route (EnableVgwRoutePropagation) for 10.120.0.0/24; the static route to node a takes priority over it`,
          },
        ],
      }),
    },
    {
      name: 'duplicate-node: the first entry wins',
      nodes: [node('a', { instance: 1, podCidrs: ['10.120.0.0/24'] }), node('a', { instance: 2, podCidrs: ['10.120.1.0/24'] })],
      routeTables: tables({ id: RTB, routes: [] }),
      want: plan({
        create: [op('10.120.0.0/24', 'a', 1)],
        nodes: [pending('a')],
        warnings: [{ reason: 'duplicate-node', node: 'a', detail: 'node a was listed more than once; the first entry is used' }],
      }),
    },
    {
      name: 'no-route-tables: nothing tagged for the cluster -> every node unavailable',
      nodes: [node1],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }] }),
      clusterName: 'prod',
      want: plan({
        nodes: [unavailable('node-1')],
        warnings: [{ reason: 'no-route-tables', detail: 'no route table is tagged kubernetes.io/cluster/prod; no node can be routed' }],
      }),
    },
    {
      name: 'duplicate-route-table: the first copy is used',
      nodes: [node1],
      routeTables: tables({ id: RTB, routes: [{ to: '10.120.0.0/24', instance: 1 }] }, { id: RTB, routes: [] }),
      want: plan({
        nodes: [ready('node-1')],
        warnings: [{ reason: 'duplicate-route-table', routeTableId: RTB, detail: `route table ${RTB} was given more than once; the first copy is used` }],
      }),
    },
    {
      name: 'unparseable route destinations and local routes are never deleted (hand-built tables)',
      nodes: [node1],
      routeTables: [
        {
          routeTableId: RTB,
          vpcId: null,
          tags: {},
          skippedRoutes: 0,
          routes: [
            { routeTableId: RTB, destinationCidr: '10.120.0.0/24', family: 4, instanceId: inst(1), networkInterfaceId: null, target: 'instance', blackhole: false },
            { routeTableId: RTB, destinationCidr: '10.120.x.0/24', family: 4, instanceId: inst(9), networkInterfaceId: null, target: 'instance', blackhole: true },
            // Not a shape EC2 prints, but local routes must stay untouched whatever their state.
            { routeTableId: RTB, destinationCidr: '10.120.0.0/16', family: 4, instanceId: null, networkInterfaceId: null, target: 'local', blackhole: true },
          ],
        },
      ],
      want: plan({ nodes: [ready('node-1')] }),
    },
  ];

  it.each(cases)('$name', (c) => {
    expect(run(c)).toStrictEqual(c.want);
  });
});

describe('planRoutes: mass-deletion guard', () => {
  /** Routes to `count` instances that are no node, at 10.120.(100+i).0/24. */
  const ownerless = (count: number, blackhole = false) =>
    Array.from({ length: count }, (_, i) => ({ to: `10.120.${100 + i}.0/24`, instance: 0x100 + i, blackhole }));
  /** `count` nodes with their routes in place. */
  const routed = (count: number) => ({
    nodes: Array.from({ length: count }, (_, i) => node(`n-${String(i).padStart(2, '0')}`, { instance: i + 1, podCidrs: [`10.120.${i}.0/24`] })),
    routes: Array.from({ length: count }, (_, i) => ({ to: `10.120.${i}.0/24`, instance: i + 1 })),
  });

  const cases: Array<{ name: string; nodes: number; ownerless: number; blackholes?: number; options?: Case['options']; unsafe: string | null }> = [
    { name: 'empty node list with live routes', nodes: 0, ownerless: 3, unsafe: 'node list is empty but 3 routes exist in the cluster CIDRs; refusing to delete them' },
    { name: 'empty node list, only blackholes', nodes: 0, ownerless: 0, blackholes: 4, unsafe: null },
    { name: 'empty node list, nothing at all', nodes: 0, ownerless: 0, unsafe: null },
    {
      name: 'more than half of live routes deleted',
      nodes: 4,
      ownerless: 6,
      unsafe: 'plan deletes 6 of 10 live routes in the cluster CIDRs (60%, more than the 50% allowed); refusing to delete them',
    },
    { name: 'exactly half does not trip', nodes: 5, ownerless: 5, unsafe: null },
    { name: 'below minDeletesForGuard does not trip', nodes: 1, ownerless: 4, unsafe: null },
    { name: 'blackholes do not count', nodes: 2, ownerless: 1, blackholes: 20, unsafe: null },
    {
      name: 'minDeletesForGuard 0 and a lower share',
      nodes: 3,
      ownerless: 1,
      options: { maxDeleteShare: 0.2, minDeletesForGuard: 0 },
      unsafe: 'plan deletes 1 of 4 live routes in the cluster CIDRs (25%, more than the 20% allowed); refusing to delete them',
    },
    { name: 'share 1 never trips with nodes present', nodes: 1, ownerless: 30, options: { maxDeleteShare: 1 }, unsafe: null },
  ];

  it.each(cases)('$name', (c) => {
    const { nodes, routes } = routed(c.nodes);
    const blackholes = Array.from({ length: c.blackholes ?? 0 }, (_, i) => ({ to: `10.120.${200 + i}.0/24`, instance: 0x200 + i, blackhole: true }));
    const result = planRoutes({
      nodes,
      routeTables: tables({ id: RTB, routes: [...routes, ...ownerless(c.ownerless), ...blackholes] }),
      clusterCidrs: [V4],
      ...c.options,
    });
    expect(result.unsafe ?? null).toBe(c.unsafe);
    // The plan still lists every deletion; callers withhold them.
    expect(result.delete.filter((d) => d.reason === 'no-owner')).toHaveLength(c.ownerless);
    expect(result.delete.filter((d) => d.reason === 'blackhole')).toHaveLength(c.blackholes ?? 0);
    expect('unsafe' in result).toBe(c.unsafe !== null);
  });

  it.each([
    [{ maxDeleteShare: 0 }, /maxDeleteShare must be a number in \(0, 1\], got 0/],
    [{ maxDeleteShare: 1.5 }, /maxDeleteShare .* got 1\.5/],
    [{ maxDeleteShare: Number.NaN }, /maxDeleteShare .* got NaN/],
    [{ minDeletesForGuard: -1 }, /minDeletesForGuard must be a whole number >= 0, got -1/],
    [{ minDeletesForGuard: 2.5 }, /minDeletesForGuard .* got 2\.5/],
  ])('rejects options %o', (options, message) => {
    expect(() => planRoutes({ nodes: [], routeTables: [], clusterCidrs: [V4], ...options })).toThrow(RangeError);
    expect(() => planRoutes({ nodes: [], routeTables: [], clusterCidrs: [V4], ...options })).toThrow(message);
  });
});

describe('planRoutes: input validation', () => {
  it.each([
    [[], 'at least one cluster CIDR is required'],
    [['10.0.0.0/33'], 'invalid cluster CIDR "10.0.0.0/33"'],
    [[V4, 'nope'], 'invalid cluster CIDR "nope"'],
  ])('cluster CIDRs %j -> InvalidInputError', (clusterCidrs, message) => {
    const call = () => planRoutes({ nodes: [], routeTables: [], clusterCidrs });
    expect(call).toThrow(InvalidInputError);
    expect(call).toThrow(message);
  });
});

describe('planRoutes: deterministic output', () => {
  // A mixed scenario over three tables and both families: every op kind and several warnings.
  const nodes: Node[] = [];
  for (let i = 0; i < 40; i++) {
    nodes.push(node(`node-${String(i).padStart(3, '0')}`, { instance: i + 1, podCidrs: [`10.120.${i}.0/24`, `fd00:0:0:${i.toString(16)}::/64`] }));
  }
  nodes.push(node('dup', { instance: 500, podCidrs: ['10.120.3.0/24'] }));
  nodes.push(node('bad', { instance: 501, podCidrs: ['x', '172.16.0.0/24'] }));
  nodes.push(node('bare', { podCidrs: ['10.120.250.0/24'] }));
  nodes.push(node('vpn', { instance: 502, podCidrs: ['10.120.251.0/24'] }));
  const routesFor = (skew: number) => {
    const out: Parameters<typeof tables>[0]['routes'] = [];
    for (let i = 0; i < 40; i++) {
      const kind = (i + skew) % 5;
      if (kind === 0) continue; // missing -> create
      if (kind === 1) out.push({ to: `10.120.${i}.0/24`, instance: i + 1 });
      if (kind === 2) out.push({ to: `10.120.${i}.0/24`, instance: 900 + i }); // moved
      if (kind === 3) out.push({ to: `10.120.${i}.0/24`, instance: i + 1, blackhole: true });
      if (kind === 4) out.push({ to: `10.120.${i}.0/24`, nat: 'nat-0123456789abcdef0' }); // foreign
      out.push({ to: `fd00:0:0:${i.toString(16)}::/64`, instance: i + 1 });
      out.push({ to: `10.120.${150 + i}.0/24`, instance: 700 + i, blackhole: i % 2 === 0 }); // ownerless
    }
    out.push({ to: '10.120.251.0/24', vgw: 'vgw-0123456789abcdef0' }); // propagated
    out.push({ to: '10.120.252.0/24', vgw: 'vgw-0123456789abcdef0', blackhole: true }); // propagated, never deleted
    return out;
  };
  const specs = [
    { id: 'rtb-0000000000000000c', routes: routesFor(0) },
    { id: 'rtb-0000000000000000a', routes: routesFor(1) },
    { id: 'rtb-0000000000000000b', routes: routesFor(2) },
  ];
  const input = (seed: number) => ({
    nodes: seed === 0 ? nodes : shuffled(nodes, seed),
    routeTables: tables(...(seed === 0 ? specs : shuffled(specs, seed).map((s) => ({ ...s, routes: shuffled(s.routes, seed * 7) })))),
    clusterCidrs: seed % 2 === 0 ? [V4, 'fd00::/48'] : ['fd00::/48', V4],
    minDeletesForGuard: 1000,
  });
  const baseline = planRoutes(input(0));

  it('covers every op kind (so the comparison means something)', () => {
    expect(baseline.create.length).toBeGreaterThan(0);
    expect(new Set(baseline.replace.map((r) => r.reason))).toEqual(new Set(['moved', 'blackhole']));
    expect(new Set(baseline.delete.map((d) => d.reason))).toEqual(new Set(['no-owner', 'blackhole']));
    expect(new Set(baseline.warnings?.map((w) => w.reason))).toEqual(
      new Set(['foreign-target', 'pod-cidr-conflict', 'invalid-pod-cidr', 'outside-cluster-cidrs', 'propagated-route']),
    );
  });

  it.each([1, 2, 3, 4, 5, 6])('shuffled input (seed %i) gives the same plan', (seed) => {
    expect(JSON.stringify(planRoutes(input(seed)))).toBe(JSON.stringify(baseline));
  });

  it('sorts ops by (routeTableId, destinationCidr) as plain strings and nodes by name', () => {
    const byKey = (a: { routeTableId: string; destinationCidr: string }) => `${a.routeTableId}\u0000${a.destinationCidr}`;
    for (const list of [baseline.create, baseline.replace, baseline.delete]) {
      const keys = list.map(byKey);
      expect(keys).toEqual([...keys].sort());
    }
    const names = baseline.nodes.map((n) => n.node);
    expect(names).toEqual([...names].sort());
    expect(names).toHaveLength(44);
  });

  it('emits keys in contract order', () => {
    const small = planRoutes({
      nodes: [node1, node('z', { instance: 9, podCidrs: ['10.120.9.0/24'] })],
      routeTables: tables({
        id: RTB,
        routes: [{ to: '10.120.0.0/24', instance: 2 }, { to: '10.120.5.0/24', instance: 5 }, { to: '10.120.9.0/24', nat: 'nat-0123456789abcdef0' }],
      }),
      clusterCidrs: [V4],
      maxDeleteShare: 0.4,
      minDeletesForGuard: 1,
    });
    const i1 = inst(1);
    expect(JSON.stringify(small)).toBe(
      '{"create":[],' +
        `"replace":[{"routeTableId":"${RTB}","destinationCidr":"10.120.0.0/24","node":"node-1","instanceId":"${i1}","reason":"moved","expect":{"instanceId":"${inst(2)}"}}],` +
        `"delete":[{"routeTableId":"${RTB}","destinationCidr":"10.120.5.0/24","reason":"no-owner","expect":{"instanceId":"${inst(5)}","blackhole":false}}],` +
        '"nodes":[{"node":"node-1","networkUnavailable":"pending","patch":false},{"node":"z","networkUnavailable":true,"patch":true}],' +
        '"unsafe":"plan deletes 1 of 2 live routes in the cluster CIDRs (50%, more than the 40% allowed); refusing to delete them",' +
        `"warnings":[{"reason":"foreign-target","node":"z","routeTableId":"${RTB}","destinationCidr":"10.120.9.0/24","detail":"${RTB} routes 10.120.9.0/24 to a gateway, not to node z; podroute does not replace it"}]}`,
    );
  });
});
