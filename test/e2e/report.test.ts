import { describe, expect, it } from 'vitest';
import { countState, isConverged, percentile, podCidrsOutsideSubnet, liveNodes } from '../../infra/local/sandbox/report.ts';
import type { ObservedState } from '../../infra/local/sandbox/report.ts';

const node = (name: string, instance: string, cidrs: string[], networkUnavailable?: 'True' | 'False') => ({
  metadata: { name },
  spec: { providerID: `aws:///us-east-1a/${instance}`, podCIDRs: cidrs },
  status: { conditions: networkUnavailable ? [{ type: 'NetworkUnavailable', status: networkUnavailable }] : [] },
});

const base: ObservedState = {
  mode: 'routes',
  clusterCidrs: ['10.244.0.0/16'],
  nodes: [node('a', 'i-0000000000000000a', ['10.244.0.0/24'], 'False'), node('b', 'i-0000000000000000b', ['10.244.1.0/24'], 'True')],
  tables: [
    {
      id: 'rtb-1',
      routes: [
        { destinationCidrBlock: '10.0.0.0/16', gatewayId: 'local', state: 'active' },
        { destinationCidrBlock: '0.0.0.0/0', gatewayId: 'igw-1', state: 'active' },
        { destinationCidrBlock: '10.244.0.0/24', instanceId: 'i-0000000000000000a', state: 'active' },
        { destinationCidrBlock: '10.244.1.0/24', instanceId: 'i-0000000000000000a', state: 'active' },
        { destinationCidrBlock: '10.244.9.0/24', networkInterfaceId: 'eni-gone', state: 'blackhole' },
      ],
    },
  ],
  instancePrefixes: new Map(),
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
      routesExpected: 2,
      // b's CIDR points at a's instance: not programmed, and wrong; the blackhole is wrong too.
      routesProgrammed: 1,
      wrongRoutes: 2,
      duplicateCidrs: 0,
      leakedCidrs: 2,
      // Routes mode: pod CIDRs lie outside the VPC by design.
      podCidrsOutsideSubnet: null,
    });
  });

  it('counts overlapping pod CIDRs of two live nodes as duplicates', () => {
    const state = { ...base, nodes: [...base.nodes, node('c', 'i-0000000000000000c', ['10.244.0.0/23'], 'False')] };
    expect(countState(state).duplicateCidrs).toBe(2);
  });

  it('counts delegated prefixes in prefixes mode', () => {
    const state: ObservedState = {
      ...base,
      mode: 'prefixes',
      tables: [],
      instancePrefixes: new Map([
        ['i-0000000000000000a', ['10.244.0.0/24']],
        ['i-0000000000000000b', ['10.244.5.0/24']],
      ]),
    };
    expect(countState(state)).toMatchObject({ routesExpected: 2, routesProgrammed: 1, wrongRoutes: 1 });
  });

  describe('podCidrsOutsideSubnet', () => {
    const subnets = new Map([
      ['i-0000000000000000a', { cidrBlock: '10.244.0.0/20', ipv6CidrBlock: '2600:1f18:1234:5600::/64' }],
      ['i-0000000000000000b', { cidrBlock: '10.244.16.0/20', ipv6CidrBlock: '2600:1f18:1234:5601::/64' }],
      ['i-0000000000000000c', { cidrBlock: '10.244.32.0/20' }],
    ]);
    const dual = ['10.244.0.0/16', '2600:1f18:1234:5600::/56'];
    it.each([
      ['inside their subnets', [['a', 'i-0000000000000000a', ['10.244.8.0/28', '2600:1f18:1234:5600:8000::/80']], ['b', 'i-0000000000000000b', ['10.244.24.16/28']]], 0],
      ['an IPv4 prefix of the sibling subnet', [['a', 'i-0000000000000000a', ['10.244.24.0/28']]], 1],
      ['an IPv6 prefix of the sibling subnet', [['b', 'i-0000000000000000b', ['10.244.24.0/28', '2600:1f18:1234:5600:1::/80']]], 1],
      ['an IPv6 prefix in a subnet without IPv6', [['c', 'i-0000000000000000c', ['10.244.40.0/28', '2600:1f18:1234:5600:1::/80']]], 1],
      ['one node counted once for two CIDRs outside', [['a', 'i-0000000000000000a', ['10.244.24.0/28', '2600:1f18:1234:5601::/80']]], 1],
      ['a node without a pod CIDR', [['a', 'i-0000000000000000a', []]], 0],
      ['a node whose instance is not running', [['d', 'i-0000000000000000d', ['10.244.24.0/28']]], 0],
    ])('%s', (_what, specs, want) => {
      const nodes = liveNodes(
        (specs as Array<[string, string, string[]]>).map(([name, instance, cidrs]) => node(name, instance, cidrs, 'False')),
        dual,
      );
      expect(podCidrsOutsideSubnet(nodes, subnets)).toBe(want);
    });

    it('is counted in prefixes mode from the instances subnets, and a converged report needs it 0', () => {
      const state: ObservedState = {
        ...base,
        mode: 'prefixes',
        clusterCidrs: dual,
        tables: [],
        nodes: [node('a', 'i-0000000000000000a', ['10.244.0.16/28'], 'False'), node('b', 'i-0000000000000000b', ['10.244.0.32/28'], 'False')],
        instancePrefixes: new Map([
          ['i-0000000000000000a', ['10.244.0.16/28']],
          ['i-0000000000000000b', ['10.244.0.32/28']],
        ]),
        instanceSubnets: subnets,
        leases: [],
      };
      const counts = countState(state);
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
