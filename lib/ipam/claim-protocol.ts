/**
 * The claim protocol: a CidrStore built only from the conditional writes of a ClaimStore, so that
 * many Lambdas can allocate from one set at once and any of them can die after any write. Items:
 * `b#<10-digit index>` (a used block), `o#<owner>` (the block an owner holds), `cursor` (tickets).
 * The steps and why each crash is safe: docs/decisions/0011-claim-protocol.md.
 */
import { PodrouteError } from '../errors.ts';
import type { ClaimStore, StoredItem } from './claim-store.ts';
import type { BlockLease, CidrStore, RepairReport } from './cidr-store.ts';
import { forEachLimit } from '../util/concurrency.ts';
import { CURSOR_ATTR, CURSOR_KEY, FIRST_BLOCK, FIRST_OWNER, LAST_BLOCK, LAST_OWNER, OWNER_PREFIX, blockKey, indexOfKey, ownerKey, ownerOf, recordIndex, toLease } from './claim-items.ts';

/** Blocks listed at once when looking for the end of a used run (doubling up to MAX_PAGE). */
const FIRST_PAGE = 16;
const MAX_PAGE = 1000;
/** Rounds of one allocation for an owner (each lost to another writer) before a retryable error. */
const MAX_ROUNDS = 64;
/** Block writes in flight at once for range operations. */
const RANGE_CONCURRENCY = 8;

interface ClaimProtocolOptions {
  /** Milliseconds since the epoch, stamped on blocks and records (default: always 0). */
  readonly clock?: () => number;
}

export class ClaimProtocolStore implements CidrStore {
  private readonly clock: () => number;

  constructor(
    private readonly store: ClaimStore,
    options: ClaimProtocolOptions = {},
  ) {
    this.clock = options.clock ?? (() => 0);
  }

  // ---- reads ----------------------------------------------------------------------------------

  async findOwned(owner: string): Promise<number | null> {
    return (await this.ownedLease(owner))?.index ?? null;
  }

  /**
   * Two keyed reads: the owner's record, then the block it names (for its version and to check that
   * the owner holds it). An owner holding more blocks than the record names (a larger pod CIDR held
   * as several blocks, a crash leftover) has those found by a listing (`leases`), not here.
   */
  async ownedLease(owner: string): Promise<BlockLease | null> {
    const record = await this.store.get(ownerKey(owner));
    if (record === null) return null;
    const block = await this.store.get(blockKey(recordIndex(record)));
    return block !== null && ownerOf(block) === owner ? toLease(block) : null;
  }

  async usedCount(): Promise<number> {
    return this.store.count(FIRST_BLOCK, LAST_BLOCK);
  }

  async leases(): Promise<BlockLease[]> {
    return (await this.store.list(FIRST_BLOCK, LAST_BLOCK)).map(toLease);
  }

  // ---- allocation -----------------------------------------------------------------------------

