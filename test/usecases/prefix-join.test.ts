/**
 * Join-to-ready in prefixes mode (issue 9 goal 4) over the EC2 and Kubernetes emulators, wired by
 * buildWiring and run through the route-worker handler: the admission delegates the node's
 * prefixes and queues a `sync-node` with what it admitted; the worker sets NetworkUnavailable=False
 * once the node is stored and its primary interface holds those prefixes, one DescribeInstances by
 * id, with no wait for the next reconcile. Prefixes missing: left to reconcile, nothing assigned.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { memoryLogger } from '../../lib/log.ts';
import { syncNodeMessage } from '../../lib/messages/route-message.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { handleRouteMessage } from '../../lib/usecases/route-worker.ts';
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
  it('the admission queues the node’s sync-node, and the worker marks it ready once it is stored with its prefixes on its interface', async () => {
    const instance = world.ec2.state.addInstance({ subnetId: subnet(world) });
    const w = await testWiring(world, local, ENV);
    const handler = createRouteWorkerHandler(async () => w.wiring);

    const review = await admit(nodeCreateReview(world.nodeObject('joiner', instance.id)), w.reconcileDeps());
    expect(review.response.allowed).toBe(true);
    const eni = world.ec2.state.primaryInterface(instance.id);
    const delegated = [...(eni?.ipv4Prefixes ?? []), ...(eni?.ipv6Prefixes ?? [])];
    expect(delegated).toHaveLength(2);
    const queued = w.queue.messages;
    expect(queued).toEqual([syncNodeMessage('joiner', { instanceId: instance.id, podCidrs: delegated })]);
    const body = JSON.stringify(queued[0]);

    // First receive: the API server has not stored the node yet; retried shortly.
    world.resetStats();
    expect(failures(await handler(sqsEvent(sqsRecord('m1', body, 1)), lambdaContext()))).toEqual(['m1']);
    expect(world.ec2.stats.count('DescribeInstances')).toBe(0);

    // The node is stored as admitted (the patch applied); the next receive settles it.
    await world.kube.state.addNode(world.nodeObject('joiner', instance.id, delegated), { admit: false });
    expect(world.networkUnavailable('joiner')).not.toBe('False');
    world.resetStats();
    expect(failures(await handler(sqsEvent(sqsRecord('m1', body, 2)), lambdaContext()))).toEqual([]);
    expect(world.networkUnavailable('joiner')).toBe('False');
    expect([world.ec2.stats.count('DescribeInstances'), world.ec2.stats.count('DescribeSubnets'), world.ec2Writes()]).toEqual([1, 0, 0]);
    expect(w.log.lines.some((l) => l.event === 'message.done' && l.status === 'ready')).toBe(true);
  });

  it('leaves a node whose interface lacks its pod CIDRs to reconcile: no condition, no assignment', async () => {
    const instance = world.ec2.state.addInstance({ subnetId: subnet(world) });
    const w = await testWiring(world, local, ENV);
    const handler = createRouteWorkerHandler(async () => w.wiring);
    // Admitted with these pod CIDRs, but the interface holds neither (an assignment that failed).
    const podCidrs = ['10.0.24.16/28', '2600:1f18:1234:5601:8000::/80'];
    await world.kube.state.addNode(world.nodeObject('bare', instance.id, podCidrs), { admit: false });
    const before = world.networkUnavailable('bare');
    world.resetStats();

    const body = JSON.stringify(syncNodeMessage('bare', { instanceId: instance.id, podCidrs }));
    expect(failures(await handler(sqsEvent(sqsRecord('m2', body, 1)), lambdaContext()))).toEqual([]);
    expect(world.networkUnavailable('bare')).toBe(before);
    expect([world.ec2.stats.count('DescribeInstances'), world.ec2Writes(), world.kubeWrites()]).toEqual([1, 0, 0]);
    expect(w.log.lines.some((l) => l.event === 'message.done' && l.status === 'left-to-reconcile:prefixes-missing')).toBe(true);
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
    const result = await handleRouteMessage(JSON.stringify(syncNodeMessage('late', { instanceId: instance.id, podCidrs })), { receiveCount: 2, maxReceiveCount: 3 }, deps);
    expect(result).toEqual({ outcome: 'ack', status: 'handed-back' });
    expect([world.kubeWrites(), world.eventReasons('late')]).toEqual([0, []]);
  });
});
