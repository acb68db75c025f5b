/**
 * A prefixes-mode departure check (`releaseIfGone`) over in-memory parts: the node source, one CIDR
 * set, the interfaces' prefixes, and a fake clock, with the lease grace `DEPARTURE_GRACE_SECONDS`.
 */
import { freeDepartedPrefix } from '../../lib/dataplane/prefixes/free-departed-prefix.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { releaseIfGone, type NodeLeftResult } from '../../lib/usecases/node-left.ts';
import type { MemoryNodeSource } from '../fakes/memory-node-source.ts';
import type { FakeClock } from './clock.ts';

export const DEPARTURE_GRACE_SECONDS = 600;

export function releasePrefixIfGone(
  name: string,
  parts: { nodes: MemoryNodeSource; set: CidrSet; prefixes: Parameters<typeof freeDepartedPrefix>[0]; clock: FakeClock },
): Promise<NodeLeftResult> {
  return releaseIfGone(name, {
    nodes: parts.nodes,
    leaseSets: async () => [parts.set],
    freeDepartedBlock: (cidr, owner) => freeDepartedPrefix(parts.prefixes, cidr, owner),
    log: memoryLogger(),
    now: parts.clock.now,
    leaseGraceSeconds: DEPARTURE_GRACE_SECONDS,
  });
}
