/**
 * Issue 8: subnets and reservations are read once per run, not per node. A mass join sends one
 * admission per node; each webhook container reads a subnet and its reservations once per
 * SUBNET_CACHE_TTL_MS (functions/wiring.ts, lib/aws/ec2-subnets.ts), counted at the EC2 emulator.
 */
import { describe, expect, it } from 'vitest';
import { SUBNET_CACHE_TTL_MS } from '../../lib/aws/ec2-subnets.ts';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const ENV = { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16' };

const review = (uid: string, object: Record<string, unknown>) =>
  admissionReviewSchema().parse({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, kind: { group: '', version: 'v1', kind: 'Node' }, resource: { group: '', version: 'v1', resource: 'nodes' }, operation: 'CREATE', object, oldObject: null },
  });

const reads = () => [world.ec2.stats.count('DescribeSubnets'), world.ec2.stats.count('GetSubnetCidrReservations')];

describe('the webhook reads subnets and reservations once per container and TTL', () => {
  it('a join of 30 nodes in three subnets makes one read per subnet; a reservation made meanwhile is seen after the TTL', async () => {
    const vpc = world.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16' });
    const zones = [0, 1, 2].map((i) => world.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: `10.0.${i * 16}.0/20`, availabilityZone: `us-east-1${'abc'[i]}` }).id);
    for (const [i, id] of zones.entries()) world.ec2.state.createReservation({ subnetId: id, cidr: `10.0.${i * 16 + 8}.0/22`, type: 'explicit', description: 'podroute' });
    const late = world.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.48.0/20', availabilityZone: 'us-east-1d' }).id;
    const w = await testWiring(world, local, ENV);
    world.resetStats();
    const join = async (name: string, subnetId: string) => {
      const instance = world.ec2.state.addInstance({ subnetId });
      const response = await admit(review(`u-${name}`, world.nodeObject(name, instance.id)), w.reconcileDeps());
      // Given pod CIDRs (every admitted node also gets the NetworkUnavailable condition).
      const ops = JSON.parse(Buffer.from(response.response.patch ?? 'W10=', 'base64').toString('utf8')) as Array<{ path: string }>;
      return ops.some((op) => op.path === '/spec/podCIDRs');
    };

    const patched = await Promise.all(Array.from({ length: 30 }, (_, i) => join(`node-${i}`, zones[i % 3] ?? '')));
    expect(patched.every(Boolean)).toBe(true);
    expect(reads()).toEqual([3, 3]);

    // A subnet without a reservation: the node gets nothing; the operator creates one.
    expect(await join('early', late)).toBe(false);
    world.ec2.state.createReservation({ subnetId: late, cidr: '10.0.56.0/22', type: 'explicit', description: 'podroute' });
    world.clock.advance(SUBNET_CACHE_TTL_MS - 1);
    expect(await join('still-cached', late)).toBe(false);
    world.clock.advance(1);
    expect(await join('after-ttl', late)).toBe(true);
    expect(reads()).toEqual([5, 5]);
  });
});
