/**
 * Prefixes mode, when EC2 refuses a named prefix with InvalidParameterValue (its catch-all for
 * validation errors): the block is "in use" and held away from the set only when a re-read shows
 * it on another interface (lib/dataplane/prefixes/prefix-node-sync.ts, lib/aws/ec2-prefixes.ts `prefixHolder`).
 * Over the EC2 emulator and dynalite, wired by buildWiring.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const ENV = { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16' };
const RESERVATION = '10.0.8.0/22';
/** The reservation's first block: the one the set hands out first. */
const FIRST_BLOCK = '10.0.8.0/28';
const HELD = 'ec2:prefix-in-use';

function subnet(w: World): string {
  const vpc = w.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16' });
  const made = w.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-east-1a' });
  w.ec2.state.createReservation({ subnetId: made.id, cidr: RESERVATION, type: 'explicit', description: 'podroute' });
  return made.id;
}

async function ownerOf(w: Awaited<ReturnType<typeof testWiring>>, cidr: string): Promise<string | null | undefined> {
  const set = await w.wiring.reservationSets?.(RESERVATION);
  return (await set?.leases())?.find((lease) => lease.cidr === cidr)?.owner;
}

describe('prefixes mode: an InvalidParameterValue refusal', () => {
  it('is a prefix in use when another interface holds the block: held, and the node gets the next block', async () => {
    const subnetId = subnet(world);
    const other = world.ec2.state.addInstance({ subnetId });
    world.ec2.state.assignPrefixes(world.ec2.state.primaryInterface(other.id)?.id ?? '', 4, { prefixes: [FIRST_BLOCK], count: undefined });
    await world.addNode('node-a', { instance: world.ec2.state.addInstance({ subnetId }) });
    const w = await testWiring(world, local, ENV);

    await reconcile(w.reconcileDeps());
    expect(await ownerOf(w, FIRST_BLOCK)).toBe(HELD);
    expect(world.podCidrs('node-a')).toEqual(['10.0.8.16/28']);
  });

  it('is an error of its own when no interface holds the block (an address in use inside it): the block is not held', async () => {
    const subnetId = subnet(world);
    // An instance whose own address lies inside the block: EC2 refuses the prefix, yet no interface holds it.
    world.ec2.state.addInstance({ subnetId, privateIpAddress: '10.0.8.5' });
    await world.addNode('node-a', { instance: world.ec2.state.addInstance({ subnetId }) });
    const w = await testWiring(world, local, ENV);

    const report = await reconcile(w.reconcileDeps());
    expect(await ownerOf(w, FIRST_BLOCK)).not.toBe(HELD);
    expect(world.podCidrs('node-a')).toEqual([]);
    expect(report.errors.map((e) => e.message).join('\n')).toMatch(/no other interface holds it/);
  });
});
