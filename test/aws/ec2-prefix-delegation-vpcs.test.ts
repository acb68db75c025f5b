/**
 * Ec2EniPrefixes.prefixDelegation over the EC2 emulator, in an account holding two VPCs whose
 * subnets overlap (VPC CIDR blocks may overlap across VPCs; only a VPC's own subnets may not:
 * Amazon VPC User Guide, "VPC CIDR blocks" and "Subnet CIDR blocks"). The holder of a departed
 * node's prefix must be found in the subnet that really holds it, whichever VPC's subnet
 * DescribeSubnets lists first: answering "no holder" for a prefix still delegated frees a block
 * EC2 still holds.
 */
import { describe, expect, it } from 'vitest';
import { useEc2Emulators } from '../support/ec2-emulators.ts';
import { Ec2EniPrefixes } from '../../lib/aws/ec2-prefixes.ts';
import { freeDepartedPrefix } from '../../lib/dataplane/prefixes/free-departed-prefix.ts';

const startEc2 = useEc2Emulators();

async function twoVpcs() {
  const { ec2, client } = await startEc2();
  // Another team's VPC, created first, with the same 10.0.0.0/16 block and an overlapping subnet.
  const other = ec2.state.addVpc({ cidrBlock: '10.0.0.0/16' });
  ec2.state.addSubnet({ vpcId: other.id, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-east-1a' });
  const cluster = ec2.state.addVpc({ cidrBlock: '10.0.0.0/16' });
  const subnet = ec2.state.addSubnet({ vpcId: cluster.id, cidrBlock: '10.0.0.0/20', availabilityZone: 'us-east-1a' });
  const instance = ec2.state.addInstance({ subnetId: subnet.id });
  const eniId = instance.networkInterfaceIds[0] ?? '';
  const prefixes = new Ec2EniPrefixes(client);
  await prefixes.assignPrefix(eniId, '10.0.4.0/28');
  return { prefixes, eniId, instanceId: instance.id };
}

describe('prefixDelegation with overlapping subnets in two VPCs', () => {
  it('names the interface that holds the prefix, not "none" from the other VPC\'s subnet', async () => {
    const { prefixes, eniId } = await twoVpcs();
    expect(await prefixes.prefixDelegation('10.0.4.0/28')).toBe(eniId);
  });

  it('a departed node\'s lease is not let go while its prefix is still delegated', async () => {
    const { prefixes, instanceId } = await twoVpcs();
    const freed = await freeDepartedPrefix(prefixes, '10.0.4.0/28', 'node-a');
    const left = (await prefixes.describeInterfaces([instanceId])).get(instanceId)?.prefixes ?? [];
    // Either the prefix came off its interface before the release, or the lease is kept.
    expect({ release: freed.release, stillDelegated: left.includes('10.0.4.0/28') }).not.toEqual({ release: true, stillDelegated: true });
  });
});
