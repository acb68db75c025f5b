/**
 * The scale bench's lease table stand-in: one CIDR set's claim items at steady state, computed from
 * the node numbering instead of stored, so the bench process holds no copy of the cluster's leases
 * (as DynamoDB holds them outside the Lambda). Node `i` of the set holds block `blockOf(i)`, stamped
 * at time 0 with version 1, and its owner record names that block: the items the claim protocol
 * writes when it occupies a node's pod CIDR (lib/ipam/claim-protocol.ts `occupy`, keys and
 * attributes of lib/ipam/claim-items.ts). A write lands in an overlay and is counted: a converged
 * reconcile makes none.
 */
import type { ClaimStore, ItemAttrs, StoredItem } from '../lib/ipam/claim-store.ts';
import { blockKey, ownerKey } from '../lib/ipam/claim-items.ts';

export class SteadyClaimStore implements ClaimStore {
  private readonly overlay = new Map<string, { attrs: ItemAttrs; version: number } | null>();
  /** Conditional writes and increments made (a steady-state run: 0). */
  writes = 0;

  /**
   * @param nodes the set's nodes: bench numbers `first` to `end - 1`
   * @param numbering node `i`'s block index in this set and name (its lease's owner), and back
   */
  constructor(
    private readonly nodes: { first: number; end: number },
    private readonly numbering: {
      blockOf(i: number): number;
      nodeOfBlock(index: number): number | null;
      nameOf(i: number): string;
      nodeOfName(name: string): number | null;
    },
  ) {}

  private has(i: number | null): i is number {
    return i !== null && i >= this.nodes.first && i < this.nodes.end;
  }

  /** The item as first stored (null when the set has no such item). */
  private base(key: string): { attrs: ItemAttrs; version: number } | null {
    const { blockOf, nodeOfBlock, nameOf, nodeOfName } = this.numbering;
    if (key.startsWith('b#')) {
      const i = nodeOfBlock(Number(key.slice(2)));
      return this.has(i) && blockKey(blockOf(i)) === key ? { attrs: { owner: nameOf(i), since: 0 }, version: 1 } : null;
    }
    if (key.startsWith('o#')) {
      const i = nodeOfName(key.slice(2));
      return this.has(i) && ownerKey(nameOf(i)) === key ? { attrs: { index: blockOf(i), since: 0 }, version: 1 } : null;
    }
    return null;
  }

  /** Every item in `from..to` as stored now, in key order. Built per call: only a listing holds it. */
  private items(from: string, to: string): StoredItem[] {
    const out: StoredItem[] = [];
    const { blockOf, nameOf } = this.numbering;
    const add = (key: string) => {
      if (key < from || key > to || this.overlay.has(key)) return;
      const item = this.base(key);
      if (item) out.push({ key, ...item });
    };
    for (let i = this.nodes.first; i < this.nodes.end; i++) {
      add(blockKey(blockOf(i)));
      add(ownerKey(nameOf(i)));
    }
    for (const [key, item] of this.overlay) if (item !== null && key >= from && key <= to) out.push({ key, attrs: item.attrs, version: item.version });
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async get(key: string): Promise<StoredItem | null> {
    const item = this.overlay.has(key) ? this.overlay.get(key) ?? null : this.base(key);
    return item === null ? null : { key, attrs: item.attrs, version: item.version };
  }

  async putIfAbsent(key: string, attrs: ItemAttrs): Promise<boolean> {
    if ((await this.get(key)) !== null) return false;
    this.writes += 1;
    this.overlay.set(key, { attrs: { ...attrs }, version: 1 });
    return true;
  }

  async putIfVersion(key: string, attrs: ItemAttrs, version: number): Promise<boolean> {
    const item = await this.get(key);
    if (item === null || item.version !== version) return false;
    this.writes += 1;
    this.overlay.set(key, { attrs: { ...attrs }, version: version + 1 });
    return true;
  }

  async deleteIf(key: string, version: number): Promise<boolean> {
    const item = await this.get(key);
    if (item === null || item.version !== version) return false;
    this.writes += 1;
    this.overlay.set(key, null);
    return true;
  }

  async increment(key: string, attr: string, by: number): Promise<number> {
    const item = await this.get(key);
    const before = item?.attrs[attr];
    const next = (typeof before === 'number' ? before : 0) + by;
    this.writes += 1;
    this.overlay.set(key, { attrs: { ...item?.attrs, [attr]: next }, version: item?.version ?? 1 });
    return next;
  }

  async list(from: string, to: string, limit = Number.POSITIVE_INFINITY): Promise<StoredItem[]> {
    return this.items(from, to).slice(0, limit);
  }

  async count(from: string, to: string): Promise<number> {
    return this.items(from, to).length;
  }
}
