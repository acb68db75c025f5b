/**
 * Prefixes mode end to end: a Node deleted while its instance runs, and a kubelet on that instance
 * registering again. Under the same name the node gets its own lease back and is ready; under a new
 * name it is ready too, since the old Node is gone (its holder reads 404 in the worker's instance
 * check, lib/dataplane/prefixes/prefix-instance.ts), and the old node's prefix comes off the
 * interface and its lease goes. A new name registered while the old Node is still stored is
 * refused by the worker (`instance-of-another-node`), and converges once that Node is deleted.
 * Each re-join's admission follows a clear reconcile run: keyed, unless the old node's release came
 * first (a release pauses keyed admissions); the shared-instance case has a sandbox of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable } from './helpers.ts';

let sandbox: Sandbox;
const delegatedTo = (instanceId: string): string[] => {
  const eni = sandbox.ec2.state.primaryInterface(instanceId);
  return [...(eni?.ipv4Prefixes ?? []), ...(eni?.ipv6Prefixes ?? [])].sort();
};
/** How the admission of `name` read (lib/usecases/claim-census.ts): 'keyed' or 'listing'. */
const readsOf = (name: string): unknown[] => sandbox.logLines.filter((l) => l.event === 'webhook.admitted' && l.node === name).map((l) => l.reads);
/** Waits until the worker has answered the admission's `sync-node` of `name`; its status or refusal. */
const workerAnswer = async (name: string): Promise<unknown> => {
  for (let waited = 0; waited < 20_000; waited += 100) {
    const line = sandbox.logLines.find((l) => (l.event === 'message.refused' || l.event === 'message.done') && l.kind === 'sync-node' && l.node === name);
    if (line) return line.event === 'message.refused' ? `refused:${String(line.reason)}` : line.status;
    await sleep(100);
  }
  throw new Error(`no worker answer for ${name}`);
};
const leasedTo = async (name: string): Promise<string[]> => (await leaseLines(sandbox)).filter((line) => line.endsWith(`=${name}`));

describe('prefixes mode: a node re-joins on its running instance', () => {
  beforeAll(async () => {
    sandbox = await startSandbox({ mode: 'prefixes', dualStack: true, subnets: 1 });
    for (const name of ['rj-1', 'rj-2', 'rj-3']) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('under the same name: ready, with exactly its pod CIDRs on the interface', async () => {
    const instanceId = instanceOf(sandbox, 'rj-1');
    // A reconcile run records a clear census, so the re-join's admission reads by key.
    await sandbox.tick();
    await sandbox.leaveNode('rj-1', { terminate: false });
    await sandbox.joinNode('rj-1', { instanceId });
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    // Keyed unless rj-1's node-left check found the Node gone between the delete and the re-join and
    // released its block first (a release pauses keyed admissions, docs/decisions/0030).
    expect(['keyed', 'listing']).toContain(readsOf('rj-1').at(-1));
    expect(networkUnavailable(sandbox, 'rj-1')).toBe('False');
    expect(delegatedTo(instanceId)).toEqual([...cidrsOf(sandbox, 'rj-1')].sort());
    expect(report).toMatchObject({ duplicateCidrs: 0, leakedCidrs: 0, dlqMessages: 0 });
  });

  it('under a new name after the old Node was deleted: ready, and the old lease and prefix go', async () => {
    const instanceId = instanceOf(sandbox, 'rj-2');
    await sandbox.tick();
    await sandbox.leaveNode('rj-2', { terminate: false });
    await sandbox.joinNode('rj-2-again', { instanceId });
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    // Keyed or listing, as it comes: rj-2's node-left check (a second after the delete) releases its
    // block, and a release pauses keyed admissions (docs/decisions/0030); both are the contract.
    expect(readsOf('rj-2-again')).toHaveLength(1);
    // The worker delegated it: the departed holder of the prefix on the interface contested nothing.
    expect(sandbox.logLines.filter((l) => l.event === 'message.refused' && l.node === 'rj-2-again').map((l) => l.reason)).toEqual([]);
    expect(networkUnavailable(sandbox, 'rj-2-again')).toBe('False');
    expect(delegatedTo(instanceId)).toEqual([...cidrsOf(sandbox, 'rj-2-again')].sort());
    expect(await leasedTo('rj-2')).toEqual([]);
    expect(report).toMatchObject({ duplicateCidrs: 0, leakedCidrs: 0, dlqMessages: 0 });
  });
});

// Its own sandbox: a release (the other tests' leaves) records a claim in the census
// (docs/decisions/0030), and admissions list until a run listed a settle time after it.
describe('prefixes mode: a new name on the instance of a node still stored', () => {
  beforeAll(async () => {
    sandbox = await startSandbox({ mode: 'prefixes', dualStack: true, subnets: 1 });
    await sandbox.joinNode('rj-4');
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('under a new name while the old Node is still stored: refused by the worker, then ready once the old Node is deleted', async () => {
    const instanceId = instanceOf(sandbox, 'rj-4');
    await sandbox.tick();
    await sandbox.joinNode('rj-4-again', { instanceId });
    expect(readsOf('rj-4-again')).toEqual(['keyed']);
    expect(await workerAnswer('rj-4-again')).toBe('refused:instance-of-another-node');
    expect(delegatedTo(instanceId)).toEqual([...cidrsOf(sandbox, 'rj-4')].sort());

    await sandbox.leaveNode('rj-4', { terminate: false });
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    expect(networkUnavailable(sandbox, 'rj-4-again')).toBe('False');
    expect(delegatedTo(instanceId)).toEqual([...cidrsOf(sandbox, 'rj-4-again')].sort());
    expect(await leasedTo('rj-4')).toEqual([]);
    expect(report).toMatchObject({ duplicateCidrs: 0, leakedCidrs: 0, dlqMessages: 0 });
  });
});
