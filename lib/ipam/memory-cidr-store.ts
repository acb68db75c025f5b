import type { BlockLease, CidrStore, ClaimResult } from './cidr-store.ts';

/** The in-memory CIDR store: one process, one set. Each method is atomic (no await inside). */
export class MemoryCidrStore implements CidrStore {
  /** Used block index -> owner (null when occupied without one). */
  private readonly used = new Map<number, string | null>();
  private cursor = 0;

  async findOwned(owner: string): Promise<number | null> {
    let found: number | null = null;
    for (const [index, holder] of this.used) {
      if (holder === owner && (found === null || index < found)) found = index;
    }
    return found;
  }

  async nextFree(from: number, total: number): Promise<number | null> {
    if (this.used.size >= total) return null;
    for (let step = 0; step < total; step++) {
      const index = (from + step) % total;
      if (!this.used.has(index)) return index;
    }
    return null;
  }

  async claim(index: number, owner: string | null): Promise<ClaimResult> {
    if (owner !== null) {
      const held = await this.findOwned(owner);
      if (held !== null) return { kind: 'owner-has', index: held };
    }
    if (this.used.has(index)) return { kind: 'taken' };
    this.used.set(index, owner);
    return { kind: 'claimed' };
  }

  async occupy(first: number, last: number, owner: string | null): Promise<void> {
    for (let index = first; index <= last; index++) {
      if (!this.used.has(index) || (this.used.get(index) === null && owner !== null)) this.used.set(index, owner);
    }
  }

  async release(first: number, last: number, owner?: string): Promise<void> {
    for (let index = first; index <= last; index++) {
      if (!this.used.has(index)) continue;
      const holder = this.used.get(index);
      if (owner === undefined || holder === null || holder === owner) this.used.delete(index);
    }
  }

  async readCursor(): Promise<number> {
    return this.cursor;
  }

  async writeCursor(next: number): Promise<void> {
    this.cursor = next;
  }

  async usedCount(): Promise<number> {
    return this.used.size;
  }

  async leases(): Promise<BlockLease[]> {
    return [...this.used]
      .map(([index, owner]) => ({ index, owner }))
      .sort((a, b) => a.index - b.index);
  }
}
