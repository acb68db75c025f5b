/**
 * Properties of the CIDR set over random IPv4 and IPv6 clusters with small totals (<= 256 blocks).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Cidr, containsCidr, formatAddress, formatCidr, overlaps, parseCidr } from '../../lib/cidr/cidr.ts';
import { type CidrSet, type CidrStore, CidrSetError, ClaimProtocolStore, MemoryClaimStore, createCidrSet } from '../../lib/ipam/index.ts';
import type { ClaimStore, ItemAttrs, StoredItem } from '../../lib/ipam/claim-store.ts';

const RUNS = { numRuns: 60 };

interface Shape {
  cluster: string;
  mask: number;
}

/** A cluster CIDR and a node mask 0..8 bits longer (1..256 blocks). */
const shape: fc.Arbitrary<Shape> = fc.oneof(
  fc
    .record({ addr: fc.nat({ max: 0xffffffff }), prefix: fc.integer({ min: 0, max: 32 }), bits: fc.integer({ min: 0, max: 8 }) })
    .map(({ addr, prefix, bits }) => ({
      cluster: `${formatAddress(4, BigInt(addr))}/${prefix}`,
      mask: Math.min(32, prefix + bits),
    })),
  fc
    .record({ addr: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), prefix: fc.integer({ min: 0, max: 128 }), bits: fc.integer({ min: 0, max: 8 }) })
    .map(({ addr, prefix, bits }) => ({
      cluster: `${formatAddress(6, addr)}/${prefix}`,
      mask: Math.min(128, prefix + bits),
    })),
);

const owners = fc.option(fc.constantFrom('node-a', 'node-b', 'node-c', 'node-d', 'node-e'), { nil: undefined });

async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    if (error instanceof CidrSetError) return error.code;
    throw error;
  }
}

function assertDisjointInside(cluster: Cidr, mask: number, blocks: readonly string[]): void {
  const parsed = blocks.map((b) => parseCidr(b));
  const bad = parsed.filter((block, i) => formatCidr(block) !== blocks[i] || block.prefix !== mask || !containsCidr(cluster, block));
  expect(bad).toEqual([]);
  // equal-sized aligned blocks are disjoint exactly when their networks differ
  expect(new Set(parsed.map((b) => b.network)).size).toBe(parsed.length);
  const [first, second] = parsed;
  if (first && second) expect(overlaps(first, second)).toBe(false);
}

async function assertConsistent(set: CidrSet): Promise<void> {
  const [usage, leases] = [await set.usage(), await set.leases()];
  expect(usage.used).toBe(leases.length);
  expect(usage.total).toBe(set.total);
  expect(usage.used).toBeLessThanOrEqual(usage.total);
  assertDisjointInside(parseCidr(set.clusterCidr), set.nodeMaskSize, leases.map((l) => l.cidr));
}

describe('CIDR set properties', () => {
  it('allocations are disjoint, inside the cluster CIDR, and FULL comes exactly after `total`', async () => {
    await fc.assert(
      fc.asyncProperty(shape, async ({ cluster, mask }) => {
        const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask });
        expect(set.total).toBe(2 ** (mask - parseCidr(cluster).prefix));
        const blocks: string[] = [];
        for (let i = 0; i < set.total; i++) blocks.push(await set.allocateNext());
        assertDisjointInside(parseCidr(cluster), mask, blocks);
        expect(await codeOf(set.allocateNext())).toBe('FULL');
        expect(await codeOf(set.allocateNext('someone'))).toBe('FULL');
        expect(await set.usage()).toEqual({ used: set.total, total: set.total });
      }),
      RUNS,
    );
  });

  it('release restores capacity', async () => {
    await fc.assert(
      fc.asyncProperty(shape, fc.array(fc.nat(), { minLength: 1, maxLength: 20 }), async ({ cluster, mask }, picks) => {
        const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask });
        const blocks: string[] = [];
        for (let i = 0; i < set.total; i++) blocks.push(await set.allocateNext());
        const released = [...new Set(picks.map((p) => blocks[p % blocks.length] ?? ''))];
        for (const cidr of released) await set.release(cidr);
        expect(await set.usage()).toEqual({ used: set.total - released.length, total: set.total });
        const again: string[] = [];
        for (let i = 0; i < released.length; i++) again.push(await set.allocateNext());
        expect(new Set(again)).toEqual(new Set(released));
        expect(await codeOf(set.allocateNext())).toBe('FULL');
      }),
      RUNS,
    );
  });

  it('allocateNext(owner) twice returns one block', async () => {
    await fc.assert(
      fc.asyncProperty(shape, fc.array(fc.constantFrom('n1', 'n2', 'n3', 'n4'), { minLength: 1, maxLength: 12 }), async ({ cluster, mask }, calls) => {
        const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask });
        const held = new Map<string, string>();
        for (const owner of calls) {
          const code = await codeOf(
            set.allocateNext(owner).then((cidr) => {
              expect(cidr).toBe(held.get(owner) ?? cidr);
              held.set(owner, cidr);
            }),
          );
          // FULL only when this owner holds nothing and every block is taken
          if (code !== null) {
            expect(code).toBe('FULL');
            expect(held.has(owner)).toBe(false);
            expect(held.size).toBe(set.total);
          }
        }
        expect((await set.usage()).used).toBe(held.size);
        expect(new Set(held.values()).size).toBe(held.size);
        const leases = await set.leases();
        expect(new Map(leases.map((l) => [l.owner ?? '', l.cidr]))).toEqual(held);
      }),
      RUNS,
    );
  });

  type Op =
    | { kind: 'allocate'; owner: string | undefined }
    | { kind: 'occupy' | 'release'; block: number; widen: number; owner: string | undefined };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('allocate' as const), owner: owners }),
    fc.record({
      kind: fc.constantFrom('occupy' as const, 'release' as const),
      block: fc.nat(),
      widen: fc.integer({ min: 0, max: 3 }),
      owner: owners,
    }),
  );

  it('a random sequence of allocate/occupy/release keeps usage, leases and owners consistent', async () => {
    await fc.assert(
      fc.asyncProperty(shape, fc.array(op, { maxLength: 40 }), async ({ cluster, mask }, ops) => {
        const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask });
        const clusterCidr = parseCidr(cluster);
        for (const step of ops) {
          const before = await set.leases();
          if (step.kind === 'allocate') {
            const code = await codeOf(set.allocateNext(step.owner));
            if (code !== null) {
              expect(code).toBe('FULL');
              expect(before).toHaveLength(set.total);
            }
          } else {
            // a range of 2^widen blocks around a random block (clamped to the cluster)
            const bits = Math.min(step.widen, mask - clusterCidr.prefix);
            const index = BigInt(step.block % set.total) >> BigInt(bits);
            const range: Cidr = {
              family: clusterCidr.family,
              prefix: mask - bits,
              network: clusterCidr.network + (index << BigInt((clusterCidr.family === 4 ? 32 : 128) - (mask - bits))),
            };
            await set[step.kind](formatCidr(range), step.owner);
          }
          await assertConsistent(set);
          const after = await set.leases();
          // owners never change hands: a block held before is free or held by the same owner after
          for (const lease of before) {
            const now = after.find((l) => l.cidr === lease.cidr);
            if (now && lease.owner !== null) expect(now.owner).toBe(lease.owner);
          }
        }
      }),
      RUNS,
    );
  });
});

