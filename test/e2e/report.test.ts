import { describe, expect, it } from 'vitest';
import { countState, isConverged, percentile, podCidrsOutsideSubnet, liveNodes } from '../../infra/local/sandbox/report.ts';
import type { NodeRecord, ObservedInterface, ObservedRoute, ObservedState } from '../../infra/local/sandbox/report.ts';
import { leaseOfItem } from '../../infra/local/sandbox/lease-table.ts';
import { watchLiveRouteRemovals } from '../../infra/local/sandbox/observe.ts';
import { Ec2State } from '../../infra/local/ec2/index.ts';

const I = { a: 'i-0000000000000000a', b: 'i-0000000000000000b', c: 'i-0000000000000000c', x: 'i-0000000000000000f' };
const ENI = { a: 'eni-0000000000000000a', b: 'eni-0000000000000000b', c: 'eni-0000000000000000c', x: 'eni-0000000000000000f' };

const node = (name: string, instance: string, cidrs: string[], networkUnavailable?: 'True' | 'False') => ({
  metadata: { name },
  spec: { providerID: `aws:///us-east-1a/${instance}`, podCIDRs: cidrs },
  status: { conditions: networkUnavailable ? [{ type: 'NetworkUnavailable', status: networkUnavailable }] : [] },
});
const eni = (id: string, prefixes: string[] = []): ObservedInterface => ({ networkInterfaceId: id, prefixes });
/** A route to an attached interface as real EC2 describes it: both ids. */
const toNode = (destination: string, key: keyof typeof I): ObservedRoute => ({ destinationCidrBlock: destination, networkInterfaceId: ENI[key], instanceId: I[key], state: 'active' });

const interfaces = new Map([
  [I.a, eni(ENI.a)],
  [I.b, eni(ENI.b)],
  [I.c, eni(ENI.c)],
  [I.x, eni(ENI.x)],
]);

const base: ObservedState = {
  mode: 'routes',
  clusterCidrs: ['10.244.0.0/16'],
  nodes: [node('a', I.a, ['10.244.0.0/24'], 'False'), node('b', I.b, ['10.244.1.0/24'], 'True')],
  tables: [
    {
      id: 'rtb-1',
      routes: [
        { destinationCidrBlock: '10.0.0.0/16', gatewayId: 'local', state: 'active' },
        { destinationCidrBlock: '0.0.0.0/0', gatewayId: 'igw-1', state: 'active' },
        toNode('10.244.0.0/24', 'a'),
        toNode('10.244.1.0/24', 'a'),
        { destinationCidrBlock: '10.244.9.0/24', networkInterfaceId: 'eni-gone', state: 'blackhole' },
      ],
    },
  ],
  interfaces,
  leases: [
    { cidr: '10.244.0.0/24', owner: 'a' },
    { cidr: '10.244.1.0/24', owner: 'b' },
    { cidr: '10.244.7.0/24', owner: 'gone' },
    { cidr: '10.244.8.0/24', owner: null },
  ],
};

