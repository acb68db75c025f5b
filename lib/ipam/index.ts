export { createCidrSet, CidrSetError, MAX_IPV6_SUBNET_BITS } from './cidr-set.ts';
export type { CidrSet, CidrSetErrorCode, Lease } from './cidr-set.ts';
export type { BlockLease, CidrStore } from './cidr-store.ts';
export { ClaimProtocolStore } from './claim-protocol.ts';
export { blockKey } from './claim-items.ts';
export { MemoryClaimStore } from './claim-store.ts';
export type { ClaimStore, ItemAttrs, StoredItem } from './claim-store.ts';
export { MemoryCidrStore } from './memory-cidr-store.ts';
