/**
 * The conditional-write port under the claim protocol (claim-protocol.ts): one set's sorted key
 * space, each item a few attributes and a version (1 after `putIfAbsent`, +1 per `putIfVersion`; an
 * item without one reads as 0). Each method is one atomic step of the store, reads are strongly
 * consistent, and a failed condition answers `false` rather than throwing.
 */
export type ItemAttrs = Readonly<Record<string, string | number>>;

export interface StoredItem {
  readonly key: string;
  readonly attrs: ItemAttrs;
  readonly version: number;
}

export interface ClaimStore {
  get(key: string): Promise<StoredItem | null>;
  /** Creates `key` with `attrs` (version 1) unless it exists. */
  putIfAbsent(key: string, attrs: ItemAttrs): Promise<boolean>;
  /** Replaces `key`'s attributes with `attrs` (version + 1) if it exists at `version`. */
  putIfVersion(key: string, attrs: ItemAttrs, version: number): Promise<boolean>;
  /** Deletes `key` if it exists at `version`. */
  deleteIf(key: string, version: number): Promise<boolean>;
  /** Adds `by` to the number `attr` of `key` (creating both at 0 first) and answers the new value. */
  increment(key: string, attr: string, by: number): Promise<number>;
  /** Items with keys in `from..to` (inclusive, string order), ascending, at most `limit` of them. */
  list(from: string, to: string, limit?: number): Promise<StoredItem[]>;
  /** Number of items with keys in `from..to`. */
  count(from: string, to: string): Promise<number>;
}

/** The claim store in memory: one process. Each method is atomic (no await before its last step). */
export class MemoryClaimStore implements ClaimStore {
  private readonly items = new Map<string, { attrs: ItemAttrs; version: number }>();

  async get(key: string): Promise<StoredItem | null> {
    const item = this.items.get(key);
    return item === undefined ? null : { key, attrs: item.attrs, version: item.version };
  }

  async putIfAbsent(key: string, attrs: ItemAttrs): Promise<boolean> {
    if (this.items.has(key)) return false;
    this.items.set(key, { attrs: { ...attrs }, version: 1 });
    return true;
  }

  async putIfVersion(key: string, attrs: ItemAttrs, version: number): Promise<boolean> {
    const item = this.items.get(key);
    if (item === undefined || item.version !== version) return false;
    this.items.set(key, { attrs: { ...attrs }, version: version + 1 });
    return true;
  }

  async deleteIf(key: string, version: number): Promise<boolean> {
    const item = this.items.get(key);
    if (item === undefined || item.version !== version) return false;
    this.items.delete(key);
    return true;
  }

  async increment(key: string, attr: string, by: number): Promise<number> {
    const item = this.items.get(key);
    const before = item?.attrs[attr];
    const next = (typeof before === 'number' ? before : 0) + by;
    this.items.set(key, { attrs: { ...item?.attrs, [attr]: next }, version: item?.version ?? 1 });
    return next;
  }

  async list(from: string, to: string, limit = Number.POSITIVE_INFINITY): Promise<StoredItem[]> {
    const keys = [...this.items.keys()].filter((key) => key >= from && key <= to).sort();
    return keys.slice(0, limit).map((key) => {
      const item = this.items.get(key);
      return { key, attrs: item?.attrs ?? {}, version: item?.version ?? 0 };
    });
  }

  async count(from: string, to: string): Promise<number> {
    let n = 0;
    for (const key of this.items.keys()) if (key >= from && key <= to) n++;
    return n;
  }
}
