import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbCidrStore } from '../../lib/aws/dynamodb-cidr-store.ts';
import { createCidrSet, type CidrSet } from '../../lib/ipam/index.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';

let local: LocalDynamo;

beforeAll(async () => {
  local = await startDynalite();
});
afterAll(async () => {
  await local.close();
});

const cluster = { clusterCidr: '10.0.0.0/12', nodeMaskSize: 24 }; // 4096 blocks

/** Writes whose condition failed, by set id. */
const failed = new Map<string, number>();

/** One "Lambda": its own client, store and set over the shared set id. */
async function allocator(setId: string): Promise<CidrSet> {
  const store = new DynamoDbCidrStore({
    client: local.client(),
    tableName: local.tableName,
    setId,
    onConditionalFailure: () => failed.set(setId, (failed.get(setId) ?? 0) + 1),
  });
  return createCidrSet({ ...cluster, store });
}

/**
 * Allocations per allocator in the 50-writer test: the contention is set by the 50 writers at once,
 * not by how many blocks each takes (8 keeps the test's time a quarter of 20's at the same 50).
 */
const PER_ALLOCATOR = 8;

describe('many writers at once', () => {
  it('50 allocators x 8 nodes: 400 distinct blocks, one per owner; releasing all frees all', async () => {
    const setId = 'concurrency-400';
    const allocators = await Promise.all(Array.from({ length: 50 }, () => allocator(setId)));
    const handed = await Promise.all(
      allocators.map(async (set, a) => {
        const mine: Array<{ owner: string; cidr: string }> = [];
        for (let n = 0; n < PER_ALLOCATOR; n++) {
          const owner = `node-${a}-${n}`;
          mine.push({ owner, cidr: await set.allocateNext(owner) });
        }
        return mine;
      }),
    );
    const all = handed.flat();
    expect(all).toHaveLength(400);
    expect(new Set(all.map(({ cidr }) => cidr)).size).toBe(400);
    // A ticket each: allocators do not meet on one block (issue 9's goal: at most 0.1 per allocation).
    expect((failed.get(setId) ?? 0) / all.length).toBeLessThanOrEqual(0.1);

    const checker = await allocator(setId);
    expect(await checker.usage()).toEqual({ used: 400, total: 4096 });
    const leases = await checker.leases();
    expect(leases).toHaveLength(400);
    expect(new Set(leases.map(({ owner }) => owner)).size).toBe(400);
    const leaseOf = new Map(leases.map(({ cidr, owner }) => [owner, cidr]));
    for (const { owner, cidr } of all) expect(leaseOf.get(owner), owner).toBe(cidr);

    // A retry for an owner returns its block, from any allocator.
    const sample = all[277];
    expect(sample).toBeDefined();
    if (sample) expect(await allocators[3]?.allocateNext(sample.owner)).toBe(sample.cidr);

    await Promise.all(
      allocators.map(async (set, a) => {
        for (const { owner, cidr } of handed[a] ?? []) await set.release(cidr, owner);
      }),
    );
    expect(await checker.usage()).toEqual({ used: 0, total: 4096 });
  }, 300_000);

  it('20 concurrent allocations for one owner: exactly one block', async () => {
    const setId = 'same-owner-race';
    const racers = await Promise.all(Array.from({ length: 20 }, () => allocator(setId)));
    const got = await Promise.all(racers.map((set) => set.allocateNext('node-x')));
    expect(new Set(got).size).toBe(1);
    const checker = await allocator(setId);
    expect(await checker.usage()).toEqual({ used: 1, total: 4096 });
    expect((await checker.leases()).map(({ cidr, owner }) => ({ cidr, owner }))).toEqual([{ cidr: got[0], owner: 'node-x' }]);
  });

  it('one owner racing while other owners fill the same blocks: still one block for it', async () => {
    const setId = 'mixed-race';
    const racers = await Promise.all(Array.from({ length: 30 }, () => allocator(setId)));
    const got = await Promise.all(
      racers.map((set, i) => set.allocateNext(i % 3 === 0 ? 'node-x' : `other-${i}`)),
    );
    const forX = got.filter((_cidr, i) => i % 3 === 0);
    expect(new Set(forX).size).toBe(1);
    expect(new Set(got).size).toBe(21);
    const checker = await allocator(setId);
    expect(await checker.usage()).toEqual({ used: 21, total: 4096 });
  });
});
