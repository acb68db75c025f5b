/**
 * decideLeaseReleases as a pure function: which leases reclaim and the node-left check may free,
 * and why the others stay.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../lib/ipam/index.ts';
import type { Node } from '../../lib/nodes/node.ts';
import type { Presence } from '../../lib/usecases/absence.ts';
import { decideLeaseReleases } from '../../lib/usecases/lease-release.ts';
import type { LeaseReleaseInput } from '../../lib/usecases/lease-release.ts';

const NOW = 10_000_000;
const GRACE_MS = 60_000;
const OLD = NOW - GRACE_MS - 1;

/** `since` null: a store that stamps no age. */
const lease = (cidr: string, owner: string | null, since: number | null = OLD): Lease =>
  since === null ? { cidr, owner } : { cidr, owner, since };
const listedNode = (name: string, podCIDR?: string): Node =>
  podCIDR === undefined ? { metadata: { name } } : { metadata: { name }, spec: { podCIDR, podCIDRs: [podCIDR] } };

function input(overrides: Partial<LeaseReleaseInput>): LeaseReleaseInput {
  return { leases: [], listed: [], presence: new Map(), now: NOW, graceMs: GRACE_MS, delegated: [], ...overrides };
}

type Verdict = string;
const verdicts = (i: LeaseReleaseInput): Verdict[] =>
  decideLeaseReleases(i).map((v) => `${v.lease.cidr} ${v.lease.owner} ${v.release ? 'release' : `keep:${v.why}`}`);

describe('decideLeaseReleases', () => {
  it.each<[string, Lease[], Node[], Array<[string, Presence]>, string[], Verdict[]]>([
    ['a 404 past the grace frees the lease', [lease('10.0.1.0/24', 'gone')], [], [['gone', 'absent']], [],
      ['10.0.1.0/24 gone release']],
    ['exactly at the grace is still young', [lease('10.0.1.0/24', 'gone', NOW - GRACE_MS)], [], [['gone', 'absent']], [],
      ['10.0.1.0/24 gone keep:young']],
    ['a lease of unknown age is never freed', [lease('10.0.1.0/24', 'gone', null)], [], [['gone', 'absent']], [],
      ['10.0.1.0/24 gone keep:young']],
    ['a listed owner keeps its lease and gets no verdict', [lease('10.0.1.0/24', 'a')], [listedNode('a')], [['a', 'absent']], [], []],
    ['an ownerless block gets no verdict', [lease('10.0.1.0/24', null)], [], [], [], []],
    ['the listing lacks it but a keyed read found it', [lease('10.0.1.0/24', 'b')], [], [['b', 'present']], [],
      ['10.0.1.0/24 b keep:node-exists']],
    ['the keyed read failed', [lease('10.0.1.0/24', 'b')], [], [['b', 'unreadable']], [], ['10.0.1.0/24 b keep:node-unreadable']],
    ['no keyed read is no proof', [lease('10.0.1.0/24', 'b')], [], [], [], ['10.0.1.0/24 b keep:node-unreadable']],
    ['the grace is judged before the read', [lease('10.0.1.0/24', 'b', NOW)], [], [['b', 'present']], [], ['10.0.1.0/24 b keep:young']],
    ['a prefix still delegated to an interface, carried by no listed node, goes (the data plane takes it off first)', [lease('10.0.1.0/28', 'gone')], [], [['gone', 'absent']], ['10.0.1.0/28'],
      ['10.0.1.0/28 gone release']],
    ['a prefix still delegated and carried by a listed node stays (a lease table that disagrees with the cluster)', [lease('10.0.1.0/28', 'gone')], [listedNode('c', '10.0.1.0/28')],
      [['gone', 'absent']], ['10.0.1.0/28'], ['10.0.1.0/28 gone keep:still-delegated']],
    ['a delegated prefix elsewhere keeps nothing', [lease('10.0.1.0/28', 'gone')], [], [['gone', 'absent']], ['10.0.2.0/28'],
      ['10.0.1.0/28 gone release']],
    ['a listed node\'s smaller pod CIDR inside the block keeps it', [lease('10.0.1.0/24', 'gone')], [listedNode('c', '10.0.1.128/25')],
      [['gone', 'absent']], [], ['10.0.1.0/24 gone keep:block-in-use']],
    ['a listed node\'s copy of the whole block is a conflict and keeps nothing', [lease('10.0.1.0/24', 'gone')], [listedNode('c', '10.0.1.0/24')],
      [['gone', 'absent']], [], ['10.0.1.0/24 gone release']],
    ['verdicts keep the leases\' order', [lease('10.0.2.0/24', 'x'), lease('10.0.1.0/24', 'a'), lease('10.0.3.0/24', 'y', NOW)],
      [listedNode('a')], [['x', 'absent'], ['y', 'absent']], [], ['10.0.2.0/24 x release', '10.0.3.0/24 y keep:young']],
  ])('%s', (_desc, leases, listed, presence, delegated, expected) => {
    expect(verdicts(input({ leases, listed, presence: new Map(presence), delegated }))).toEqual(expected);
  });

  it('hands back the very lease objects it was given (releases are conditional on them)', () => {
    const given = lease('10.0.1.0/24', 'gone');
    const [verdict] = decideLeaseReleases(input({ leases: [given], presence: new Map([['gone', 'absent']]) }));
    expect(verdict?.lease).toBe(given);
  });
});
