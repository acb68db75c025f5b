/**
 * Join-to-ready in prefixes mode (issue 9 goal 4) over the EC2 and Kubernetes emulators, wired by
 * buildWiring and run through the route-worker handler: the admission leases the node's blocks and
 * queues a `sync-node` with what it admitted, writing nothing to EC2; the worker assigns them to the
 * node's primary interface and sets NetworkUnavailable=False once the node is stored, with no wait
 * for the next reconcile. A stored node's message assigns nothing; a forged one is refused.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { memoryLogger } from '../../lib/log.ts';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import { PodrouteError } from '../../lib/errors.ts';
import { nodeCreateReview } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { lambdaContext, sqsEvent, sqsRecord, type World } from '../support/world.ts';
import { prefixesWorkerPlane } from '../support/plane.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const ENV = { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16,2600:1f18:1234:5600::/56' };

/** One /20 subnet with podroute's explicit IPv4 and IPv6 reservations. */
function subnet(w: World): string {
  const vpc = w.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  const made = w.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.16.0/20', ipv6CidrBlock: '2600:1f18:1234:5601::/64', availabilityZone: 'us-east-1b' });
  w.ec2.state.createReservation({ subnetId: made.id, cidr: '10.0.24.0/22', type: 'explicit', description: 'podroute' });
  w.ec2.state.createReservation({ subnetId: made.id, cidr: '2600:1f18:1234:5601:8000::/65', type: 'explicit', description: 'podroute' });
  return made.id;
}

const failures = (response: unknown) => (response as { batchItemFailures: Array<{ itemIdentifier: string }> }).batchItemFailures.map((f) => f.itemIdentifier);

