/**
 * The EniPrefixes contract (lib/usecases/ports.ts): the interfaces of prefixes mode and the prefixes
 * delegated to them, run against MemoryEniPrefixes and Ec2EniPrefixes over the EC2 emulator
 * (ec2-network.contract.test.ts). Amazon EC2 User Guide, "Assign prefixes to network interfaces":
 * IPv4 /28 and IPv6 /80 prefixes inside the interface's subnet, each delegated to one interface.
 */
import { describe, expect, it } from 'vitest';
import { containsCidr, overlaps, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { PrefixUnavailableError, ResourceNotFoundError } from '../../lib/usecases/port-errors.ts';
import type { EniPrefixes, SubnetReservation } from '../../lib/usecases/ports.ts';

export interface EniPrefixesHarness {
  port: EniPrefixes;
  addSubnet(input: { cidrBlock: string; ipv6CidrBlock?: string; availabilityZone: string }): string;
  addReservation(subnetId: string, input: { cidr: string; type: SubnetReservation['type'] }): string;
  addInstance(subnetId: string): { instanceId: string; eniId: string };
}

const inside = (outer: string, inner: string): boolean => {
  const [a, b] = [tryParseCidr(outer), tryParseCidr(inner)];
  return a !== null && b !== null && containsCidr(a, b);
};
const overlapping = (x: string, y: string): boolean => {
  const [a, b] = [tryParseCidr(x), tryParseCidr(y)];
  return a !== null && b !== null && overlaps(a, b);
};

export function eniPrefixesContract(name: string, make: () => Promise<EniPrefixesHarness>): void {
  describe(`EniPrefixes contract: ${name}`, () => {
    const dualStack = (h: EniPrefixesHarness) => h.addSubnet({ cidrBlock: '10.0.0.0/20', ipv6CidrBlock: '2600:1f18:1234:5600::/64', availabilityZone: 'us-east-1a' });

    it('describes the primary interfaces of the instances asked for; unknown ones are absent', async () => {
      const h = await make();
      const subnet = dualStack(h);
      const [a, b] = [h.addInstance(subnet), h.addInstance(subnet)];
      const found = await h.port.describeInterfaces([a.instanceId, b.instanceId, a.instanceId, 'i-0000000000000dead']);
      expect([...found.keys()].sort()).toEqual([a.instanceId, b.instanceId].sort());
      expect(found.get(a.instanceId)).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, subnetId: subnet, prefixes: [] });
    });

    it.each(['10.0.5.0/28', '2600:1f18:1234:5600:1::/80'])('delegates %s to one interface only: again, or to another, is a PrefixUnavailableError', async (prefix) => {
      const h = await make();
      const subnet = dualStack(h);
      const [a, b] = [h.addInstance(subnet), h.addInstance(subnet)];
      await h.port.assignPrefix(a.eniId, prefix);
      expect((await h.port.describeInterfaces([a.instanceId])).get(a.instanceId)?.prefixes).toEqual([prefix]);
      await expect(h.port.assignPrefix(a.eniId, prefix)).rejects.toBeInstanceOf(PrefixUnavailableError);
      const refused = await h.port.assignPrefix(b.eniId, prefix).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PrefixUnavailableError);
      expect(refused).toMatchObject({ prefix, retryable: false });
      expect((await h.port.describeInterfaces([b.instanceId])).get(b.instanceId)?.prefixes).toEqual([]);
      expect(await h.port.prefixHolder?.(subnet, prefix)).toBe(a.eniId);
    });

    it('refuses a prefix outside the subnet, or holding its reserved first addresses, with a PrefixUnavailableError', async () => {
      const h = await make();
      const subnet = dualStack(h);
      const a = h.addInstance(subnet);
      for (const prefix of ['10.0.64.0/28', '10.0.0.0/28']) await expect(h.port.assignPrefix(a.eniId, prefix)).rejects.toBeInstanceOf(PrefixUnavailableError);
      expect((await h.port.describeInterfaces([a.instanceId])).get(a.instanceId)?.prefixes).toEqual([]);
    });

    it.each(['10.0.5.0/24', '2600:1f18:1234:5600::/64', 'pods'])('refuses %s (not a delegable prefix) with an InvalidInputError and delegates nothing', async (prefix) => {
      const h = await make();
      const subnet = dualStack(h);
      const a = h.addInstance(subnet);
      await expect(h.port.assignPrefix(a.eniId, prefix)).rejects.toBeInstanceOf(InvalidInputError);
      expect((await h.port.describeInterfaces([a.instanceId])).get(a.instanceId)?.prefixes).toEqual([]);
    });

    it('an automatic prefix comes from the subnet\'s `prefix` reservation, and is free', async () => {
      const h = await make();
      const subnet = dualStack(h);
      h.addReservation(subnet, { cidr: '10.0.8.0/22', type: 'prefix' });
      const [a, b] = [h.addInstance(subnet), h.addInstance(subnet)];
      const first = await h.port.assignAnyPrefix(a.eniId, 4);
      const second = await h.port.assignAnyPrefix(b.eniId, 4);
      for (const prefix of [first, second]) expect([inside('10.0.8.0/22', prefix), tryParseCidr(prefix)?.prefix]).toEqual([true, 28]);
      expect(overlapping(first, second)).toBe(false);
      expect((await h.port.describeInterfaces([a.instanceId])).get(a.instanceId)?.prefixes).toEqual([first]);
    });

    it('without a `prefix` reservation, an automatic prefix lies in the subnet and outside its `explicit` reservations', async () => {
      const h = await make();
      const subnet = h.addSubnet({ cidrBlock: '10.0.16.0/24', ipv6CidrBlock: '2600:1f18:1234:5601::/64', availabilityZone: 'us-east-1b' });
      h.addReservation(subnet, { cidr: '10.0.16.0/25', type: 'explicit' });
      const a = h.addInstance(subnet);
      const v4 = await h.port.assignAnyPrefix(a.eniId, 4);
      expect([inside('10.0.16.128/25', v4), tryParseCidr(v4)?.prefix]).toEqual([true, 28]);
      const v6 = await h.port.assignAnyPrefix(a.eniId, 6);
      expect([inside('2600:1f18:1234:5601::/64', v6), tryParseCidr(v6)?.prefix]).toEqual([true, 80]);
      expect((await h.port.describeInterfaces([a.instanceId])).get(a.instanceId)?.prefixes.sort()).toEqual([v4, v6].sort());
    });

    it.each(['10.0.5.16/28', '2600:1f18:1234:5600:2::/80'])('finds the holder of %s anywhere; unassigned, it has none and another interface may take it', async (prefix) => {
      const h = await make();
      const subnet = dualStack(h);
      const [a, b] = [h.addInstance(subnet), h.addInstance(subnet)];
      await h.port.assignPrefix(a.eniId, prefix);
      expect(await h.port.prefixDelegation(prefix)).toBe(a.eniId);
      await h.port.unassignPrefix(a.eniId, prefix);
      expect(await h.port.prefixDelegation(prefix)).toBeNull();
      expect((await h.port.describeInterfaces([a.instanceId])).get(a.instanceId)?.prefixes).toEqual([]);
      await h.port.assignPrefix(b.eniId, prefix);
      expect(await h.port.prefixDelegation(prefix)).toBe(b.eniId);
    });

    it('refuses to unassign a prefix the interface does not hold, and takes nothing off', async () => {
      const h = await make();
      const subnet = dualStack(h);
      const [a, b] = [h.addInstance(subnet), h.addInstance(subnet)];
      await h.port.assignPrefix(a.eniId, '10.0.5.32/28');
      await expect(h.port.unassignPrefix(b.eniId, '10.0.5.32/28')).rejects.toBeInstanceOf(Error);
      expect(await h.port.prefixDelegation('10.0.5.32/28')).toBe(a.eniId);
    });

    it('a prefix in no subnet has no holder', async () => {
      const h = await make();
      dualStack(h);
      expect(await h.port.prefixDelegation('172.31.200.0/28')).toBeNull();
    });

    it('finds no holder for a free prefix; an unknown interface is a ResourceNotFoundError', async () => {
      const h = await make();
      const subnet = dualStack(h);
      h.addInstance(subnet);
      expect(await h.port.prefixHolder?.(subnet, '10.0.6.0/28')).toBeNull();
      await expect(h.port.assignPrefix('eni-0000000000000dead', '10.0.6.0/28')).rejects.toBeInstanceOf(ResourceNotFoundError);
    });
  });
}
