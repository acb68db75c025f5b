import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { isResponsibleForRoute } from '../../lib/routes/index.ts';

describe('isResponsibleForRoute', () => {
  // Upstream TestIsResponsibleForRoute, as (cluster CIDR, route destination, responsible).
  const upstream: Array<[string, string, boolean]> = [
    // inside the cluster CIDR
    ['10.244.0.0/16', '10.244.0.0/24', true],
    ['10.244.0.0/16', '10.244.10.0/24', true],
    ['10.244.0.0/16', '10.244.255.0/24', true],
    ['10.244.0.0/14', '10.244.0.0/24', true],
    ['10.244.0.0/14', '10.247.255.0/24', true],
    ['a00:100::/10', 'a00:100::/24', true],
    // outside it
    ['10.244.0.0/16', '10.224.0.0/24', false],
    ['10.244.0.0/16', '10.0.10.0/24', false],
    ['10.244.0.0/16', '10.255.255.0/24', false],
    ['10.244.0.0/14', '10.248.0.0/24', false],
    ['10.244.0.0/14', '10.243.255.0/24', false],
    ['a00:100::/10', 'b00:100::/24', false],
  ];
  it.each(upstream)('upstream: cluster %s, route %s -> %s', (cluster, route, want) => {
    expect(isResponsibleForRoute(route, [cluster])).toBe(want);
  });

  const ours: Array<[string, string[], string, boolean]> = [
    ['first address inside, last outside', ['10.244.0.0/16'], '10.244.0.0/15', true],
    ['last address inside, first outside', ['10.245.0.0/16'], '10.244.0.0/15', true],
    ['a supernet of the cluster CIDR (neither end inside) is not ours, as upstream', ['10.244.0.0/16'], '10.0.0.0/8', false],
    ['the cluster CIDR itself', ['10.244.0.0/16'], '10.244.0.0/16', true],
    ['host bits in the destination', ['10.244.0.0/16'], '10.244.3.77/24', true],
    ['host bits in the cluster CIDR', ['10.244.9.9/16'], '10.244.3.0/24', true],
    ['second of several cluster CIDRs', ['10.244.0.0/16', 'fd00::/48'], 'fd00:0:0:12::/64', true],
    ['v4 route, v6-only cluster', ['fd00::/48'], '10.244.0.0/24', false],
    ['v6 route, v4-only cluster', ['10.244.0.0/16'], '::/0', false],
    ['IPv4-mapped IPv6 is not IPv4', ['10.244.0.0/16'], '::ffff:10.244.0.0/120', false],
    ['a default route', ['10.244.0.0/16'], '0.0.0.0/0', false],
    ['a host route inside', ['10.244.0.0/16'], '10.244.1.1/32', true],
    ['unparseable destination', ['10.244.0.0/16'], '10.244.0.0', false],
    ['empty destination', ['10.244.0.0/16'], '', false],
    ['prefix list id', ['10.244.0.0/16'], 'pl-0123456789abcdef0', false],
  ];
  it.each(ours)('%s', (_name, clusters, route, want) => {
    expect(isResponsibleForRoute(route, clusters)).toBe(want);
  });

  it('rejects a bad cluster CIDR with InvalidInputError', () => {
    expect(() => isResponsibleForRoute('10.0.0.0/24', ['10.0.0.0/8', '10.0.0/8'])).toThrow(InvalidInputError);
    expect(() => isResponsibleForRoute('10.0.0.0/24', [])).toThrow('at least one cluster CIDR is required');
  });
});
