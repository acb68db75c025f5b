/**
 * The CIDR set against upstream's cidrset tests (pkg/controller/nodeipam/ipam/cidrset/cidr_set_test.go),
 * rewritten as table rows for our async API, plus the owner-aware behaviour that is ours.
 */
import { describe, expect, it } from 'vitest';
import { blockAt, formatCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import {
  type CidrSet,
  type CidrSetErrorCode,
  type CidrStore,
  CidrSetError,
  ClaimProtocolStore,
  MemoryClaimStore,
  createCidrSet,
} from '../../lib/ipam/index.ts';
import type { BlockLease } from '../../lib/ipam/cidr-store.ts';
import { MemoryCidrStore } from '../../lib/ipam/memory-cidr-store.ts';

async function expectCode(promise: Promise<unknown>, code: CidrSetErrorCode): Promise<void> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CidrSetError);
  expect((error as CidrSetError).code).toBe(code);
}

async function allocateAll(set: CidrSet, count: number, owner?: (i: number) => string): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(await set.allocateNext(owner?.(i)));
  return out;
}

const blockText = (cluster: string, mask: number, index: number): string =>
  formatCidr(blockAt(parseCidr(cluster), mask, BigInt(index)));

/** The claim protocol's leases carry `since` and `version`; these tests compare blocks and owners. */
class PlainLeasesStore extends ClaimProtocolStore {
  override async leases(): Promise<BlockLease[]> {
    return (await super.leases()).map(({ index, owner }) => ({ index, owner }));
  }
}

const stores: Array<[string, () => CidrStore]> = [
  ['memory', () => new MemoryCidrStore()],
  ['claim protocol over memory', () => new PlainLeasesStore(new MemoryClaimStore())],
];

