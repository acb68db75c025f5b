/**
 * The route-table headroom gauge (lib/routes/route-table-headroom.ts): non-propagated routes of
 * the fuller family against the routes-per-table quota, every owner's routes counted.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { fullestTable, routeTableUsage } from '../../lib/routes/route-table-headroom.ts';
import { parseRouteTables } from '../../lib/routes/index.ts';
import type { RouteTable } from '../../lib/routes/index.ts';

type RawRoute = Record<string, string>;
const v4 = (n: number, extra: RawRoute = {}): RawRoute[] =>
  Array.from({ length: n }, (_, i) => ({ DestinationCidrBlock: `10.${Math.floor(i / 256)}.${i % 256}.0/24`, InstanceId: 'i-0123456789abcdef0', State: 'active', Origin: 'CreateRoute', ...extra }));
const v6 = (n: number): RawRoute[] =>
  Array.from({ length: n }, (_, i) => ({ DestinationIpv6CidrBlock: `fd00:10:244:${i.toString(16)}::/64`, InstanceId: 'i-0123456789abcdef0', State: 'active', Origin: 'CreateRoute' }));
const local = { DestinationCidrBlock: '172.31.0.0/16', GatewayId: 'local', State: 'active', Origin: 'CreateRouteTable' };
const nat = { DestinationCidrBlock: '0.0.0.0/0', NatGatewayId: 'nat-0123456789abcdef0', State: 'active', Origin: 'CreateRoute' };
const prefixList = { DestinationPrefixListId: 'pl-0123456789abcdef0', GatewayId: 'vpce-0123456789abcdef0', State: 'active', Origin: 'CreateRoute' };

const table = (routes: RawRoute[], id = 'rtb-0000000000000000a'): RouteTable => {
  const [parsed] = parseRouteTables({ RouteTables: [{ RouteTableId: id, Routes: routes }] });
  if (!parsed) throw new Error('no table parsed');
  return parsed;
};

describe('routeTableUsage', () => {
  it.each([
    ['an empty table', [], 500, 0, 0],
    ['the local route counts', [local], 500, 1, 0.2],
    ['every owner: local, a NAT gateway and 398 instance routes', [local, nat, ...v4(398)], 500, 400, 80],
    ['at the quota', v4(50), 50, 50, 100],
    ['over a lowered quota', v4(60), 50, 60, 120],
    ['IPv4 and IPv6 are counted apart: the fuller family', [...v4(10), ...v6(30)], 100, 30, 30],
    ['VGW-propagated routes have their own quota', [...v4(5), ...v4(20, { Origin: 'EnableVgwRoutePropagation', GatewayId: 'vgw-0123456789abcdef0' })], 100, 5, 5],
    ['Route Server routes (advertised or filtered) have their own quota', [...v4(5), ...v4(3, { Origin: 'Advertisement' }), ...v4(2, { State: 'filtered' })], 100, 5, 5],
    ['a prefix-list route counts once in each family', [prefixList, ...v6(2)], 100, 3, 3],
    ['one decimal', v4(1), 3, 1, 33.3],
  ])('%s', (_label, routes, quota, expectedRoutes, expectedPercent) => {
    expect(routeTableUsage(table(routes), quota)).toEqual({ routeTableId: 'rtb-0000000000000000a', routes: expectedRoutes, percent: expectedPercent });
  });

  it.each([[0], [-1], [1001], [1.5], [Number.NaN]])('refuses the quota %s', (quota) => {
    expect(() => routeTableUsage(table(v4(1)), quota)).toThrow(InvalidInputError);
    expect(() => routeTableUsage(table(v4(1)), quota)).toThrow(/route quota must be a whole number from 1 to 1000/);
  });
});

describe('fullestTable', () => {
  it.each([
    ['no tables', [], null],
    ['the fullest of several', [table(v4(3), 'rtb-0000000000000000a'), table(v4(7), 'rtb-0000000000000000b'), table(v4(5), 'rtb-0000000000000000c')], { routeTableId: 'rtb-0000000000000000b', routes: 7, percent: 7 }],
    ['the first of equals', [table(v4(4), 'rtb-0000000000000000a'), table(v4(4), 'rtb-0000000000000000b')], { routeTableId: 'rtb-0000000000000000a', routes: 4, percent: 4 }],
  ])('%s', (_label, tables, expected) => {
    expect(fullestTable(tables, 100)).toEqual(expected);
  });
});
