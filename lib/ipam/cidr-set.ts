/**
 * A set of equal-sized node blocks carved from one cluster CIDR, with the allocation order, limits
 * and errors of Kubernetes' `cidrset`, over a storage port so that many Lambdas can share it.
 */
import { type Cidr, blockAt, blockCount, blockIndexOf, formatCidr, lastAddress, overlaps, tryParseCidr, addressBits } from '../cidr/cidr.ts';
import { CodedError } from '../errors.ts';
import type { BlockLease, CidrStore, RepairReport } from './cidr-store.ts';
import { MemoryCidrStore } from './memory-cidr-store.ts';

export type CidrSetErrorCode = 'INVALID_CIDR' | 'MASK_TOO_LARGE' | 'FULL' | 'OUT_OF_RANGE';

/** Upstream cidrset's sentinel errors. None is retryable: a full set stays full until a node leaves. */
export class CidrSetError extends CodedError<CidrSetErrorCode> {
  override name = 'CidrSetError';
}

/** The error `allocateNext` rejects with when `set` has no free block (also what a dry run tells). */
export function fullSetError(set: Pick<CidrSet, 'clusterCidr' | 'nodeMaskSize' | 'total'>): CidrSetError {
  return new CidrSetError('FULL', `no free /${set.nodeMaskSize} block left in cluster CIDR ${set.clusterCidr} (${set.total} in all)`);
}

/** An IPv6 node mask may be at most this many bits longer than the cluster mask (upstream's limit). */
export const MAX_IPV6_SUBNET_BITS = 16;

export interface CidrSet {
  /** The cluster CIDR, canonical. */
  readonly clusterCidr: string;
  readonly nodeMaskSize: number;
  /** Number of blocks in the set. */
  readonly total: number;
  /** Next free block in round-robin order; the owner's block when it holds one already. */
  allocateNext(owner?: string): Promise<string>;
  /** Marks every block from the one holding the range's first address to the one holding its last. */
  occupy(cidr: string, owner?: string): Promise<void>;
  /** Frees the blocks of the range; with an owner, only blocks held by it (or by nobody). */
  release(cidr: string, owner?: string): Promise<void>;
  usage(): Promise<{ used: number; total: number }>;
  /** Used blocks as CIDRs with their owners, for reclaiming leases of vanished nodes. */
  leases(): Promise<Lease[]>;
  /**
   * The lease `owner` holds, read by key (the store's owner record: no listing of the set); null
   * when it holds none. For a node's departure: one owner, a few keyed reads.
   */
  ownedLease(owner: string): Promise<Lease | null>;
  /**
   * Frees exactly this lease (as `leases` listed it): not when its block has changed since, e.g.
   * renewed by its owner re-joining. Stores without versions fall back to an owner-scoped release.
   * True when the lease was freed.
   */
  releaseLease(lease: Lease): Promise<boolean>;
  /**
   * Repairs crash leftovers: owners holding blocks without a record (see claim-protocol.ts).
   * `listed`: the leases as `leases` just answered them, so they are not listed again.
   */
  repair(listed?: readonly Lease[]): Promise<RepairReport>;
}

export interface Lease {
  cidr: string;
  owner: string | null;
  /** When the block was taken (epoch ms), where the store records it. */
  since?: number;
  /** The block's version, where the store keeps one. */
  version?: number;
}

interface CidrSetOptions {
  clusterCidr: string;
  nodeMaskSize: number;
  store?: CidrStore;
  /** What the range is called in errors: a cluster CIDR (default) or, in prefixes mode, a pod range. */
  rangeKind?: 'cluster CIDR' | 'pod range';
}

