/**
 * The Subnets contract (lib/usecases/ports.ts): subnets and their CIDR reservations as prefixes mode
 * reads them, run against MemorySubnets and Ec2Subnets over the EC2 emulator
 * (ec2-network.contract.test.ts). The VPC is 10.0.0.0/16 with 2600:1f18:1234:5600::/56.
 */
import { describe, expect, it } from 'vitest';
import type { SubnetReservation, Subnets } from '../../lib/usecases/ports.ts';

export interface SubnetsHarness {
  port: Subnets;
  addSubnet(input: { cidrBlock: string; ipv6CidrBlock?: string; availabilityZone: string }): string;
  addReservation(subnetId: string, input: { cidr: string; type: SubnetReservation['type']; description?: string }): string;
}

export function subnetsContract(name: string, make: () => Promise<SubnetsHarness>): void {
  describe(`Subnets contract: ${name}`, () => {
    it('reads the subnets asked for with their blocks and reservations of both families; unknown ids are absent', async () => {
      const h = await make();
      const a = h.addSubnet({ cidrBlock: '10.0.0.0/20', ipv6CidrBlock: '2600:1f18:1234:5600::/64', availabilityZone: 'us-east-1a' });
      const b = h.addSubnet({ cidrBlock: '10.0.16.0/20', availabilityZone: 'us-east-1b' });
      const other = h.addSubnet({ cidrBlock: '10.0.32.0/20', availabilityZone: 'us-east-1c' });
      const r1 = h.addReservation(a, { cidr: '10.0.8.0/22', type: 'explicit', description: 'podroute' });
      const r2 = h.addReservation(a, { cidr: '2600:1f18:1234:5600:8000::/65', type: 'prefix' });
      h.addReservation(other, { cidr: '10.0.40.0/22', type: 'prefix' });

      const found = await h.port.describeSubnets([a, b, a, 'subnet-0000000000000dead']);
      expect([...found.keys()].sort()).toEqual([a, b].sort());
      expect(found.get(a)).toEqual({
        subnetId: a,
        availabilityZone: 'us-east-1a',
        cidrs: ['10.0.0.0/20', '2600:1f18:1234:5600::/64'],
        reservations: [
          { reservationId: r1, cidr: '10.0.8.0/22', type: 'explicit', description: 'podroute' },
          { reservationId: r2, cidr: '2600:1f18:1234:5600:8000::/65', type: 'prefix', description: undefined },
        ],
      });
      expect(found.get(b)).toEqual({ subnetId: b, availabilityZone: 'us-east-1b', cidrs: ['10.0.16.0/20'], reservations: [] });
      expect((await h.port.describeSubnets([])).size).toBe(0);
    });

    it('answers copies: changing an answer changes nothing read later', async () => {
      const h = await make();
      const a = h.addSubnet({ cidrBlock: '10.0.48.0/20', availabilityZone: 'us-east-1a' });
      h.addReservation(a, { cidr: '10.0.56.0/22', type: 'prefix' });
      const first = (await h.port.describeSubnets([a])).get(a);
      first?.reservations.pop();
      first?.cidrs.push('10.1.0.0/16');
      const again = (await h.port.describeSubnets([a])).get(a);
      expect([again?.cidrs, again?.reservations.length]).toEqual([['10.0.48.0/20'], 1]);
    });
  });
}