  async allocate(owner: string | null, total: number): Promise<number | null> {
    if (owner === null) return this.allocateOwnerless(total);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const record = await this.store.get(ownerKey(owner));
      let target: number | null;
      if (record === null) {
        target = await this.ticket(total);
        // Full as listed; a concurrent call for this owner may have claimed meanwhile: answer that.
        if (target === null) return (await this.findOwned(owner)) ?? null;
        if (!(await this.store.putIfAbsent(ownerKey(owner), this.recordAttrs(target)))) continue;
      } else {
        const named = recordIndex(record);
        const block = named < total ? await this.store.get(blockKey(named)) : null;
        if (block !== null && ownerOf(block) === owner) {
          // Held: renew, so a reclaim that listed the lease before this call leaves it alone. A
          // failed renewal that still finds the block ours was renewed by a concurrent call.
          if (await this.store.putIfVersion(blockKey(named), this.blockAttrs(owner), block.version)) return named;
          const now = await this.store.get(blockKey(named));
          if (now !== null && ownerOf(now) === owner) return named;
          continue;
        }
        target = block === null && named < total ? named : await this.ticket(total);
        if (target === null) return (await this.findOwned(owner)) ?? null;
        if (!(await this.store.putIfVersion(ownerKey(owner), this.recordAttrs(target), record.version))) continue;
      }
      if (await this.store.putIfAbsent(blockKey(target), this.blockAttrs(owner))) return this.settle(owner, target);
    }
    throw new PodrouteError(`allocation for ${JSON.stringify(owner)} lost ${MAX_ROUNDS} races in a row; try again`, {
      retryable: true,
    });
  }

  private async allocateOwnerless(total: number): Promise<number | null> {
    // Each lost claim proves one more block used, so this ends after at most `total` claims.
    for (let attempt = 0; attempt < total; attempt++) {
      const candidate = await this.ticket(total);
      if (candidate === null) return null;
      if (await this.store.putIfAbsent(blockKey(candidate), this.blockAttrs(null))) return candidate;
    }
    return null;
  }

  /**
   * A candidate block: the next ticket, moved past the used run it lands on. Null when a full
   * circle found no free block.
   */
  private async ticket(total: number): Promise<number | null> {
    let drawn = 1;
    let candidate = ((await this.store.increment(CURSOR_KEY, CURSOR_ATTR, 1)) - 1) % total;
    let gap: number | null = null;
    for (let jumps = 0; jumps < total; jumps++) {
      if ((await this.store.get(blockKey(candidate))) === null) return candidate;
      gap = await this.firstGap(candidate, total);
      if (gap === null) break;
      const distance = (gap - candidate + total) % total;
      drawn += distance;
      candidate = ((await this.store.increment(CURSOR_KEY, CURSOR_ATTR, distance)) - 1) % total;
    }
    // Concurrent draws kept moving the cursor under this one, so every jump landed on a used block
    // while a free one was seen: take that one (the conditional claim still decides). Only a listing
    // that found no free block at all makes the set full.
    if (gap !== null) return gap;
    // Full: give the tickets back, so the cursor stays where upstream's would (it moves only on
    // an allocation). A crash before this only costs order.
    await this.store.increment(CURSOR_KEY, CURSOR_ATTR, -drawn);
    return null;
  }

  /** The first free block after `from` (wrapping), by listing the blocks in growing pages. */
  private async firstGap(from: number, total: number): Promise<number | null> {
    for (const [low, high] of [[from, total - 1], [0, from - 1]] as const) {
      let expected = low;
      let page = FIRST_PAGE;
      while (expected <= high) {
        const items = await this.store.list(blockKey(expected), blockKey(high), page);
        for (const item of items) {
          const index = indexOfKey(item.key);
          if (index > expected) return expected;
          expected = index + 1;
        }
        if (items.length < page) {
          if (expected <= high) return expected;
          break;
        }
        page = Math.min(page * 2, MAX_PAGE);
      }
    }
    return null;
  }

  /** Step 4: make sure the owner's record names one block the owner holds, and answer it. */
  private async settle(owner: string, index: number): Promise<number> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const record = await this.store.get(ownerKey(owner));
      if (record === null) {
        if (await this.store.putIfAbsent(ownerKey(owner), this.recordAttrs(index))) return index;
        continue;
      }
      const named = recordIndex(record);
      if (named === index) return index;
      const other = await this.store.get(blockKey(named));
      if (other !== null && ownerOf(other) === owner) {
        await this.dropOwn(index, owner);
        return named;
      }
      if (await this.store.putIfVersion(ownerKey(owner), this.recordAttrs(index), record.version)) return index;
    }
    throw new PodrouteError(`allocation for ${JSON.stringify(owner)} could not settle its record; try again`, {
      retryable: true,
    });
  }

  /** Frees block `index` if `owner` holds it. */
  private async dropOwn(index: number, owner: string): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const block = await this.store.get(blockKey(index));
      if (block === null || ownerOf(block) !== owner) return;
      if (await this.store.deleteIf(blockKey(index), block.version)) return;
    }
  }

  // ---- occupy, release, repair ----------------------------------------------------------------

  async occupy(first: number, last: number, owner: string | null): Promise<void> {
    if (owner !== null) await this.pointRecord(owner, first);
    await forEachLimit(range(first, last), RANGE_CONCURRENCY, (index) => this.occupyBlock(index, owner));
    if (owner === null || (await this.findOwned(owner)) !== null) return;
    // The range's first block is someone else's: name a block of the range the owner did get.
    const mine = (await this.store.list(blockKey(first), blockKey(last))).find((item) => ownerOf(item) === owner);
    if (mine !== undefined) await this.pointRecord(owner, indexOfKey(mine.key));
  }

  /** Points `owner`'s record at `index` unless it names a block the owner holds. */
  private async pointRecord(owner: string, index: number): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const record = await this.store.get(ownerKey(owner));
      if (record === null) {
        if (await this.store.putIfAbsent(ownerKey(owner), this.recordAttrs(index))) return;
        continue;
      }
      const named = recordIndex(record);
      if (named === index) return;
      const block = await this.store.get(blockKey(named));
      if (block !== null && ownerOf(block) === owner) return;
      if (await this.store.putIfVersion(ownerKey(owner), this.recordAttrs(index), record.version)) return;
    }
  }

  /** Marks block `index` used; gives it to `owner` when it is free or ownerless. */
  private async occupyBlock(index: number, owner: string | null): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (await this.store.putIfAbsent(blockKey(index), this.blockAttrs(owner))) return;
      if (owner === null) return;
      const block = await this.store.get(blockKey(index));
      if (block === null) continue;
      if (ownerOf(block) !== null) return;
      if (await this.store.putIfVersion(blockKey(index), this.blockAttrs(owner), block.version)) return;
    }
  }

  async release(first: number, last: number, owner?: string): Promise<void> {
    const used = await this.store.list(blockKey(first), blockKey(last));
    const mine = (item: StoredItem): boolean => owner === undefined || ownerOf(item) === null || ownerOf(item) === owner;
    await forEachLimit(used.filter(mine), RANGE_CONCURRENCY, async (seen) => {
      let item: StoredItem | null = seen;
      for (let round = 0; round < MAX_ROUNDS && item !== null && mine(item); round++) {
        if (await this.releaseItem(item)) return;
        item = await this.store.get(item.key);
      }
    });
  }

  async releaseLease(lease: BlockLease): Promise<boolean> {
    if (lease.version === undefined) return false;
    const item: StoredItem = {
      key: blockKey(lease.index),
      attrs: lease.owner === null ? {} : { owner: lease.owner },
      version: lease.version,
    };
    return this.releaseItem(item);
  }

  /** Deletes the block at the version seen, then its owner's record if it named the block. */
  private async releaseItem(block: StoredItem): Promise<boolean> {
    const holder = ownerOf(block);
    // Read before the block goes: a claim or renewal after this read bumps the record.
    const record = holder === null ? null : await this.store.get(ownerKey(holder));
    if (!(await this.store.deleteIf(block.key, block.version))) return false;
    if (holder !== null && record !== null && recordIndex(record) === indexOfKey(block.key)) {
      await this.store.deleteIf(ownerKey(holder), record.version);
    }
    return true;
  }

  /**
   * `listed`: the blocks as the caller just listed them (reconcile has them already), so only the
   * owner records are read here; each block found without its record is read again before a
   * record is written for it.
   */
  async repair(listed?: readonly BlockLease[]): Promise<RepairReport> {
    const [blocks, records] = await Promise.all([
      listed ?? this.leases(),
      this.store.list(FIRST_OWNER, LAST_OWNER),
    ]);
    const held = new Map<string, number[]>();
    for (const { owner, index } of blocks) if (owner !== null) held.set(owner, [...(held.get(owner) ?? []), index]);
    const recordOf = new Map(records.map((record) => [record.key.slice(OWNER_PREFIX.length), record]));
    const repaired: string[] = [];
    for (const [owner, indices] of held) {
      const record = recordOf.get(owner);
      if (record !== undefined && indices.includes(recordIndex(record))) continue;
      const lowest = Math.min(...indices);
      const block = await this.store.get(blockKey(lowest));
      if (block === null || ownerOf(block) !== owner) continue; // released since the listing
      const done = record === undefined
        ? await this.store.putIfAbsent(ownerKey(owner), this.recordAttrs(lowest))
        : await this.store.putIfVersion(ownerKey(owner), this.recordAttrs(lowest), record.version);
      // A failed condition: the owner's own allocation wrote the record meanwhile.
      if (done) repaired.push(owner);
    }
    return { records: repaired };
  }

  // ---- helpers --------------------------------------------------------------------------------

  private recordAttrs(index: number): Record<string, number> {
    return { index, since: this.clock() };
  }

  private blockAttrs(owner: string | null): Record<string, string | number> {
    return owner === null ? { since: this.clock() } : { owner, since: this.clock() };
  }
}

function range(first: number, last: number): number[] {
  const out: number[] = [];
  for (let index = first; index <= last; index++) out.push(index);
  return out;
}
