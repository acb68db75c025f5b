/**
 * The node-left check (worker) and the signed NodeLeft event (webhook) release a gone node's
 * leases, but never a block another live node's pod CIDR still lies in: pod CIDRs smaller than the
 * configured mask share the block that holds them (issue 7 item 7), owned by the node occupied
 * first. Reconcile's reclaim keeps such a block by the same rule (`blockInUse`).
 * (From the review test node-left-shared-block.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { ClaimProtocolStore, MemoryClaimStore, createCidrSet } from '../../lib/ipam/index.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { node, nodeSource } from './node-left-fakes.ts';
import { checkNodeLeft, releaseIfGone } from '../../lib/usecases/node-left.ts';


/** 10.244.0.0/23 in /24 blocks; nodes a and b migrated with /25s, both inside block 10.244.0.0/24 (owned by a). */
async function sharedBlock(): Promise<CidrSet> {
  const set = await createCidrSet({ clusterCidr: '10.244.0.0/23', nodeMaskSize: 24, store: new ClaimProtocolStore(new MemoryClaimStore()) });
  await set.occupy('10.244.0.0/25', 'a');
  await set.occupy('10.244.0.128/25', 'b');
  await set.allocateNext('c'); // 10.244.1.0/24
  return set;
}

describe('node-left and a block shared by smaller pod CIDRs', () => {
  it('keeps the block while a live node holds a pod CIDR inside it (worker check)', async () => {
    const set = await sharedBlock();
    const nodes = nodeSource([node('b', '10.244.0.128/25'), node('c', '10.244.1.0/24')]);
    const log = memoryLogger();
    expect(await checkNodeLeft('a', { nodes, cidrSets: [set], log })).toBe('released:none kept:10.244.0.0/24');
    expect((await set.leases()).map((l) => `${l.cidr} ${l.owner}`).sort()).toEqual(['10.244.0.0/24 a', '10.244.1.0/24 c']);
    // The next node gets no block overlapping b's 10.244.0.128/25: the set is full.
    await expect(set.allocateNext('d')).rejects.toThrow();
  });

  it('keeps it for the signed NodeLeft event too, and says so', async () => {
    const set = await sharedBlock();
    const nodes = nodeSource([node('b', '10.244.0.128/25')]);
    expect(await releaseIfGone('a', { nodes, cidrSets: [set], log: memoryLogger() })).toEqual({ kind: 'released', cidrs: [], kept: ['10.244.0.0/24'] });
  });

  it('releases the block once no live node lies in it', async () => {
    const set = await sharedBlock();
    const nodes = nodeSource([node('c', '10.244.1.0/24')]);
    expect(await checkNodeLeft('a', { nodes, cidrSets: [set], log: memoryLogger() })).toBe('released:10.244.0.0/24');
    expect(await set.allocateNext('d')).toBe('10.244.0.0/24');
  });

  it('lists the nodes only when the gone node holds a lease', async () => {
    const set = await sharedBlock();
    const nodes = nodeSource([node('a', '10.244.0.0/25'), node('b', '10.244.0.128/25')]);
    expect(await checkNodeLeft('nobody', { nodes, cidrSets: [set], log: memoryLogger() })).toBe('released:none');
    expect(nodes.calls.list).toBe(0);
    const gone = nodeSource([node('a', '10.244.0.0/25'), node('b', '10.244.0.128/25')]);
    expect(await checkNodeLeft('c', { nodes: gone, cidrSets: [set], log: memoryLogger() })).toBe('released:10.244.1.0/24');
    expect(gone.calls.list).toBe(1);
  });
});