describe('prefixes mode: join-to-ready through the worker', () => {
  it('the admission leases the blocks and writes nothing to EC2; the worker assigns them at once, and marks the node ready once it is stored', async () => {
    const instance = world.ec2.state.addInstance({ subnetId: subnet(world) });
    const w = await testWiring(world, local, ENV);
    const handler = createRouteWorkerHandler(async () => w.wiring);

    world.resetStats();
    const review = await admit(nodeCreateReview(world.nodeObject('joiner', instance.id)), w.reconcileDeps());
    expect(review.response.allowed).toBe(true);
    // No Assign* (no EC2 write at all) during the admission: it waits on no mutating bucket.
    expect([world.ec2.stats.count('AssignPrivateIpAddresses'), world.ec2.stats.count('AssignIpv6Addresses'), world.ec2Writes()]).toEqual([0, 0, 0]);
    const eni = world.ec2.state.primaryInterface(instance.id);
    expect([...(eni?.ipv4Prefixes ?? []), ...(eni?.ipv6Prefixes ?? [])]).toEqual([]);
    const patch = JSON.parse(Buffer.from(review.response.patch ?? '', 'base64').toString()) as Array<{ path: string; value: unknown }>;
    const podCidrs = patch.find((op) => op.path === '/spec/podCIDRs')?.value as string[];
    expect(podCidrs).toHaveLength(2);
    // Created unavailable in the prefixes plane's words for a node not carried yet, not the route controller's.
    expect(JSON.stringify(patch.filter((op) => op.path.startsWith('/status')))).toContain('"reason":"NoPrefixDelegated","message":"Node created without delegated prefixes"');
    const queued = w.queue.messages;
    expect(queued).toEqual([syncNodeMessage('joiner', { instanceId: instance.id, podCidrs })]);
    const body = JSON.stringify(queued[0]);

    // First receive: the API server has not stored the node yet. The prefixes are assigned from
    // what was admitted; only the condition waits, retried shortly.
    world.resetStats();
    expect(failures(await handler(sqsEvent(sqsRecord('m1', body, 1)), lambdaContext()))).toEqual(['m1']);
    expect([world.ec2.stats.count('AssignPrivateIpAddresses'), world.ec2.stats.count('AssignIpv6Addresses')]).toEqual([1, 1]);
    const after = world.ec2.state.primaryInterface(instance.id);
    expect([...(after?.ipv4Prefixes ?? []), ...(after?.ipv6Prefixes ?? [])].sort()).toEqual([...podCidrs].sort());

    // The node is stored as admitted (the patch applied); the next receive settles it, assigning nothing again.
    await world.kube.state.addNode(world.nodeObject('joiner', instance.id, podCidrs), { admit: false });
    expect(world.networkUnavailable('joiner')).not.toBe('False');
    world.resetStats();
    expect(failures(await handler(sqsEvent(sqsRecord('m1', body, 2)), lambdaContext()))).toEqual([]);
    expect(world.networkUnavailable('joiner')).toBe('False');
    expect([world.ec2.stats.count('DescribeInstances'), world.ec2.stats.count('DescribeSubnets'), world.ec2Writes()]).toEqual([1, 0, 0]);
    expect(w.log.lines.some((l) => l.event === 'message.done' && l.status === 'ready')).toBe(true);
  });

  it('a stored node’s sync-node (no admitted facts) assigns nothing: prefixes missing are left to reconcile', async () => {
    const instance = world.ec2.state.addInstance({ subnetId: subnet(world) });
    const w = await testWiring(world, local, ENV);
    const handler = createRouteWorkerHandler(async () => w.wiring);
    const podCidrs = ['10.0.24.16/28', '2600:1f18:1234:5601:8000::/80'];
    await world.kube.state.addNode(world.nodeObject('bare', instance.id, podCidrs), { admit: false });
    const before = world.networkUnavailable('bare');
    world.resetStats();

    const body = JSON.stringify(syncNodeMessage('bare'));
    expect(failures(await handler(sqsEvent(sqsRecord('m2', body, 1)), lambdaContext()))).toEqual([]);
    expect(world.networkUnavailable('bare')).toBe(before);
    expect([world.ec2.stats.count('DescribeInstances'), world.ec2Writes(), world.kubeWrites()]).toEqual([1, 0, 0]);
    expect(w.log.lines.some((l) => l.event === 'message.done' && l.status === 'left-to-reconcile:prefixes-missing')).toBe(true);
  });

  it('refuses admitted pod CIDRs the node holds no lease for: nothing assigned, no condition', async () => {
    const instance = world.ec2.state.addInstance({ subnetId: subnet(world) });
    const w = await testWiring(world, local, ENV);
    const handler = createRouteWorkerHandler(async () => w.wiring);
    // Open the pod ranges' sets (registered) without leasing these blocks to the node.
    await Promise.all(['10.0.24.0/22', '2600:1f18:1234:5601:8000::/65'].map((range) => w.wiring.reservationSets?.(range)));
    const podCidrs = ['10.0.24.16/28', '2600:1f18:1234:5601:8000::/80'];
    await world.kube.state.addNode(world.nodeObject('forged', instance.id, podCidrs), { admit: false });
    const before = world.networkUnavailable('forged');
    world.resetStats();

    const body = JSON.stringify(syncNodeMessage('forged', { instanceId: instance.id, podCidrs }));
    expect(failures(await handler(sqsEvent(sqsRecord('m3', body, 1)), lambdaContext()))).toEqual([]);
    expect([world.ec2Writes(), world.kubeWrites(), world.networkUnavailable('forged')]).toEqual([0, 0, before]);
    expect(w.log.lines.some((l) => l.event === 'message.refused' && l.reason === 'not-leased')).toBe(true);
  });

  it('reports no missing routes on a node whose sync-node is handed back to reconcile (prefixes mode has none)', async () => {
    const instance = world.ec2.state.addInstance({ subnetId: subnet(world) });
    // A tagged route table in the account: routes mode would find the node's routes missing in it.
    world.addClusterTable();
    const w = await testWiring(world, local, ENV);
    const podCidrs = ['10.0.24.16/28', '2600:1f18:1234:5601:8000::/80'];
    await world.addNode('late', { instance, podCidrs, networkUnavailable: 'True' });
    world.resetStats();
    const deps = {
      ...w.workerDeps(),
      log: memoryLogger(),
      plane: prefixesWorkerPlane({
        ...w.wiring.prefixes,
        describeInterfaces: async () => {
          throw new PodrouteError('EC2 throttled DescribeInstances', { retryable: true });
        },
      }),
    };
    // The last receive before the dead-letter queue: handed back to reconcile.
    const result = await handleWorkMessage(JSON.stringify(syncNodeMessage('late', { instanceId: instance.id, podCidrs })), { receiveCount: 2, maxReceiveCount: 3 }, deps);
    expect(result).toEqual({ outcome: 'ack', status: 'handed-back' });
    expect([world.kubeWrites(), world.eventReasons('late')]).toEqual([0, []]);
  });
});
