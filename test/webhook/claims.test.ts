/** The CREATE admission's judgement of claimed pod CIDRs and of candidate blocks (lib/webhook/claims.ts). */
import { describe, expect, it } from 'vitest';
import { parseNode } from '../../lib/nodes/node.ts';
import { claimantOf, heldClaims, judgeClaims, type LeasedSet } from '../../lib/webhook/claims.ts';

const nodeWith = (name: string, podCIDRs: string[]) => parseNode({ metadata: { name }, spec: { podCIDRs } });

const sets: LeasedSet[] = [
  { clusterCidr: '10.244.0.0/16', leases: [{ cidr: '10.244.1.0/24', owner: 'owner' }, { cidr: '10.244.2.0/24', owner: 'me' }, { cidr: '10.244.7.0/24', owner: null }] },
  { clusterCidr: 'fd00::/56', leases: [{ cidr: 'fd00:0:0:1::/64', owner: 'me' }] },
];

describe('judgeClaims', () => {
  it.each<[string, string[], unknown]>([
    ['exactly its own lease', ['10.244.2.0/24'], { kind: 'own', cidrs: ['10.244.2.0/24'] }],
    ['its own leases, dual-stack', ['10.244.2.0/24', 'fd00:0:0:1::/64'], { kind: 'own', cidrs: ['10.244.2.0/24', 'fd00:0:0:1::/64'] }],
    ['another node\'s block', ['10.244.1.0/24'], { kind: 'refused', refused: [{ cidr: '10.244.1.0/24', reason: 'conflict', owner: 'owner', leased: '10.244.1.0/24' }] }],
    ['a sub-range of it', ['10.244.1.128/25'], { kind: 'refused', refused: [{ cidr: '10.244.1.128/25', reason: 'conflict', owner: 'owner', leased: '10.244.1.0/24' }] }],
    ['a super-range of it', ['10.244.0.0/23'], { kind: 'refused', refused: [{ cidr: '10.244.0.0/23', reason: 'conflict', owner: 'owner', leased: '10.244.1.0/24' }] }],
    ['an ownerless used block', ['10.244.7.0/24'], { kind: 'refused', refused: [{ cidr: '10.244.7.0/24', reason: 'conflict', owner: null, leased: '10.244.7.0/24' }] }],
    ['a super-range of its own lease', ['10.244.2.0/23'], { kind: 'refused', refused: [{ cidr: '10.244.2.0/23', reason: 'unverified' }] }],
    ['a sub-range of its own lease', ['10.244.2.0/25'], { kind: 'refused', refused: [{ cidr: '10.244.2.0/25', reason: 'unverified' }] }],
    ['a free block (never adopted at admission)', ['10.244.9.0/24'], { kind: 'refused', refused: [{ cidr: '10.244.9.0/24', reason: 'unverified' }] }],
    ['a non-canonical spelling of its own lease is compared canonically', ['10.244.2.5/24'], { kind: 'own', cidrs: ['10.244.2.0/24'] }],
    ['not a CIDR', ['pods'], { kind: 'refused', refused: [{ cidr: 'pods', reason: 'invalid' }] }],
    ['one own, one another\'s: refused for the other', ['fd00:0:0:1::/64', '10.244.1.0/24'], { kind: 'refused', refused: [{ cidr: '10.244.1.0/24', reason: 'conflict', owner: 'owner', leased: '10.244.1.0/24' }] }],
  ])('%s', (_name, claims, expected) => {
    expect(judgeClaims(nodeWith('me', claims), sets)).toEqual(expected);
  });
});

describe('claimantOf over heldClaims', () => {
  // Node mask /24, migration mask /23 (IPv4). `a` holds its own lease, `m` an adoptable /23, `w` the
  // whole range, `s` a /25 (no migration mask), `x` a block overlapping `a`'s lease; `me` is excluded.
  const table = {
    leases: [{ cidr: '10.244.0.0/24', owner: 'a' }],
    sets: [{ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24 }],
    migrationMaskSizes: { 4: [23], 6: [] },
  };
  const nodes = [
    nodeWith('a', ['10.244.0.0/24']),
    nodeWith('m', ['10.244.4.0/23']),
    nodeWith('w', ['10.244.0.0/16']),
    nodeWith('s', ['10.244.3.0/25']),
    nodeWith('x', ['10.244.0.0/23']),
    nodeWith('me', ['10.244.9.0/24']),
    parseNode({ metadata: { name: 'c' } }),
  ];
  const held = heldClaims(nodes, table, ['10.244.0.0/16']);
  it.each<[string, string | null]>([
    ['10.244.0.0/24', 'a'],
    ['10.244.5.0/24', 'm'],
    ['10.244.3.0/24', null],
    ['10.244.1.0/24', null],
    ['10.244.7.0/24', null],
    ['10.244.9.0/24', null],
    ['fd00::/64', null],
  ])('%s -> %s', (candidate, expected) => {
    expect(claimantOf(candidate, held, 'me')).toBe(expected);
  });
});