describe('sandbox report numbers', () => {
  it('counts expected, programmed and wrong routes, readiness and leaks from state', () => {
    expect(countState(base)).toEqual({
      nodes: 2,
      nodesReady: 1,
      hostileNodes: 0,
      honestNodesNotReady: 1,
      readyNodesTainted: 0,
      liveRoutesRemoved: 0,
      routesExpected: 2,
      // b's CIDR points at a's instance: not programmed, and wrong (a holds no lease of it); the blackhole is wrong too.
      routesProgrammed: 1,
      wrongRoutes: 2,
      routesToNonLeaseholder: 1,
      duplicateCidrs: 0,
      leakedCidrs: 2,
      // Routes mode: pod CIDRs lie outside the VPC by design.
      podCidrsOutsideSubnet: null,
    });
  });

  it('counts overlapping pod CIDRs of two live nodes as duplicates', () => {
    const state = { ...base, nodes: [...base.nodes, node('c', I.c, ['10.244.0.0/23'], 'False')] };
    expect(countState(state).duplicateCidrs).toBe(2);
  });

  it('counts delegated prefixes in prefixes mode', () => {
    const state: ObservedState = {
      ...base,
      mode: 'prefixes',
      tables: [],
      interfaces: new Map([
        [I.a, eni(ENI.a, ['10.244.0.0/24'])],
        [I.b, eni(ENI.b, ['10.244.5.0/24'])],
      ]),
    };
    expect(countState(state)).toMatchObject({ routesExpected: 2, routesProgrammed: 1, wrongRoutes: 1, routesToNonLeaseholder: 1 });
  });

  describe('podCidrsOutsideSubnet', () => {
    const subnets: Array<[string, ObservedInterface]> = [
      [I.a, { ...eni(ENI.a), subnet: { cidrBlock: '10.244.0.0/20', ipv6CidrBlock: '2600:1f18:1234:5600::/64' } }],
      [I.b, { ...eni(ENI.b), subnet: { cidrBlock: '10.244.16.0/20', ipv6CidrBlock: '2600:1f18:1234:5601::/64' } }],
      [I.c, { ...eni(ENI.c), subnet: { cidrBlock: '10.244.32.0/20' } }],
    ];
    const dual = ['10.244.0.0/16', '2600:1f18:1234:5600::/56'];
    it.each([
      ['inside their subnets', [['a', I.a, ['10.244.8.0/28', '2600:1f18:1234:5600:8000::/80']], ['b', I.b, ['10.244.24.16/28']]], 0],
      ['an IPv4 prefix of the sibling subnet', [['a', I.a, ['10.244.24.0/28']]], 1],
      ['an IPv6 prefix of the sibling subnet', [['b', I.b, ['10.244.24.0/28', '2600:1f18:1234:5600:1::/80']]], 1],
      ['an IPv6 prefix in a subnet without IPv6', [['c', I.c, ['10.244.40.0/28', '2600:1f18:1234:5600:1::/80']]], 1],
      ['one node counted once for two CIDRs outside', [['a', I.a, ['10.244.24.0/28', '2600:1f18:1234:5601::/80']]], 1],
      ['a node without a pod CIDR', [['a', I.a, []]], 0],
      ['a node whose instance is not running', [['d', 'i-0000000000000000d', ['10.244.24.0/28']]], 0],
    ])('%s', (_what, specs, want) => {
      const nodes = liveNodes(
        (specs as Array<[string, string, string[]]>).map(([name, instance, cidrs]) => node(name, instance, cidrs, 'False')),
        dual,
      );
      expect(podCidrsOutsideSubnet(nodes, new Map(subnets))).toBe(want);
    });

    it('is counted in prefixes mode from the instances subnets, and a converged report needs it 0', () => {
      const state: ObservedState = {
        ...base,
        mode: 'prefixes',
        clusterCidrs: dual,
        tables: [],
        nodes: [node('a', I.a, ['10.244.0.16/28'], 'False'), node('b', I.b, ['10.244.0.32/28'], 'False')],
        interfaces: new Map([
          [I.a, { ...eni(ENI.a, ['10.244.0.16/28']), subnet: { cidrBlock: '10.244.0.0/20' } }],
          [I.b, { ...eni(ENI.b, ['10.244.0.32/28']), subnet: { cidrBlock: '10.244.0.0/20' } }],
        ]),
        leases: [
          { cidr: '10.244.0.16/28', owner: 'a' },
          { cidr: '10.244.0.32/28', owner: 'b' },
        ],
      };
      const counts = countState({ ...state, interfaces: new Map([...state.interfaces].map(([k, v]) => [k, k === I.b ? { ...v, subnet: { cidrBlock: '10.244.16.0/20' } } : v])) });
      expect(counts).toMatchObject({ routesExpected: 2, routesProgrammed: 2, wrongRoutes: 0, podCidrsOutsideSubnet: 1 });
      expect(isConverged({ ...counts, dlqMessages: 0 })).toBe(false);
      expect(isConverged({ ...counts, podCidrsOutsideSubnet: 0, dlqMessages: 0 })).toBe(true);
    });
  });

  it.each([
    [[], 50, null],
    [[7], 99, 7],
    [[5, 1, 3, 2, 4], 50, 3],
    [[5, 1, 3, 2, 4], 99, 5],
    [[10, 20, 30, 40], 50, 20],
  ])('percentile(%j, %i) = %j', (values, p, want) => {
    expect(percentile(values, p)).toBe(want);
  });
});

