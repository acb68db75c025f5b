/** One in-memory fake per port of lib/usecases/ports.ts, held to test/contracts/. */
export { MemoryClaimCensus } from './memory-claim-census.ts';
export { MemoryDeletionWindow } from './memory-deletion-window.ts';
export { MemoryEniPrefixes } from './memory-eni-prefixes.ts';
export { MemoryNodeSource, type MemoryNodeSpec } from './memory-node-source.ts';
export { MemoryRouteTables } from './memory-route-tables.ts';
export { MemorySubnets } from './memory-subnets.ts';
export { MemoryWorkQueue } from './memory-work-queue.ts';
export { TimedMemoryCidrStore } from './timed-memory-cidr-store.ts';
