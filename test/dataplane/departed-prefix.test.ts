/**
 * A departed node's prefix (lib/dataplane/prefixes/departed-prefix.ts): the decider, table by table,
 * and its applier over the in-memory EniPrefixes (lib/dataplane/prefixes/free-departed-prefix.ts).
 */
import { describe, expect, it } from 'vitest';
import { decideDepartedPrefix } from '../../lib/dataplane/prefixes/departed-prefix.ts';
import type { DepartedOwner, DepartedPrefixStep, PrefixHolding } from '../../lib/dataplane/prefixes/departed-prefix.ts';
import { freeDepartedPrefix } from '../../lib/dataplane/prefixes/free-departed-prefix.ts';
import { MemoryEniPrefixes } from '../fakes/memory-eni-prefixes.ts';
import { MemorySubnets } from '../fakes/memory-subnets.ts';

describe('decideDepartedPrefix', () => {
  it.each<[string, PrefixHolding, DepartedOwner, DepartedPrefixStep]>([
    ['a node\'s: no interface holds it (interface gone, or prefix taken off)', { kind: 'none' }, 'node', { kind: 'release' }],
    ['a node\'s: a live interface still holds it', { kind: 'held', networkInterfaceId: 'eni-0a' }, 'node', { kind: 'unassign', networkInterfaceId: 'eni-0a' }],
    ['a node\'s: the holder could not be read', { kind: 'unread', error: 'RequestLimitExceeded' }, 'node', { kind: 'keep', why: 'holder-unread', error: 'RequestLimitExceeded' }],
    ['a hold\'s: nothing holds it any more', { kind: 'none' }, 'cloud-hold', { kind: 'release' }],
    ['a hold\'s: an interface holds it (never podroute\'s to take off)', { kind: 'held', networkInterfaceId: 'eni-0b' }, 'cloud-hold', { kind: 'keep', why: 'held-elsewhere', networkInterfaceId: 'eni-0b' }],
    ['a hold\'s: the holder could not be read', { kind: 'unread', error: 'timeout' }, 'cloud-hold', { kind: 'keep', why: 'holder-unread', error: 'timeout' }],
  ])('%s', (_name, holding, owner, step) => {
    expect(decideDepartedPrefix(holding, owner)).toEqual(step);
  });
});

function world(): { eni: MemoryEniPrefixes; instanceId: string; networkInterfaceId: string } {
  const subnets = new MemorySubnets();
  const subnet = subnets.addSubnet({ cidrs: ['10.0.0.0/20', '2600:1f18:1234:5600::/64'] });
  const eni = new MemoryEniPrefixes(subnets);
  const { instanceId, networkInterfaceId } = eni.addInstance(subnet.subnetId, ['10.0.4.0/28', '2600:1f18:1234:5600:1::/80', '10.0.4.16/28']);
  return { eni, instanceId, networkInterfaceId };
}

describe('freeDepartedPrefix', () => {
  it.each(['10.0.4.0/28', '2600:1f18:1234:5600:1::/80'])('takes %s off the live interface that holds it, then lets the lease go; other prefixes stay', async (prefix) => {
    const { eni, instanceId, networkInterfaceId } = world();
    expect(await freeDepartedPrefix(eni, prefix, 'node-a', async () => true)).toEqual({ release: true, unassignedFrom: networkInterfaceId });
    const left = (await eni.describeInterfaces([instanceId])).get(instanceId)?.prefixes;
    expect(left).not.toContain(prefix);
    expect(left).toHaveLength(2);
  });

  it('lets the lease go without a write when the instance and its interface are gone', async () => {
    const { eni, instanceId } = world();
    eni.terminate(instanceId);
    expect(await freeDepartedPrefix(eni, '10.0.4.0/28', 'node-a')).toEqual({ release: true });
    expect(eni.count('unassignPrefix')).toBe(0);
  });

  it('keeps the lease when the holder cannot be read, and writes nothing', async () => {
    const { eni } = world();
    const failing = { prefixDelegation: async () => Promise.reject(new Error('RequestLimitExceeded')), unassignPrefix: eni.unassignPrefix.bind(eni) };
    expect(await freeDepartedPrefix(failing, '10.0.4.0/28', 'node-a')).toEqual({ release: false, why: 'holder-unread: RequestLimitExceeded' });
    expect(eni.count('unassignPrefix')).toBe(0);
  });

  it('keeps a hold while an interface holds its prefix, and writes nothing', async () => {
    const { eni, networkInterfaceId } = world();
    expect(await freeDepartedPrefix(eni, '10.0.4.0/28', 'ec2:prefix-in-use')).toEqual({ release: false, why: `held-elsewhere: ${networkInterfaceId}` });
    expect(eni.count('unassignPrefix')).toBe(0);
  });

  it.each([
    ['without a re-read (node-left, a NodeLeft event)', undefined, /still-delegated/],
    ['when the re-read finds the owner again', async () => false, /changed before the unassign/],
    ['when the re-read fails', async () => Promise.reject(new Error('timeout')), /changed before the unassign/],
  ])('keeps a still-delegated prefix on its interface %s', async (_case, stillGone, why) => {
    const { eni, instanceId } = world();
    const freed = await freeDepartedPrefix(eni, '10.0.4.0/28', 'node-a', stillGone);
    expect(freed).toMatchObject({ release: false });
    expect(freed.release === false && freed.why).toMatch(why);
    expect(eni.count('unassignPrefix')).toBe(0);
    expect((await eni.describeInterfaces([instanceId])).get(instanceId)?.prefixes).toContain('10.0.4.0/28');
  });

  it('keeps the lease when EC2 refuses the unassign', async () => {
    const { networkInterfaceId } = world();
    const refusing = { prefixDelegation: async () => networkInterfaceId, unassignPrefix: async () => Promise.reject(new Error('UnauthorizedOperation')) };
    const freed = await freeDepartedPrefix(refusing, '10.0.4.0/28', 'node-a', async () => true);
    expect(freed).toMatchObject({ release: false });
    expect(freed.release === false && freed.why).toMatch(/UnauthorizedOperation/);
  });
});
