export { createCidrSet, CidrSetError, fullSetError, MAX_IPV6_SUBNET_BITS } from './cidr-set.ts';
export type { CidrSet, CidrSetErrorCode, Lease } from './cidr-set.ts';
export type { CidrStore } from './cidr-store.ts';
export { ClaimProtocolStore } from './claim-protocol.ts';
export { MemoryClaimStore } from './claim-store.ts';