describe.each(stores)('over the %s store', (_name, makeStore) => {
  describe('createCidrSet', () => {
    it.each([
      // upstream TestCIDRSetv6
      ['127.0.0.0/8', 32, '127.0.0.0/32', '127.0.0.1/32'],
      ['2001:beef:1234:369b::/60', 64, '2001:beef:1234:3690::/64', '2001:beef:1234:3691::/64'],
      // ours: the IPv6 limit is inclusive, IPv4 has none
      ['2001:db8::/32', 48, '2001:db8::/48', '2001:db8:1::/48'],
      ['0.0.0.0/0', 32, '0.0.0.0/32', '0.0.0.1/32'],
      ['10.1.2.3/16', 16, '10.1.0.0/16', null],
    ])('%s with /%i allocates %s then %s', async (cluster, mask, first, second) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      expect(set.clusterCidr).toBe(formatCidr(parseCidr(cluster)));
      expect(set.nodeMaskSize).toBe(mask);
      expect(await set.allocateNext()).toBe(first);
      if (second === null) await expectCode(set.allocateNext(), 'FULL');
      else expect(await set.allocateNext()).toBe(second);
    });

    it.each([
      ['beef:1234::/32', 49, 'MASK_TOO_LARGE'],
      ['::/0', 17, 'MASK_TOO_LARGE'],
      ['2001:db8::/48', 128, 'MASK_TOO_LARGE'],
      ['10.0.0.0/16', 8, 'INVALID_CIDR'],
      ['10.0.0.0/16', 33, 'INVALID_CIDR'],
      ['10.0.0.0/16', 24.5, 'INVALID_CIDR'],
      ['2001:db8::/48', 129, 'INVALID_CIDR'],
      ['10.0.0.0', 24, 'INVALID_CIDR'],
      ['010.0.0.0/16', 24, 'INVALID_CIDR'],
      ['', 24, 'INVALID_CIDR'],
    ] as const)('%s with /%s rejects with %s', async (cluster, mask, code) => {
      await expectCode(createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() }), code);
    });

    it.each([
      ['10.0.24.0/29', 28, 'pod range 10.0.24.0/29'],
      ['2600:1f18::/48', 80, 'pod range 2600:1f18::/48'],
    ] as const)('a pod range %s with /%s is called a pod range in the error, not a cluster CIDR', async (range, mask, named) => {
      const made = createCidrSet({ clusterCidr: range, nodeMaskSize: mask, store: makeStore(), rangeKind: 'pod range' });
      await expect(made).rejects.toThrow(named);
      await expect(made).rejects.not.toThrow(/cluster/);
    });

    it.each([
      ['10.0.0.0/16', 24, 256],
      ['10.0.0.0/8', 32, 1 << 24],
      ['2001:db8::/48', 64, 65536],
      ['2001:db8::/64', 64, 1],
    ])('total of %s with /%i is %i', async (cluster, mask, total) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      expect(set.total).toBe(total);
      expect(await set.usage()).toEqual({ used: 0, total });
    });
  });

  describe('allocation order', () => {
    // upstream TestCIDRSetFullyAllocated: one block, allocate -> full -> release -> the same block again
    it.each([
      ['127.123.234.0/30', 30, '127.123.234.0/30'],
      ['beef:1234::/30', 30, 'beef:1234::/30'],
    ])('full cycle of %s /%i', async (cluster, mask, block) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      expect(await set.allocateNext()).toBe(block);
      await expectCode(set.allocateNext(), 'FULL');
      await set.release(block);
      expect(await set.allocateNext()).toBe(block);
      await expectCode(set.allocateNext(), 'FULL');
    });

    // The cursor moves only on allocateNext; a released block comes back only after the cursor wraps.
    it.each<[string, string, number, Array<['alloc', number] | ['release', number] | ['occupy', number] | ['full']>]>([
      ['v4 release behind the cursor', '10.0.0.0/30', 32, [
        ['alloc', 0], ['alloc', 1], ['alloc', 2], ['release', 1], ['alloc', 3], ['alloc', 1], ['full'],
      ]],
      ['v4 release at the start, cursor wraps to it', '10.0.0.0/30', 32, [
        ['alloc', 0], ['alloc', 1], ['alloc', 2], ['alloc', 3], ['release', 0], ['release', 2], ['alloc', 0], ['alloc', 2], ['full'],
      ]],
      ['occupy does not move the cursor', '10.0.0.0/29', 32, [
        ['occupy', 0], ['occupy', 1], ['alloc', 2], ['occupy', 4], ['alloc', 3], ['alloc', 5],
      ]],
      ['occupy ahead of the cursor is skipped', '10.0.0.0/30', 32, [
        ['alloc', 0], ['occupy', 1], ['alloc', 2], ['release', 0], ['release', 1], ['alloc', 3], ['alloc', 0], ['alloc', 1], ['full'],
      ]],
      ['v6 wrap-around', '2001:db8::/62', 64, [
        ['alloc', 0], ['alloc', 1], ['alloc', 2], ['alloc', 3], ['full'], ['release', 2], ['alloc', 2], ['release', 0], ['release', 3], ['alloc', 3], ['alloc', 0],
      ]],
    ])('%s', async (_name, cluster, mask, steps) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      for (const step of steps) {
        if (step[0] === 'alloc') expect(await set.allocateNext()).toBe(blockText(cluster, mask, step[1]));
        else if (step[0] === 'release') await set.release(blockText(cluster, mask, step[1]));
        else if (step[0] === 'occupy') await set.occupy(blockText(cluster, mask, step[1]));
        else await expectCode(set.allocateNext(), 'FULL');
      }
    });

    // upstream TestIndexToCIDRBlock, through the set: the next allocation starts at the store's cursor
    it.each([
      ['127.123.3.0/16', 24, 0, '127.123.0.0/24'],
      ['127.123.0.0/16', 24, 15, '127.123.15.0/24'],
      ['192.168.5.219/28', 32, 5, '192.168.5.213/32'],
      ['2001:0db8:1234:3::/48', 64, 0, '2001:db8:1234::/64'],
      ['2001:0db8:1234::/48', 64, 15, '2001:db8:1234:f::/64'],
      ['2001:0db8:85a3::8a2e:0370:7334/50', 63, 6425, '2001:db8:85a3:3232::/63'],
      ['2001:0db8::/32', 48, 0, '2001:db8::/48'],
      ['2001:0db8::/32', 48, 15, '2001:db8:f::/48'],
      ['2001:0db8:85a3::8a2e:0370:7334/32', 48, 6425, '2001:db8:1919::/48'],
      ['2001:0db8:1234:ff00::/56', 72, 0, '2001:db8:1234:ff00::/72'],
      ['2001:0db8:1234:ff00::/56', 72, 15, '2001:db8:1234:ff00:f00::/72'],
      ['2001:0db8:1234:ff00::0370:7334/56', 72, 6425, '2001:db8:1234:ff19:1900::/72'],
      ['2001:0db8:1234:0:1234::/80', 96, 0, '2001:db8:1234:0:1234::/96'],
      ['2001:0db8:1234:0:1234::/80', 96, 15, '2001:db8:1234:0:1234:f::/96'],
      ['2001:0db8:1234:ff00::0370:7334/80', 96, 6425, '2001:db8:1234:ff00:0:1919::/96'],
    ])('%s /%i: block %i is %s', async (cluster, mask, index, block) => {
      const store = new MemoryCidrStore();
      await store.writeCursor(index);
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store });
      expect(await set.allocateNext()).toBe(block);
      expect(await store.leases()).toEqual([{ index, owner: null }]);
      expect(await store.readCursor()).toBe(index + 1);
    });

    // upstream TestCIDRSet_RandomishAllocation
    it.each([['127.123.234.0/16'], ['beef:1234::/16']])('allocate all, release all, allocate all again: %s', async (cluster) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: 24, store: makeStore() });
      const first = await allocateAll(set, 256);
      await expectCode(set.allocateNext(), 'FULL');
      expect(new Set(first).size).toBe(256);
      for (const cidr of first) await set.release(cidr);
      expect((await set.usage()).used).toBe(0);
      const again = await allocateAll(set, 256);
      await expectCode(set.allocateNext(), 'FULL');
      expect(again).toEqual(first);
      expect(first.slice(0, 2)).toEqual([blockText(cluster, 24, 0), blockText(cluster, 24, 1)]);
    });

    // upstream TestCIDRSet_AllocationOccupied
    it.each([['127.123.234.0/16'], ['beef:1234::/16']])('occupied blocks are skipped: %s', async (cluster) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: 24, store: makeStore() });
      const all = await allocateAll(set, 256);
      await expectCode(set.allocateNext(), 'FULL');
      for (const cidr of all) await set.release(cidr);
      for (const cidr of all.slice(128)) await set.occupy(cidr);
      // occupy the first of the last 128 again: no change
      await set.occupy(all[128] ?? '');
      expect(await set.usage()).toEqual({ used: 128, total: 256 });
      const again = await allocateAll(set, 128);
      await expectCode(set.allocateNext(), 'FULL');
      expect([...again, ...all.slice(128)]).toEqual(all);
    });
  });

  describe('occupy and release of ranges', () => {
    // upstream TestDoubleOccupyRelease
    it('counts blocks across overlapping occupy/release ranges', async () => {
      const set = await createCidrSet({ clusterCidr: '10.42.0.0/16', nodeMaskSize: 24, store: makeStore() });
      const steps: Array<['occupy' | 'release', string, number]> = [
        ['occupy', '10.42.5.0/24', 1],
        ['occupy', '10.42.9.0/24', 2],
        ['occupy', '10.42.8.0/22', 5],
        ['occupy', '10.42.9.0/24', 5],
        ['release', '10.42.9.0/24', 4],
        ['release', '10.42.9.0/24', 4],
        ['release', '10.42.4.0/22', 3],
      ];
      for (const [op, cidr, used] of steps) {
        await set[op](cidr);
        expect({ op, cidr, used: (await set.usage()).used }).toEqual({ op, cidr, used });
      }
      expect((await set.leases()).map((l) => l.cidr)).toEqual(['10.42.8.0/24', '10.42.10.0/24', '10.42.11.0/24']);
      await allocateAll(set, 256 - 3);
      await expectCode(set.allocateNext(), 'FULL');
    });

    // upstream TestOccupy (+ TestGetBitforCIDR's rows): a range covers every block from the one holding
    // its first address to the one holding its last
    it.each([
      ['127.0.0.0/8', 16, '127.0.0.0/8', 0, 255],
      ['2001:beef:1200::/40', 48, '2001:beef:1200::/40', 0, 255],
      ['127.0.0.0/8', 16, '127.0.0.0/2', 0, 255],
      ['2001:beef:1200::/40', 48, '2001:beef:1234::/34', 0, 255],
      ['127.0.0.0/8', 16, '127.0.0.0/16', 0, 0],
      ['2001:beef:1200::/40', 48, '2001:beef:1200::/48', 0, 0],
      ['127.0.0.0/8', 32, '127.0.0.0/16', 0, 65535],
      ['2001:beef:1200::/48', 64, '2001:beef:1200::/48', 0, 65535],
      ['127.0.0.0/7', 16, '127.0.0.0/15', 256, 257],
      ['2001:beef:7f00::/39', 48, '2001:beef:7f00::/47', 256, 257],
      ['127.0.0.0/7', 15, '127.0.0.0/15', 128, 128],
      ['2001:beef:7f00::/39', 47, '2001:beef:7f00::/47', 128, 128],
      ['127.0.0.0/7', 18, '127.0.0.0/15', 1024, 1031],
      ['2001:beef:7f00::/39', 50, '2001:beef:7f00::/47', 1024, 1031],
      ['127.0.0.0/8', 16, '127.123.0.0/16', 123, 123],
      ['be00::/8', 16, 'beef::/16', 0xef, 0xef],
      ['127.0.0.0/8', 16, '127.168.0.0/16', 168, 168],
      ['be00::/8', 16, 'be68::/16', 0x68, 0x68],
      ['127.0.0.0/8', 16, '127.224.0.0/16', 224, 224],
      ['be00::/8', 16, 'be24::/16', 0x24, 0x24],
      ['192.168.0.0/16', 24, '192.168.12.0/24', 12, 12],
      ['beef::/16', 24, 'beef:1200::/24', 0x12, 0x12],
      ['192.168.0.0/16', 24, '192.168.151.0/24', 151, 151],
      ['beef::/16', 24, 'beef:9700::/24', 0x97, 0x97],
      // ours: smaller than a block, and host bits set
      ['192.168.0.0/16', 24, '192.168.151.128/25', 151, 151],
      ['192.168.0.0/16', 24, '192.168.151.77/32', 151, 151],
      ['192.168.0.0/16', 24, '192.168.20.1/22', 20, 23],
    ])('%s /%i: occupy %s takes blocks %i..%i, release frees them', async (cluster, mask, cidr, begin, end) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await set.occupy(cidr);
      const leases = await set.leases();
      expect(leases).toHaveLength(end - begin + 1);
      expect(leases[0]).toEqual({ cidr: blockText(cluster, mask, begin), owner: null });
      expect(leases.at(-1)).toEqual({ cidr: blockText(cluster, mask, end), owner: null });
      expect((await set.usage()).used).toBe(end - begin + 1);
      await set.release(cidr);
      expect(await set.usage()).toEqual({ used: 0, total: set.total });
    });

    it.each([
      ['192.168.0.0/16', 24, '127.168.224.0/24', 'OUT_OF_RANGE'],
      ['beef::/16', 24, '2001:db00::/24', 'OUT_OF_RANGE'],
      ['10.0.0.0/16', 24, '2001:db8::/24', 'OUT_OF_RANGE'],
      ['2001:db8::/48', 64, '10.0.0.0/8', 'OUT_OF_RANGE'],
      ['10.0.0.0/16', 24, '10.1.0.0/24', 'OUT_OF_RANGE'],
      ['10.0.0.0/16', 24, '10.0.0.0', 'INVALID_CIDR'],
      ['10.0.0.0/16', 24, '010.0.0.0/24', 'INVALID_CIDR'],
      ['10.0.0.0/16', 24, '', 'INVALID_CIDR'],
    ] as const)('%s /%i: %s rejects with %s and changes nothing', async (cluster, mask, cidr, code) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await set.occupy(blockText(cluster, mask, 0));
      await expectCode(set.occupy(cidr), code);
      await expectCode(set.release(cidr), code);
      await expectCode(set.occupy(cidr, 'node-a'), code);
      await expectCode(set.release(cidr, 'node-a'), code);
      expect(await set.leases()).toEqual([{ cidr: blockText(cluster, mask, 0), owner: null }]);
    });
  });

  describe('owners', () => {
    const cluster = '10.0.0.0/28';
    const mask = 30; // 4 blocks

    it('allocateNext for one owner twice returns one block and uses one', async () => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      const a = await set.allocateNext('node-a');
      expect(await set.allocateNext('node-a')).toBe(a);
      expect(await set.usage()).toEqual({ used: 1, total: 4 });
      expect(await set.allocateNext('node-b')).toBe('10.0.0.4/30');
      expect(await set.allocateNext('node-a')).toBe(a);
      expect(await set.leases()).toEqual([
        { cidr: '10.0.0.0/30', owner: 'node-a' },
        { cidr: '10.0.0.4/30', owner: 'node-b' },
      ]);
    });

    it('an owner with a block gets it even when the set is full', async () => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await allocateAll(set, 4, (i) => `node-${i}`);
      await expectCode(set.allocateNext('node-new'), 'FULL');
      await expectCode(set.allocateNext(), 'FULL');
      expect(await set.allocateNext('node-2')).toBe('10.0.0.8/30');
    });

    it('an owner finds an occupied block it owns', async () => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await set.occupy('10.0.0.8/30', 'node-a');
      expect(await set.allocateNext('node-a')).toBe('10.0.0.8/30');
      expect(await set.usage()).toEqual({ used: 1, total: 4 });
    });

    it('occupy keeps an existing owner and gives an ownerless block one', async () => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await set.allocateNext('node-a'); // block 0
      await set.occupy('10.0.0.4/30'); // block 1, no owner
      await set.occupy('10.0.0.0/29', 'node-b'); // blocks 0 and 1
      expect(await set.leases()).toEqual([
        { cidr: '10.0.0.0/30', owner: 'node-a' },
        { cidr: '10.0.0.4/30', owner: 'node-b' },
      ]);
      await set.occupy('10.0.0.4/30'); // ownerless occupy does not drop the owner
      expect((await set.leases())[1]).toEqual({ cidr: '10.0.0.4/30', owner: 'node-b' });
    });

    it.each([
      // [who holds block 0, release owner, freed?]
      ['node-a', 'node-a', true],
      ['node-a', 'node-b', false],
      ['node-a', undefined, true],
      [null, 'node-b', true],
      [null, undefined, true],
    ] as const)('block held by %s, release by %s: freed %s', async (holder, releaser, freed) => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await set.occupy('10.0.0.0/30', holder ?? undefined);
      await set.release('10.0.0.0/30', releaser);
      expect(await set.leases()).toEqual(freed ? [] : [{ cidr: '10.0.0.0/30', owner: holder }]);
    });

    it('an owner-scoped range release frees only that owner and ownerless blocks', async () => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      await set.occupy('10.0.0.0/30', 'node-a');
      await set.occupy('10.0.0.4/30', 'node-b');
      await set.occupy('10.0.0.8/30');
      await set.occupy('10.0.0.12/30', 'node-a');
      await set.release('10.0.0.0/28', 'node-a');
      expect(await set.leases()).toEqual([{ cidr: '10.0.0.4/30', owner: 'node-b' }]);
      expect(await set.usage()).toEqual({ used: 1, total: 4 });
    });

    it('after release an owner is allocated a new block, in cursor order', async () => {
      const set = await createCidrSet({ clusterCidr: cluster, nodeMaskSize: mask, store: makeStore() });
      expect(await set.allocateNext('node-a')).toBe('10.0.0.0/30');
      await set.release('10.0.0.0/30', 'node-a');
      expect(await set.allocateNext('node-a')).toBe('10.0.0.4/30');
      expect(await set.leases()).toEqual([{ cidr: '10.0.0.4/30', owner: 'node-a' }]);
    });

    it('leases are ordered by block and name their owners', async () => {
      const set = await createCidrSet({ clusterCidr: '2001:db8::/62', nodeMaskSize: 64, store: makeStore() });
      await set.occupy('2001:db8:0:3::/64', 'node-z');
      await set.allocateNext('node-y');
      await set.allocateNext();
      expect(await set.leases()).toEqual([
        { cidr: '2001:db8::/64', owner: 'node-y' },
        { cidr: '2001:db8:0:1::/64', owner: null },
        { cidr: '2001:db8:0:3::/64', owner: 'node-z' },
      ]);
    });
  });
});
