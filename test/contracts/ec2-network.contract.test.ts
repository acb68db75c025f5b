/**
 * The Subnets and EniPrefixes contracts against their fakes and against Ec2Subnets and
 * Ec2EniPrefixes over one EC2 emulator per case.
 */
import { useEc2Emulators } from '../support/ec2-emulators.ts';
import { Ec2EniPrefixes } from '../../lib/aws/ec2-prefixes.ts';
import { Ec2Subnets } from '../../lib/aws/ec2-subnets.ts';
import { MemoryEniPrefixes } from '../fakes/memory-eni-prefixes.ts';
import { MemorySubnets } from '../fakes/memory-subnets.ts';
import { eniPrefixesContract } from './eni-prefixes.contract.ts';
import { subnetsContract } from './subnets.contract.ts';

function memoryWorld() {
  const subnets = new MemorySubnets();
  const prefixes = new MemoryEniPrefixes(subnets);
  return {
    subnets,
    prefixes,
    addSubnet: (input: { cidrBlock: string; ipv6CidrBlock?: string; availabilityZone: string }) =>
      subnets.addSubnet({ cidrs: [input.cidrBlock, ...(input.ipv6CidrBlock ? [input.ipv6CidrBlock] : [])], availabilityZone: input.availabilityZone }).subnetId,
    addReservation: (subnetId: string, input: { cidr: string; type: 'prefix' | 'explicit'; description?: string }) => subnets.addReservation(subnetId, input).reservationId,
    addInstance: (subnetId: string) => {
      const eni = prefixes.addInstance(subnetId);
      return { instanceId: eni.instanceId, eniId: eni.networkInterfaceId };
    },
  };
}

const startEc2 = useEc2Emulators();

async function emulatorWorld() {
  const { ec2, client } = await startEc2();
  const vpc = ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  return {
    subnets: new Ec2Subnets(client),
    prefixes: new Ec2EniPrefixes(client),
    addSubnet: (input: { cidrBlock: string; ipv6CidrBlock?: string; availabilityZone: string }) => ec2.state.addSubnet({ vpcId: vpc.id, ...input }).id,
    addReservation: (subnetId: string, input: { cidr: string; type: 'prefix' | 'explicit'; description?: string }) => ec2.state.createReservation({ subnetId, ...input }).id,
    addInstance: (subnetId: string) => {
      const instance = ec2.state.addInstance({ subnetId });
      return { instanceId: instance.id, eniId: instance.networkInterfaceIds[0] ?? '' };
    },
  };
}

subnetsContract('MemorySubnets', async () => {
  const w = memoryWorld();
  return { port: w.subnets, addSubnet: w.addSubnet, addReservation: w.addReservation };
});
subnetsContract('Ec2Subnets over the EC2 emulator', async () => {
  const w = await emulatorWorld();
  return { port: w.subnets, addSubnet: w.addSubnet, addReservation: w.addReservation };
});
eniPrefixesContract('MemoryEniPrefixes', async () => {
  const w = memoryWorld();
  return { port: w.prefixes, addSubnet: w.addSubnet, addReservation: w.addReservation, addInstance: w.addInstance };
});
eniPrefixesContract('Ec2EniPrefixes over the EC2 emulator', async () => {
  const w = await emulatorWorld();
  return { port: w.prefixes, addSubnet: w.addSubnet, addReservation: w.addReservation, addInstance: w.addInstance };
});
