/**
 * The prefixes benchmark's arithmetic: the calls each mode needs per node and the lower bound of the
 * bucket that limits a run (numbers from infra/local/ec2/buckets.ts: 50 tokens, 5 a second).
 */
import { describe, expect, it } from 'vitest';
import { callsNeeded, lowerBound } from '../../bench/prefixes.ts';

describe('prefixes benchmark bounds', () => {
  it.each([
    // mode, route tables, dual-stack, calls per node, limiting action, bound for 1,000 nodes
    ['prefixes', 1, false, { AssignPrivateIpAddresses: 1 }, 'AssignPrivateIpAddresses', 190_000],
    ['prefixes', 3, false, { AssignPrivateIpAddresses: 1 }, 'AssignPrivateIpAddresses', 190_000],
    // Two actions, two buckets, drained in parallel: no slower than one.
    ['prefixes', 3, true, { AssignPrivateIpAddresses: 1, AssignIpv6Addresses: 1 }, 'AssignPrivateIpAddresses', 190_000],
    ['routes', 1, false, { CreateRoute: 1 }, 'CreateRoute', 190_000],
    ['routes', 3, false, { CreateRoute: 3 }, 'CreateRoute', 590_000],
    ['routes', 3, true, { CreateRoute: 6 }, 'CreateRoute', 1_190_000],
  ] as const)('%s mode, %i table(s), dual-stack %s', (mode, routeTables, dualStack, perNode, action, ms) => {
    const setup = { mode, routeTables, dualStack };
    expect(callsNeeded(setup)).toEqual(perNode);
    const bound = lowerBound(setup, 1000);
    expect(bound.action).toBe(action);
    expect(bound.ms).toBe(ms);
  });

  it('is 0 while the burst covers every call', () => {
    expect(lowerBound({ mode: 'prefixes', routeTables: 1, dualStack: false }, 50).ms).toBe(0);
  });
});