/**
 * The judge against states where podroute's own rules and the truth part ways: each would pass
 * a judge that used podroute's ownership test (a node's pod CIDR routed to the instance its
 * providerID names, by upstream's first-or-last-address responsibility), and each is caught.
 */
describe('the judge is independent of podroute’s rules', () => {
  const honest = (leases: ObservedState['leases'], extra: { nodes?: unknown[]; record?: Map<string, NodeRecord>; routes?: ObservedRoute[] } = {}): ObservedState => ({
    mode: 'routes',
    clusterCidrs: ['10.244.0.0/16'],
    nodes: [node('a', I.a, ['10.244.0.0/24'], 'False'), node('b', I.b, ['10.244.1.0/24'], 'False'), ...(extra.nodes ?? [])],
    record: new Map([
      ['a', { instanceId: I.a }],
      ['b', { instanceId: I.b }],
      ...(extra.record ?? []),
    ]),
    tables: [{ id: 'rtb-1', routes: [toNode('10.244.0.0/24', 'a'), toNode('10.244.1.0/24', 'b'), ...(extra.routes ?? [])] }],
    interfaces,
    leases: [{ cidr: '10.244.0.0/24', owner: 'a' }, { cidr: '10.244.1.0/24', owner: 'b' }, ...leases],
  });
  const judged = (state: ObservedState) => {
    const c = countState(state);
    return { wrong: c.wrongRoutes, nonLeaseholder: c.routesToNonLeaseholder, duplicates: c.duplicateCidrs, programmed: `${c.routesProgrammed}/${c.routesExpected}`, hostile: c.hostileNodes };
  };

  it('a clean cluster: nothing to report', () => {
    expect(judged(honest([]))).toEqual({ wrong: 0, nonLeaseholder: 0, duplicates: 0, programmed: '2/2', hostile: 0 });
  });

  it.each<[string, ObservedState, ReturnType<typeof judged>]>([
    [
      // podroute's rule: x's spec holds 10.244.0.0/24 and the route reaches x's instance. Truth: a holds the lease.
      'a node registered with another node’s exact pod CIDR gets its route',
      honest([], {
        nodes: [node('x', I.x, ['10.244.0.0/24'], 'False')],
        record: new Map([['x', { instanceId: I.x, hostile: true, planted: ['10.244.0.0/24'] }]]),
      }),
      { wrong: 0, nonLeaseholder: 0, duplicates: 0, programmed: '2/2', hostile: 1 },
    ],
    [
      'the same, and the route re-pointed to it',
      { ...honest([], { nodes: [node('x', I.x, ['10.244.0.0/24'], 'False')], record: new Map([['x', { instanceId: I.x, hostile: true, planted: ['10.244.0.0/24'] }]]) }), tables: [{ id: 'rtb-1', routes: [toNode('10.244.0.0/24', 'x'), toNode('10.244.1.0/24', 'b')] }] },
      { wrong: 1, nonLeaseholder: 1, duplicates: 0, programmed: '1/2', hostile: 1 },
    ],
    [
      // Without the sandbox's record the claim looks like x's own pod CIDR; the lease table still says a's.
      'a node whose spec claims a CIDR leased to another, not known to the sandbox',
      { ...honest([], { nodes: [node('x', I.x, ['10.244.0.0/24'], 'False')] }), tables: [{ id: 'rtb-1', routes: [toNode('10.244.0.0/24', 'x'), toNode('10.244.1.0/24', 'b')] }] },
      // Its spec makes the route look right (wrong 0); the lease table and the overlap say otherwise.
      { wrong: 0, nonLeaseholder: 1, duplicates: 1, programmed: '2/3', hostile: 0 },
    ],
    [
      'a more specific /25 inside a’s block routed to another node',
      honest([], {
        nodes: [node('x', I.x, ['10.244.0.0/25'], 'True')],
        record: new Map([['x', { instanceId: I.x, hostile: true, planted: ['10.244.0.0/25'] }]]),
        routes: [toNode('10.244.0.0/25', 'x')],
      }),
      { wrong: 1, nonLeaseholder: 1, duplicates: 0, programmed: '2/2', hostile: 1 },
    ],
    [
      // podroute's rule reads the instance from the providerID: x names b's instance, so the route to b "is x's".
      'a node naming another node’s instance in its providerID, routed there',
      honest([{ cidr: '10.244.2.0/24', owner: 'x' }], {
        nodes: [node('x', I.b, ['10.244.2.0/24'], 'False')],
        record: new Map([['x', { instanceId: I.x, hostile: true }]]),
        routes: [toNode('10.244.2.0/24', 'b')],
      }),
      { wrong: 1, nonLeaseholder: 1, duplicates: 0, programmed: '2/2', hostile: 1 },
    ],
    [
      // Upstream's responsibility test looks at the first and last address only: 10.0.0.0/8 is "not ours".
      'a super-range of the cluster CIDR pointed at a node',
      honest([], { routes: [{ destinationCidrBlock: '10.0.0.0/8', networkInterfaceId: ENI.a, instanceId: I.a, state: 'active' }] }),
      { wrong: 1, nonLeaseholder: 1, duplicates: 0, programmed: '2/2', hostile: 0 },
    ],
    [
      // A judge matching on InstanceId alone calls these wrong; the node's primary interface is the truth.
      'routes described with the node’s primary interface only',
      { ...honest([]), tables: [{ id: 'rtb-1', routes: [{ destinationCidrBlock: '10.244.0.0/24', networkInterfaceId: ENI.a, state: 'active' }, { destinationCidrBlock: '10.244.1.0/24', instanceId: I.b, state: 'active' }] }] },
      { wrong: 0, nonLeaseholder: 0, duplicates: 0, programmed: '2/2', hostile: 0 },
    ],
    [
      'a route to a node’s secondary interface (same instance id)',
      { ...honest([]), tables: [{ id: 'rtb-1', routes: [{ destinationCidrBlock: '10.244.0.0/24', networkInterfaceId: 'eni-0000000000000000e', instanceId: I.a, state: 'active' }, toNode('10.244.1.0/24', 'b')] }] },
      { wrong: 1, nonLeaseholder: 0, duplicates: 0, programmed: '1/2', hostile: 0 },
    ],
    [
      'a route to a node whose lease was released (the node still lists the CIDR)',
      { ...honest([]), leases: [{ cidr: '10.244.0.0/24', owner: 'a' }] },
      { wrong: 0, nonLeaseholder: 1, duplicates: 0, programmed: '2/2', hostile: 0 },
    ],
  ])('%s', (_what, state, want) => {
    expect(judged(state)).toEqual(want);
  });

  it('counts the blocks leased under a hostile claim of the whole cluster CIDR as leaked', () => {
    const state = honest([{ cidr: '10.244.2.0/24', owner: 'x' }, { cidr: '10.244.3.0/24', owner: 'x' }], {
      nodes: [node('x', I.x, ['10.244.0.0/16'], 'True')],
      record: new Map([['x', { instanceId: I.x, hostile: true, planted: ['10.244.0.0/16'] }]]),
    });
    expect(countState(state).leakedCidrs).toBe(2);
  });

  it('counts a lease of a node that is gone as leaked, and a hostile node may stay unavailable', () => {
    const state = honest([{ cidr: '10.244.3.0/24', owner: 'forged-01' }], {
      nodes: [node('x', I.x, ['10.244.0.0/16'], 'True')],
      record: new Map([['x', { instanceId: I.x, hostile: true, planted: ['10.244.0.0/16'] }]]),
    });
    const counts = countState(state);
    expect(counts).toMatchObject({ leakedCidrs: 1, hostileNodes: 1, honestNodesNotReady: 0, nodesReady: 2, nodes: 3 });
    expect(isConverged({ ...counts, dlqMessages: 0 })).toBe(false);
    expect(isConverged({ ...counts, leakedCidrs: 0, dlqMessages: 0 })).toBe(true);
  });
});

