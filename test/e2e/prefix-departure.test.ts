/**
 * Prefixes mode end to end: a node that leaves gives its block back only once its prefix is off
 * every interface (lib/dataplane/prefixes/departed-prefix.ts): a Node deleted while its instance
 * runs has its prefix unassigned, then its lease released; a terminated instance's interface takes
 * its prefix with it. Nothing leaks, and a later node gets a block EC2 accepts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable } from './helpers.ts';

describe('prefixes mode: a node leaves', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ mode: 'prefixes', dualStack: true, subnets: 1, timeScale: 10 });
    for (const name of ['dep-1', 'dep-2', 'dep-3']) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  const delegatedTo = (instanceId: string): string[] => {
    const eni = sandbox.ec2.state.primaryInterface(instanceId);
    return [...(eni?.ipv4Prefixes ?? []), ...(eni?.ipv6Prefixes ?? [])];
  };
  const unassigns = (): number => (sandbox.ec2.stats.calls.UnassignPrivateIpAddresses ?? 0) + (sandbox.ec2.stats.calls.UnassignIpv6Addresses ?? 0);
  const leasedTo = async (name: string): Promise<string[]> => (await leaseLines(sandbox)).filter((line) => line.endsWith(`=${name}`));

  it('a Node deleted while its instance runs: its prefixes come off the running interface, then its leases go', async () => {
    const instanceId = instanceOf(sandbox, 'dep-1');
    const cidrs = cidrsOf(sandbox, 'dep-1');
    expect(delegatedTo(instanceId).sort()).toEqual([...cidrs].sort());
    const before = unassigns();

    await sandbox.leaveNode('dep-1', { terminate: false });
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    expect(sandbox.ec2.state.instances.get(instanceId)?.state).toBe('running');
    expect(delegatedTo(instanceId)).toEqual([]);
    expect(unassigns() - before).toBe(cidrs.length);
    expect(await leasedTo('dep-1')).toEqual([]);
    expect(report).toMatchObject({ leakedCidrs: 0, dlqMessages: 0 });
  });

  it('a node whose instance is terminated: its leases go, and nothing is unassigned', async () => {
    const before = unassigns();
    await sandbox.leaveNode('dep-2');
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    expect(unassigns()).toBe(before);
    expect(await leasedTo('dep-2')).toEqual([]);
    expect(report).toMatchObject({ leakedCidrs: 0, dlqMessages: 0 });
  });

  it('later nodes get blocks EC2 delegates: no block is held for the cloud, none is leased twice', async () => {
    for (const name of ['dep-4', 'dep-5']) await sandbox.joinNode(name);
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    for (const name of ['dep-3', 'dep-4', 'dep-5']) {
      expect(networkUnavailable(sandbox, name)).toBe('False');
      expect(delegatedTo(instanceOf(sandbox, name)).sort()).toEqual([...cidrsOf(sandbox, name)].sort());
    }
    expect((await leaseLines(sandbox)).filter((line) => line.endsWith('=ec2:prefix-in-use'))).toEqual([]);
    expect(report).toMatchObject({ nodes: 3, nodesReady: 3, leakedCidrs: 0, duplicateCidrs: 0, dlqMessages: 0 });
  });
});
