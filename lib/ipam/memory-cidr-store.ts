import type { BlockLease } from './cidr-store.ts';
import { CURSOR_KEY, CURSOR_ATTR } from './claim-items.ts';
import { ClaimProtocolStore } from './claim-protocol.ts';
import { MemoryClaimStore } from './claim-store.ts';

/**
 * The in-memory CIDR store: the claim protocol (claim-protocol.ts) over the in-memory claim store,
 * so memory and DynamoDB allocate by one path. One process, one set.
 *
 * No lease it gives carries the protocol's `since`: in memory nothing stamps a time (the protocol's
 * clock stays at 0), so each is of unknown age, never past the grace period (lib/usecases/absence.ts
 * `pastGrace`). Listed leases are blocks and owners only, also without `version`: their release is
 * scoped by the owner (CidrSet.releaseLease); an owned lease keeps its version.
 */
export class MemoryCidrStore extends ClaimProtocolStore {
  private readonly claims: MemoryClaimStore;

  constructor() {
    const claims = new MemoryClaimStore();
    super(claims);
    this.claims = claims;
  }

  override async leases(): Promise<BlockLease[]> {
    return (await super.leases()).map(({ index, owner }) => ({ index, owner }));
  }

  override async ownedLease(owner: string): Promise<BlockLease | null> {
    const lease = await super.ownedLease(owner);
    if (lease === null) return null;
    const { since: _unstamped, ...withoutSince } = lease;
    return withoutSince;
  }

  /** Where the next round-robin search starts (the tickets drawn so far), as upstream's `nextCandidate`. */
  async readCursor(): Promise<number> {
    const cursor = await this.claims.get(CURSOR_KEY);
    const pos = cursor?.attrs[CURSOR_ATTR];
    return typeof pos === 'number' ? pos : 0;
  }

  /** Moves the cursor, as upstream's tests set `nextCandidate`. */
  async writeCursor(next: number): Promise<void> {
    await this.claims.increment(CURSOR_KEY, CURSOR_ATTR, next - (await this.readCursor()));
  }
}