describe('leases read from the CIDR table’s items', () => {
  const S = (s: string) => ({ S: s });
  it.each([
    ['a block with an owner', { pk: S('set#100.64.0.0/10@24'), sk: S('b#0000000005'), owner: S('node-a') }, { cidr: '100.64.5.0/24', owner: 'node-a' }],
    ['a block without one', { pk: S('set#100.64.0.0/10@24'), sk: S('b#0000000000') }, { cidr: '100.64.0.0/24', owner: null }],
    ['an IPv6 block', { pk: S('set#fd00:10:244::/56@64'), sk: S('b#0000000002'), owner: S('n') }, { cidr: 'fd00:10:244:2::/64', owner: 'n' }],
    ['a prefix range’s block', { pk: S('set#10.0.128.0/17@28'), sk: S('b#0000000003'), owner: S('n') }, { cidr: '10.0.128.48/28', owner: 'n' }],
    ['an owner record', { pk: S('set#100.64.0.0/10@24'), sk: S('o#node-a'), index: { N: '5' } }, null],
    ['the cursor', { pk: S('set#100.64.0.0/10@24'), sk: S('cursor'), pos: { N: '9' } }, null],
    ['the set registry', { pk: S('registry'), sk: S('cidr-sets') }, null],
    ['a block index outside the range', { pk: S('set#10.0.0.0/24@28'), sk: S('b#0000000016') }, null],
  ])('%s', (_what, item, want) => {
    expect(leaseOfItem(item)).toEqual(want);
  });
});

