/**
 * Prefixes mode: a departure (the node-left check, a signed NodeLeft) for an owner whose lease
 * names a block a live, stored node carries as its pod CIDR, delegated to that node's interface (a
 * lease table that disagrees with the cluster, e.g. restored from a backup older than the node's
 * join; or a replayed NodeLeft for a name whose block moved). Reclaim keeps such a lease
 * (lib/usecases/lease-release.ts: `still-delegated`, a prefix on an interface the run read); the
 * departure path must not take a live node's prefix off its interface either. Over the claim protocol in memory and the
 * in-memory EniPrefixes the prefixes plane uses (freeDepartedPrefix).
 */
import { describe, expect, it } from 'vitest';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { MemoryEniPrefixes } from '../fakes/memory-eni-prefixes.ts';
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';
import { MemorySubnets } from '../fakes/memory-subnets.ts';
import { TimedMemoryCidrStore } from '../fakes/timed-memory-cidr-store.ts';
import { FakeClock } from '../support/clock.ts';
import { DEPARTURE_GRACE_SECONDS as GRACE_SECONDS, releasePrefixIfGone } from '../support/prefix-departure.ts';

describe("prefixes mode: a gone owner's lease on a live node's delegated pod CIDR", () => {
  it("leaves the live node's prefix on its interface", async () => {
    const clock = new FakeClock();
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/20', nodeMaskSize: 28, store: new TimedMemoryCidrStore(clock.now) });
    const prefix = await set.allocateNext('gone-node');
    const subnets = new MemorySubnets();
    const subnet = subnets.addSubnet({ cidrs: ['10.0.0.0/20'] });
    const eni = new MemoryEniPrefixes(subnets);
    const live = eni.addInstance(subnet.subnetId, [prefix]);
    const nodes = new MemoryNodeSource(clock.now);
    nodes.add('live-node', { instanceId: live.instanceId, podCidrs: [prefix], networkUnavailable: 'False' });
    clock.advance(GRACE_SECONDS * 1000 + 1);
    await releasePrefixIfGone('gone-node', { nodes, set, prefixes: eni, clock });
    expect((await eni.describeInterfaces([live.instanceId])).get(live.instanceId)?.prefixes).toEqual([prefix]);
    expect(eni.count('unassignPrefix')).toBe(0);
  });
});
