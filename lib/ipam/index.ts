export { createCidrSet, CidrSetError, MAX_IPV6_SUBNET_BITS } from './cidr-set.ts';
export type { CidrSet, CidrSetErrorCode, CidrSetOptions, Lease } from './cidr-set.ts';
export type { BlockLease, CidrStore, ClaimResult } from './cidr-store.ts';
export { MemoryCidrStore } from './memory-cidr-store.ts';
