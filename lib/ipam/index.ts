export { createCidrSet, CidrSetError, MAX_IPV6_SUBNET_BITS } from './cidr-set.ts';
export type { CidrSet, CidrSetErrorCode, CidrSetOptions, Lease } from './cidr-set.ts';
export type { BlockLease, CidrStore, RepairReport } from './cidr-store.ts';
export { ClaimProtocolStore } from './claim-protocol.ts';
export { blockKey, ownerKey } from './claim-items.ts';
export type { ClaimProtocolOptions } from './claim-protocol.ts';
export { MemoryClaimStore } from './claim-store.ts';
export type { ClaimStore, ItemAttrs, StoredItem } from './claim-store.ts';
export { MemoryCidrStore } from './memory-cidr-store.ts';