/**
 * The claim protocol over a memory claim store that yields to the event loop a varying number of
 * times before each step, so concurrent callers interleave between any two of its writes.
 */
class YieldingClaimStore implements ClaimStore {
  private readonly inner = new MemoryClaimStore();
  private call = 0;
  constructor(private readonly delays: readonly number[]) {}

  private async pause(): Promise<void> {
    const n = this.delays[this.call++ % this.delays.length] ?? 0;
    for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  async get(key: string): Promise<StoredItem | null> {
    await this.pause();
    return this.inner.get(key);
  }
  async putIfAbsent(key: string, attrs: ItemAttrs): Promise<boolean> {
    await this.pause();
    return this.inner.putIfAbsent(key, attrs);
  }
  async putIfVersion(key: string, attrs: ItemAttrs, version: number): Promise<boolean> {
    await this.pause();
    return this.inner.putIfVersion(key, attrs, version);
  }
  async deleteIf(key: string, version: number): Promise<boolean> {
    await this.pause();
    return this.inner.deleteIf(key, version);
  }
  async increment(key: string, attr: string, by: number): Promise<number> {
    await this.pause();
    return this.inner.increment(key, attr, by);
  }
  async list(from: string, to: string, limit?: number): Promise<StoredItem[]> {
    await this.pause();
    return this.inner.list(from, to, limit);
  }
  async count(from: string, to: string): Promise<number> {
    await this.pause();
    return this.inner.count(from, to);
  }
}

const yieldingStore = (delays: readonly number[]): CidrStore => new ClaimProtocolStore(new YieldingClaimStore(delays));

describe('CIDR set over a store shared by concurrent callers', () => {
  it('concurrent allocateNext calls never return one block twice', async () => {
    await fc.assert(
      fc.asyncProperty(
        shape.filter(({ cluster, mask }) => mask - parseCidr(cluster).prefix <= 5),
        fc.array(owners, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 16 }),
        async ({ cluster, mask }, callers, delays) => {
          const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: yieldingStore(delays) });
          const results = await Promise.all(
            callers.map(async (owner) => ({ owner, result: await set.allocateNext(owner).catch((e: unknown) => e) })),
          );
          const byBlock = new Map<string, string>();
          const byOwner = new Map<string, string>();
          let anonymous = 0;
          for (const { owner, result } of results) {
            if (typeof result !== 'string') {
              expect(result).toBeInstanceOf(CidrSetError);
              expect((result as CidrSetError).code).toBe('FULL');
              continue;
            }
            // one owner, one block; an anonymous caller gets a block of its own
            const who = owner ?? `anonymous-${anonymous++}`;
            expect(byOwner.get(who) ?? result).toBe(result);
            byOwner.set(who, result);
            expect(byBlock.get(result) ?? who).toBe(who);
            byBlock.set(result, who);
          }
          assertDisjointInside(parseCidr(cluster), mask, [...byBlock.keys()]);
          // every block handed out is used, nothing else is
          expect((await set.leases()).map((l) => l.cidr).sort()).toEqual([...byBlock.keys()].sort());
          // a caller is refused only when the set is full
          if (results.some((r) => typeof r.result !== 'string')) expect(byBlock.size).toBe(set.total);
        },
      ),
      { numRuns: 40 },
    );
  });
});
