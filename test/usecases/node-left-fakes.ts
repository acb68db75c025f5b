/** For node-left's tests: nodes in the shared node source (test/fakes), and the check's clock. */
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';

export const node = (name: string, podCIDR: string) => ({ name, podCIDR });

/** The shared node source holding these nodes (each on one instance); `count('listNodes')` tells whether any listing was made. */
export function nodeSource(live: ReadonlyArray<{ name: string; podCIDR: string }>): MemoryNodeSource {
  const nodes = new MemoryNodeSource();
  for (const { name, podCIDR } of live) nodes.add(name, { instanceId: 'i-0123456789abcdef0', podCidrs: [podCIDR] });
  return nodes;
}

/**
 * The check's clock and grace period for stores that stamp leases at 0 or 1 (the claim protocol's
 * default clock, a fixed one): every lease is past the grace period, so a 404 may free it.
 */
export const PAST_GRACE = { now: () => 3_600_000, leaseGraceSeconds: 600 };
