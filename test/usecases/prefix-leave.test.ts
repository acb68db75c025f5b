/**
 * Prefixes mode: a node's leave releases its blocks (issue 8 follow-up, issue 9 goal 5). The sets
 * are per pod range and found through the set registry, so a worker container that never read EC2
 * finds them; over dynalite and the EC2 emulator, wired by buildWiring as deployed.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { buildWiring, useCaseDeps } from '../../functions/wiring.ts';
import type { Wiring } from '../../functions/wiring.ts';
import { memoryLogger } from '../../lib/log.ts';
import { handleNodeEvent } from '../../lib/usecases/node-webhook.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring, WEBHOOK_SECRET } from '../support/wiring.ts';
import { countCommands, lambdaContext, sqsEvent, sqsRecord, unusedSqsClient, type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const ENV = { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16,2600:1f18:1234:5600::/56' };

/** Two /20 subnets in two zones, each with an explicit IPv4 and IPv6 podroute reservation. */
function subnets(w: World) {
  const vpc = w.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  return [0, 1].map((i) => {
    const subnet = w.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: `10.0.${i * 16}.0/20`, ipv6CidrBlock: `2600:1f18:1234:560${i}::/64`, availabilityZone: `us-east-1${'ab'[i]}` });
    w.ec2.state.createReservation({ subnetId: subnet.id, cidr: `10.0.${i * 16 + 8}.0/22`, type: 'explicit', description: 'podroute' });
    w.ec2.state.createReservation({ subnetId: subnet.id, cidr: `2600:1f18:1234:560${i}:8000::/65`, type: 'explicit', description: 'podroute' });
    return subnet.id;
  });
}

/** Another container's wiring over the same table (a fresh cold start: nothing remembered). */
async function container(first: Wiring): Promise<{ wiring: Wiring; dynamo: ReturnType<typeof countCommands> }> {
  const client = local.client();
  const dynamo = countCommands(client);
  const wiring = await buildWiring(first.config, { ec2: world.ec2Client, sqs: unusedSqsClient(), dynamodb: client }, world.nodes, async () => WEBHOOK_SECRET, {
    log: memoryLogger(),
    now: world.clock.now,
  });
  dynamo.reset();
  return { wiring, dynamo };
}

const ec2Calls = (): number => Object.values(world.ec2.stats.calls).reduce((a, b) => a + b, 0);

/** Every lease of every registered pod range, as `cidr=owner`. */
async function leases(wiring: Wiring): Promise<string[]> {
  const sets = (await wiring.usedReservationSets?.()) ?? [];
  const all = await Promise.all(sets.map((set) => set.leases()));
  return all.flat().map((l) => `${l.cidr}=${l.owner ?? ''}`).sort();
}

async function joined(): Promise<{ first: Wiring; gone: string[]; kept: string[]; goneInstance: string }> {
  const [a, b] = subnets(world);
  const goneInstance = world.ec2.state.addInstance({ subnetId: a ?? '' });
  await world.addNode('gone', { instance: goneInstance });
  await world.addNode('kept', { instance: world.ec2.state.addInstance({ subnetId: b ?? '' }) });
  const w = await testWiring(world, local, ENV);
  const report = await reconcile(w.reconcileDeps());
  expect(report.errors).toEqual([]);
  const gone = world.podCidrs('gone');
  const kept = world.podCidrs('kept');
  expect([gone.length, kept.length]).toEqual([2, 2]);
  await world.kube.state.deleteNode('gone', { admit: false });
  // Past the grace period: a 404 frees only a lease older than it (lib/usecases/absence.ts pastGrace).
  world.clock.advance(w.wiring.config.leaseGraceSeconds * 1000 + 1);
  return { first: w.wiring, gone, kept, goneInstance: goneInstance.id };
}

/** The prefixes delegated to the instance's primary interface now (none once it is gone). */
const delegatedTo = (instanceId: string): string[] => {
  const eni = world.ec2.state.primaryInterface(instanceId);
  return [...(eni?.ipv4Prefixes ?? []), ...(eni?.ipv6Prefixes ?? [])];
};
const writes = (): Record<string, number> => Object.fromEntries(Object.entries(world.ec2.stats.calls).filter(([action]) => !/^(Describe|Get)/.test(action)));

describe('prefixes mode: a node leaves', () => {
  it('the worker’s node-left check leaves the gone node’s prefixes on its still-running instance, and their leases, to reconcile’s reclaim, by keyed reads', async () => {
    const { first, gone, goneInstance } = await joined();
    expect(delegatedTo(goneInstance).sort()).toEqual([...gone].sort());
    const worker = await container(first);
    const before = await leases(worker.wiring);
    world.resetStats();
    const handler = createRouteWorkerHandler(async () => worker.wiring);

    const response = await handler(sqsEvent(sqsRecord('m1', JSON.stringify({ v: 2, kind: 'node-left', node: 'gone' }))), lambdaContext());

    // Retried (the blocks are still delegated); nothing is taken off an interface on a keyed read alone.
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(worker.dynamo.counts.get('DeleteItemCommand') ?? 0).toBe(0);
    expect(await leases(worker.wiring)).toEqual(before);
    expect(delegatedTo(goneInstance).sort()).toEqual([...gone].sort());
    expect(writes()).toEqual({});
  });

  it('a signed NodeLeft event releases them too once the instance is terminated: its interface took the prefixes, nothing is unassigned', async () => {
    const { first, kept, goneInstance } = await joined();
    world.ec2.state.terminateInstance(goneInstance);
    const webhook = await container(first);
    world.resetStats();

    const result = await handleNodeEvent({ type: 'NodeLeft', nodeName: 'gone' }, useCaseDeps(webhook.wiring));

    expect(result).toEqual({ status: 202, message: 'node gone: released 2 pod CIDR(s)' });
    expect(await leases(webhook.wiring)).toEqual(kept.map((cidr) => `${cidr}=kept`).sort());
    // Reads only: who holds each prefix (no one).
    expect(ec2Calls()).toBeGreaterThan(0);
    expect(writes()).toEqual({});
  });

  it('a holder read that fails keeps the leases and answers retry (503 for a NodeLeft event); nothing is unassigned', async () => {
    const { first, gone, goneInstance } = await joined();
    const webhook = await container(first);
    world.ec2.permissions.deny('DescribeSubnets');
    world.resetStats();

    await expect(handleNodeEvent({ type: 'NodeLeft', nodeName: 'gone' }, useCaseDeps(webhook.wiring))).rejects.toMatchObject({ name: 'DepartedBlockHeldError', retryable: true });
    expect((await leases(webhook.wiring)).filter((line) => line.endsWith('=gone'))).toHaveLength(gone.length);
    expect(delegatedTo(goneInstance).sort()).toEqual([...gone].sort());
    expect(writes()).toEqual({});
  });
});