export async function createCidrSet(options: CidrSetOptions): Promise<CidrSet> {
  const cluster = tryParseCidr(options.clusterCidr);
  const kind = options.rangeKind ?? 'cluster CIDR';
  if (!cluster) {
    throw new CidrSetError('INVALID_CIDR', `invalid ${kind} ${JSON.stringify(options.clusterCidr)}`);
  }
  const { nodeMaskSize } = options;
  if (!Number.isInteger(nodeMaskSize) || nodeMaskSize < cluster.prefix || nodeMaskSize > addressBits(cluster.family)) {
    throw new CidrSetError(
      'INVALID_CIDR',
      `node mask size ${String(nodeMaskSize)} must be a whole number from ${cluster.prefix} (the mask of ${kind} ${formatCidr(cluster)}) to ${addressBits(cluster.family)}`,
    );
  }
  if (cluster.family === 6 && nodeMaskSize - cluster.prefix > MAX_IPV6_SUBNET_BITS) {
    throw new CidrSetError(
      'MASK_TOO_LARGE',
      `node mask /${nodeMaskSize} is too large for ${kind} ${formatCidr(cluster)}: an IPv6 node mask may be at most ${MAX_IPV6_SUBNET_BITS} bits longer than its mask`,
    );
  }
  return new StoredCidrSet(cluster, nodeMaskSize, options.store ?? new MemoryCidrStore());
}

class StoredCidrSet implements CidrSet {
  readonly clusterCidr: string;
  readonly total: number;

  constructor(
    private readonly cluster: Cidr,
    readonly nodeMaskSize: number,
    private readonly store: CidrStore,
  ) {
    this.clusterCidr = formatCidr(cluster);
    this.total = Number(blockCount(cluster, nodeMaskSize));
  }

  async allocateNext(owner?: string): Promise<string> {
    const index = await this.store.allocate(owner ?? null, this.total);
    if (index === null) throw fullSetError(this);
    return this.blockText(index);
  }

  async occupy(cidr: string, owner?: string): Promise<void> {
    const [first, last] = this.indicesOf(cidr);
    await this.store.occupy(first, last, owner ?? null);
  }

  async release(cidr: string, owner?: string): Promise<void> {
    const [first, last] = this.indicesOf(cidr);
    await this.store.release(first, last, owner);
  }

  async usage(): Promise<{ used: number; total: number }> {
    return { used: await this.store.usedCount(), total: this.total };
  }

  async leases(): Promise<Lease[]> {
    const leases = await this.store.leases();
    return leases.map((lease) => this.toLease(lease));
  }

  private toLease(lease: BlockLease): Lease {
    return {
      cidr: this.blockText(lease.index),
      owner: lease.owner,
      ...(lease.since === undefined ? {} : { since: lease.since }),
      ...(lease.version === undefined ? {} : { version: lease.version }),
    };
  }

  async ownedLease(owner: string): Promise<Lease | null> {
    const lease = await this.store.ownedLease(owner);
    return lease === null ? null : this.toLease(lease);
  }

  async releaseLease(lease: Lease): Promise<boolean> {
    const [first, last] = this.indicesOf(lease.cidr);
    if (!this.store.releaseLease || lease.version === undefined || first !== last) {
      await this.store.release(first, last, lease.owner ?? undefined);
      return true;
    }
    return this.store.releaseLease({ index: first, owner: lease.owner, version: lease.version });
  }

  async repair(listed?: readonly Lease[]): Promise<RepairReport> {
    if (!this.store.repair) return { records: [] };
    if (listed === undefined) return this.store.repair();
    const blocks = listed.flatMap((lease) => {
      const [first, last] = this.indicesOf(lease.cidr);
      return first === last ? [{ index: first, owner: lease.owner }] : [];
    });
    return this.store.repair(blocks);
  }

  private blockText(index: number): string {
    return formatCidr(blockAt(this.cluster, this.nodeMaskSize, BigInt(index)));
  }

  /** Inclusive block indices covered by `text`, as upstream's getBeginningAndEndIndices. */
  private indicesOf(text: string): [number, number] {
    const cidr = tryParseCidr(text);
    if (!cidr) throw new CidrSetError('INVALID_CIDR', `invalid CIDR ${JSON.stringify(text)}`);
    if (!overlaps(this.cluster, cidr)) {
      throw new CidrSetError('OUT_OF_RANGE', `CIDR ${formatCidr(cidr)} is outside cluster CIDR ${this.clusterCidr}`);
    }
    if (cidr.prefix <= this.cluster.prefix) return [0, this.total - 1];
    return [
      Number(blockIndexOf(this.cluster, this.nodeMaskSize, cidr.network)),
      Number(blockIndexOf(this.cluster, this.nodeMaskSize, lastAddress(cidr))),
    ];
  }
}