describe('routes taken from live honest nodes (watchLiveRouteRemovals over the EC2 emulator)', () => {
  it.each([
    ['a live honest node’s route deleted', 'delete', 'honest', true, 1],
    ['a live honest node’s route replaced to another instance', 'replace', 'honest', true, 1],
    ['a hostile node’s route deleted', 'delete', 'hostile', true, 0],
    ['the route of a node no longer stored', 'delete', 'honest', false, 0],
    ['a blackhole deleted', 'blackhole', 'honest', true, 0],
  ] as const)('%s: counted %i', (_what, action, kind, stored, want) => {
    const ec2 = new Ec2State(50, () => 0);
    const table = ec2.addRouteTable();
    const a = ec2.addInstance();
    const b = ec2.addInstance();
    ec2.addRoute({ routeTableId: table.id, destinationCidr: '100.64.0.0/24', instanceId: a.id });
    const count = watchLiveRouteRemovals(ec2, {
      nodeOfInstance: (id) => (id === a.id ? { name: 'a', hostile: kind === 'hostile' } : undefined),
      getNode: (name) => (stored && name === 'a' ? node('a', a.id, ['100.64.0.0/24'], 'False') : undefined),
    });
    if (action === 'replace') ec2.replaceRoute({ routeTableId: table.id, destinationCidr: '100.64.0.0/24', instanceId: b.id });
    else {
      if (action === 'blackhole') ec2.terminateInstance(a.id);
      ec2.deleteRoute({ routeTableId: table.id, destinationCidr: '100.64.0.0/24' });
    }
    expect(count()).toBe(want);
  });
});
