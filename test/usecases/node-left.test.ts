/**
 * The node-left check (worker) and the signed NodeLeft event (webhook) free a gone node's leases
 * from the lease table alone: no node is listed (at 5,000 nodes a listing is about 60 MB). A block
 * has one owner; another node's pod CIDR inside it is a conflict (lib/routes/ownership.ts), never
 * leased or routed, so it keeps nothing.
 */
import { describe, expect, it } from 'vitest';
import { ClaimProtocolStore, MemoryClaimStore, createCidrSet } from '../../lib/ipam/index.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { PAST_GRACE, node, nodeSource } from './node-left-fakes.ts';
import { DepartedBlockHeldError, checkNodeLeft, releaseIfGone } from '../../lib/usecases/node-left.ts';

/** 10.244.0.0/23 in /24 blocks: a holds 10.244.0.0/24 (pod CIDR 10.244.0.0/25), c holds 10.244.1.0/24. */
async function twoBlocks(): Promise<CidrSet> {
  const set = await createCidrSet({ clusterCidr: '10.244.0.0/23', nodeMaskSize: 24, store: new ClaimProtocolStore(new MemoryClaimStore()) });
  await set.occupy('10.244.0.0/25', 'a');
  await set.allocateNext('c');
  return set;
}

const leaves = [
  ['the worker\'s node-left check', async (name: string, nodes: ReturnType<typeof nodeSource>, set: CidrSet) => checkNodeLeft(name, { nodes, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), ...PAST_GRACE })],
  ['a signed NodeLeft event', async (name: string, nodes: ReturnType<typeof nodeSource>, set: CidrSet) => JSON.stringify(await releaseIfGone(name, { nodes, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), ...PAST_GRACE }))],
] as const;

describe('node-left without a node listing', () => {
  it.each(leaves)('%s frees the gone node\'s block though another node\'s sub-range lies in it, listing no node', async (_name, leave) => {
    const set = await twoBlocks();
    // b carries a /25 inside a's block: a conflict, with no lease of its own.
    const nodes = nodeSource([node('b', '10.244.0.128/25'), node('c', '10.244.1.0/24')]);
    expect(await leave('a', nodes, set)).toMatch(/10\.244\.0\.0\/24/);
    expect(nodes.count('listNodes')).toBe(0);
    expect((await set.leases()).map((l) => `${l.cidr} ${l.owner}`)).toEqual(['10.244.1.0/24 c']);
  });

  it.each(leaves)('%s lists no node and frees nothing for a node that holds no lease', async (_name, leave) => {
    const set = await twoBlocks();
    const nodes = nodeSource([node('a', '10.244.0.0/25'), node('c', '10.244.1.0/24')]);
    await leave('nobody', nodes, set);
    expect(nodes.count('listNodes')).toBe(0);
    expect((await set.leases()).map((l) => `${l.cidr} ${l.owner}`)).toEqual(['10.244.0.0/24 a', '10.244.1.0/24 c']);
  });

  it('a block the cloud side still holds keeps its lease: the check is retried, the event answers it held', async () => {
    const set = await twoBlocks();
    const nodes = nodeSource([node('c', '10.244.1.0/24')]);
    const asked: string[] = [];
    const holding = async (cidr: string) => {
      asked.push(cidr);
      return { release: false as const, why: 'holder-unread: throttled' };
    };
    const check = checkNodeLeft('a', { nodes, leaseSets: async () => [set], freeDepartedBlock: holding, log: memoryLogger(), ...PAST_GRACE });
    await expect(check).rejects.toBeInstanceOf(DepartedBlockHeldError);
    await expect(check).rejects.toMatchObject({ retryable: true, cidrs: ['10.244.0.0/24'] });
    const event = await releaseIfGone('a', { nodes, leaseSets: async () => [set], freeDepartedBlock: holding, log: memoryLogger(), ...PAST_GRACE });
    expect(event).toEqual({ kind: 'released', cidrs: [], kept: [], held: ['10.244.0.0/24'] });
    expect(asked).toEqual(['10.244.0.0/24', '10.244.0.0/24']);
    expect((await set.leases()).map((l) => `${l.cidr} ${l.owner}`)).toEqual(['10.244.0.0/24 a', '10.244.1.0/24 c']);
  });
});
