/**
 * lib/ipam/memory-cidr-store.ts: in memory nothing stamps a time, so no lease it gives carries
 * `since`, listed or owned; a node's leave (lib/usecases/node-left.ts) then treats each as of
 * unknown age, which is never past the grace period, and leaves it to reconcile.
 */
import { describe, expect, it } from 'vitest';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { releaseIfGone } from '../../lib/usecases/node-left.ts';
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';

describe('the memory CIDR store: leases of unknown age', () => {
  it.each([
    ['listed', async (set: Awaited<ReturnType<typeof createCidrSet>>) => (await set.leases())[0]],
    ['owned', async (set: Awaited<ReturnType<typeof createCidrSet>>) => set.ownedLease('n1')],
  ])('a lease %s carries no since', async (_how, read) => {
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/16', nodeMaskSize: 24 });
    expect(await set.allocateNext('n1')).toBe('10.0.0.0/24');
    const lease = await read(set);
    expect(lease).toMatchObject({ cidr: '10.0.0.0/24', owner: 'n1' });
    expect(lease).not.toHaveProperty('since');
  });

  it('a node gone a moment after taking its lease keeps it: node-left frees no lease of unknown age', async () => {
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/16', nodeMaskSize: 24 });
    await set.allocateNext('n1');
    const nodes = new MemoryNodeSource();
    const result = await releaseIfGone('n1', { nodes, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), leaseGraceSeconds: 600, now: Date.now });
    expect(result).toEqual({ kind: 'released', cidrs: [], kept: ['10.0.0.0/24'], held: [] });
    expect((await set.leases()).map((lease) => lease.owner)).toEqual(['n1']);
  });
});
