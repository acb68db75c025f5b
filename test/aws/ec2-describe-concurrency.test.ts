/**
 * Prefixes mode's per-tick EC2 reads run with bounded concurrency (issue 8, review #7): the
 * DescribeInstances chunks and the per-subnet GetSubnetCidrReservations calls overlap, at most
 * DESCRIBE_CONCURRENCY at once, and still answer everything.
 */
import { DescribeInstancesCommand, DescribeSubnetsCommand, EC2Client, GetSubnetCidrReservationsCommand } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DESCRIBE_CONCURRENCY, Ec2EniPrefixes } from '../../lib/aws/ec2-prefixes.ts';
import { Ec2Subnets } from '../../lib/aws/ec2-subnets.ts';

const ec2Mock = mockClient(EC2Client);
// The stub sits on the client class's prototype, and test files share a worker (vitest.config.ts):
// every later file's clients of that class would get it too.
afterAll(() => ec2Mock.restore());
/** Instance ids per DescribeInstances call (ec2-prefixes.ts). */
const INSTANCE_IDS_PER_CALL = 200;
afterEach(() => ec2Mock.reset());

/** Counts calls in flight; each call yields to the event loop a few times before answering. */
function inFlight() {
  let now = 0;
  let max = 0;
  return {
    get max() {
      return max;
    },
    async around<T>(answer: () => T): Promise<T> {
      now += 1;
      max = Math.max(max, now);
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      now -= 1;
      return answer();
    },
  };
}

describe('bounded concurrency of the prefixes-mode reads (mocked client)', () => {
  it('reads DescribeInstances chunks side by side, at most DESCRIBE_CONCURRENCY at once', async () => {
    const counter = inFlight();
    ec2Mock.on(DescribeInstancesCommand).callsFake((input: { Filters?: Array<{ Values?: string[] }> }) =>
      counter.around(() => ({
        Reservations: [
          {
            Instances: (input.Filters?.[0]?.Values ?? []).map((id) => ({
              InstanceId: id,
              NetworkInterfaces: [{ NetworkInterfaceId: `eni-${id}`, SubnetId: 'subnet-a', Attachment: { DeviceIndex: 0 } }],
            })),
          },
        ],
      })),
    );
    const ids = Array.from({ length: INSTANCE_IDS_PER_CALL * (DESCRIBE_CONCURRENCY + 2) }, (_, i) => `i-${String(i).padStart(17, '0')}`);
    const found = await new Ec2EniPrefixes(new EC2Client({ region: 'us-east-1' })).describeInterfaces(ids);
    expect(found.size).toBe(ids.length);
    expect(ec2Mock.commandCalls(DescribeInstancesCommand)).toHaveLength(DESCRIBE_CONCURRENCY + 2);
    expect(counter.max).toBe(DESCRIBE_CONCURRENCY);
  });

  it('reads each subnet’s reservations side by side, at most DESCRIBE_CONCURRENCY at once', async () => {
    const counter = inFlight();
    const subnetIds = Array.from({ length: DESCRIBE_CONCURRENCY + 3 }, (_, i) => `subnet-${String(i).padStart(17, '0')}`);
    ec2Mock.on(DescribeSubnetsCommand).resolves({ Subnets: subnetIds.map((id, i) => ({ SubnetId: id, CidrBlock: `10.0.${i * 16}.0/20` })) });
    ec2Mock.on(GetSubnetCidrReservationsCommand).callsFake((input: { SubnetId?: string }) =>
      counter.around(() => ({
        SubnetIpv4CidrReservations: [{ SubnetCidrReservationId: `scr-${input.SubnetId ?? ''}`, SubnetId: input.SubnetId, Cidr: '10.0.8.0/24', ReservationType: 'prefix', Description: 'podroute' }],
      })),
    );
    const found = await new Ec2Subnets(new EC2Client({ region: 'us-east-1' })).describeSubnets(subnetIds);
    expect([...found.values()].map((s) => s.reservations.map((r) => r.reservationId))).toEqual(subnetIds.map((id) => [`scr-${id}`]));
    expect(counter.max).toBe(DESCRIBE_CONCURRENCY);
  });
});
