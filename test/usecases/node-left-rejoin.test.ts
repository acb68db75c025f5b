/**
 * A node's leave races its same-name re-join: the release of the gone node's lease is conditional
 * on the lease not having changed since before the 404 read, so a re-join that renews the lease
 * between that read and the release keeps its block. Forced deterministically: the node source's
 * keyed read answers 404 and, before it returns, the node re-joins (its admission renews the lease,
 * as the webhook's allocation does). Over the claim protocol in memory, stamped by the test's clock
 * (the protocol the DynamoDB store runs; test/aws/dynamodb-cidr-store.test.ts holds the two stores
 * to one contract), for the worker's node-left check and for a (replayed) signed NodeLeft event alike.
 */
import { describe, expect, it } from 'vitest';
import { createCidrSet } from '../../lib/ipam/index.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { checkNodeLeft, releaseIfGone } from '../../lib/usecases/node-left.ts';
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';
import { TimedMemoryCidrStore } from '../fakes/timed-memory-cidr-store.ts';
import { FakeClock } from '../support/clock.ts';

const GRACE_SECONDS = 600;

async function leaseSet(clock: FakeClock): Promise<CidrSet> {
  return createCidrSet({ clusterCidr: '10.20.0.0/16', nodeMaskSize: 24, store: new TimedMemoryCidrStore(clock.now) });
}

/** A node source whose node is gone at the read, and re-joins (its admission renews its lease) before the read returns. */
function rejoinsAtRead(set: CidrSet, clock: FakeClock): MemoryNodeSource {
  const nodes = new MemoryNodeSource(clock.now);
  nodes.onGet = async (name) => {
    clock.advance(1000);
    await set.allocateNext(name);
  };
  return nodes;
}

describe('node-left and a same-name re-join', () => {
  it.each([
    ['the worker\'s node-left check', (set: CidrSet, clock: FakeClock) => checkNodeLeft('node-a', { nodes: rejoinsAtRead(set, clock), leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), now: clock.now, leaseGraceSeconds: GRACE_SECONDS })],
    ['a replayed signed NodeLeft event', (set: CidrSet, clock: FakeClock) => releaseIfGone('node-a', { nodes: rejoinsAtRead(set, clock), leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), now: clock.now, leaseGraceSeconds: GRACE_SECONDS })],
  ])('%s keeps the block of a node that re-joined between the 404 read and the release', async (_name, leave) => {
    const clock = new FakeClock();
    const set = await leaseSet(clock);
    expect(await set.allocateNext('node-a')).toBe('10.20.0.0/24');
    // Past the grace period, so only the conditional release keeps the renewed lease.
    clock.advance(GRACE_SECONDS * 1000 + 1);
    await leave(set, clock);
    expect((await set.leases()).map((lease) => `${lease.cidr} ${lease.owner}`)).toEqual(['10.20.0.0/24 node-a']);
    // The next join gets another block, not the re-joined node's.
    expect(await set.allocateNext('node-b')).toBe('10.20.1.0/24');
  });
});

/** A node source whose node reads 404 (gone, or admitted and not stored yet). */
const absentNodes = new MemoryNodeSource();


/**
 * A 404 frees only a lease older than the grace period, by the rule reconcile's reclaim uses
 * (./absence.ts pastGrace): a lease renewed by a same-name re-join's CREATE admission (the node not
 * stored yet) or a brand-new joiner's lease reads 404 too, and a delayed check, a forged message or
 * a replayed signed NodeLeft must not free it. Reclaim frees it later if its node never appears.
 */
describe('node-left and a lease younger than the grace period', () => {
  const leaves = [
    ['the worker\'s node-left check', (set: CidrSet, clock: FakeClock) => checkNodeLeft('node-a', { nodes: absentNodes, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), now: clock.now, leaseGraceSeconds: GRACE_SECONDS })],
    ['a replayed signed NodeLeft event', (set: CidrSet, clock: FakeClock) => releaseIfGone('node-a', { nodes: absentNodes, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), now: clock.now, leaseGraceSeconds: GRACE_SECONDS })],
  ] as const;

  it.each(leaves)('%s keeps a lease a re-join admission renewed before the check ran (node not stored yet)', async (_name, leave) => {
    const clock = new FakeClock();
    const set = await leaseSet(clock);
    expect(await set.allocateNext('node-a')).toBe('10.20.0.0/24');
    clock.advance(3600_000);
    // node-a deleted; its kubelet re-registers: the CREATE admission renews the lease; not stored yet.
    expect(await set.allocateNext('node-a')).toBe('10.20.0.0/24');
    clock.advance(10_000);
    await leave(set, clock);
    expect((await set.leases()).map((lease) => `${lease.cidr} ${lease.owner}`)).toEqual(['10.20.0.0/24 node-a']);
    expect(await set.allocateNext('node-b')).toBe('10.20.1.0/24');
  });

  it.each(leaves)('%s keeps a brand-new joiner\'s lease (a forged or early departure)', async (_name, leave) => {
    const clock = new FakeClock();
    const set = await leaseSet(clock);
    expect(await set.allocateNext('node-a')).toBe('10.20.0.0/24');
    clock.advance(GRACE_SECONDS * 1000);
    await leave(set, clock);
    expect((await set.leases()).map((lease) => `${lease.cidr} ${lease.owner}`)).toEqual(['10.20.0.0/24 node-a']);
  });

  it.each(leaves)('%s frees a lease older than the grace period', async (_name, leave) => {
    const clock = new FakeClock();
    const set = await leaseSet(clock);
    expect(await set.allocateNext('node-a')).toBe('10.20.0.0/24');
    clock.advance(GRACE_SECONDS * 1000 + 1);
    await leave(set, clock);
    expect(await set.leases()).toEqual([]);
  });
});
