/**
 * Prefixes mode: a node's leave races its same-name re-join on the same instance. The lease's
 * release is conditional on the version read before the 404, but the prefix is taken off the
 * interface before that release is tried, on a holder read alone: a re-join that renewed the lease
 * (and whose prefix is already on its interface, so its worker reads it in sync) must keep both
 * its lease and its prefix. Forced deterministically: the re-join's admission renews the lease at
 * the keyed node read (it answers 404 first), or at the holder read. Over the claim protocol in
 * memory and the in-memory EniPrefixes the prefixes plane uses (freeDepartedPrefix).
 */
import { describe, expect, it } from 'vitest';
import { createCidrSet } from '../../lib/ipam/index.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { MemoryEniPrefixes } from '../fakes/memory-eni-prefixes.ts';
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';
import { MemorySubnets } from '../fakes/memory-subnets.ts';
import { TimedMemoryCidrStore } from '../fakes/timed-memory-cidr-store.ts';
import { FakeClock } from '../support/clock.ts';
import { DEPARTURE_GRACE_SECONDS as GRACE_SECONDS, releasePrefixIfGone } from '../support/prefix-departure.ts';

type Moment = 'at-node-read' | 'at-holder-read';

async function world(clock: FakeClock): Promise<{ set: CidrSet; eni: MemoryEniPrefixes; instanceId: string; prefix: string }> {
  const set = await createCidrSet({ clusterCidr: '10.0.0.0/20', nodeMaskSize: 28, store: new TimedMemoryCidrStore(clock.now) });
  const prefix = await set.allocateNext('node-a');
  const subnets = new MemorySubnets();
  const subnet = subnets.addSubnet({ cidrs: ['10.0.0.0/20'] });
  const eni = new MemoryEniPrefixes(subnets);
  const { instanceId } = eni.addInstance(subnet.subnetId, [prefix]);
  return { set, eni, instanceId, prefix };
}

describe('prefixes mode: node-left and a same-name re-join on the same instance', () => {
  it.each<Moment>(['at-node-read', 'at-holder-read'])('a re-join %s keeps its lease and its prefix on its interface', async (moment) => {
    const clock = new FakeClock();
    const { set, eni, instanceId, prefix } = await world(clock);
    clock.advance(GRACE_SECONDS * 1000 + 1);
    // The kubelet re-registers node-a: the CREATE admission renews the lease (same block).
    const rejoin = async () => {
      clock.advance(1000);
      expect(await set.allocateNext('node-a')).toBe(prefix);
    };
    const nodes = new MemoryNodeSource(clock.now);
    if (moment === 'at-node-read') nodes.onGet = rejoin;
    const prefixes = {
      prefixDelegation: async (cidr: string) => {
        if (moment === 'at-holder-read') await rejoin();
        return eni.prefixDelegation(cidr);
      },
      unassignPrefix: eni.unassignPrefix.bind(eni),
    };
    await releasePrefixIfGone('node-a', { nodes, set, prefixes: prefixes, clock });
    expect((await set.leases()).map((lease) => `${lease.cidr} ${lease.owner}`)).toEqual([`${prefix} node-a`]);
    // The live, re-joined node's prefix must still be delegated to its interface.
    expect((await eni.describeInterfaces([instanceId])).get(instanceId)?.prefixes).toEqual([prefix]);
    expect(eni.count('unassignPrefix')).toBe(0);
  });
});
