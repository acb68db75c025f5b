/**
 * `podroute reservations` against the EC2 emulator: what DescribeSubnets answers (the shape the aws
 * CLI prints) goes in, and every printed create-subnet-cidr-reservation command, sent as the SDK's
 * CreateSubnetCidrReservation, is accepted (inside its subnet, no overlap) and listed back.
 */
import { CreateSubnetCidrReservationCommand, DescribeSubnetsCommand, EC2Client, GetSubnetCidrReservationsCommand } from '@aws-sdk/client-ec2';
import { afterAll, describe, expect, it } from 'vitest';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { main } from '../../lib/cli/main.ts';

const started: Ec2Emulator[] = [];
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

async function world() {
  const ec2 = await startEc2Emulator({ throttle: false });
  started.push(ec2);
  const client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 });
  const vpc = ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
  const subnets = ['us-east-1a', 'us-east-1b', 'us-east-1c'].map((zone, i) =>
    ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: `10.0.${16 * i}.0/20`, ipv6CidrBlock: `2600:1f18:1234:56${(i + 1).toString(16).padStart(2, '0')}::/64`, availabilityZone: zone }),
  );
  return { ec2, client, vpcId: vpc.id, subnetIds: subnets.map((s) => s.id) };
}

async function plan(args: string[], subnetsJson: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['reservations', ...args, '--subnets', '-'], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readFile: async () => subnetsJson,
    env: {},
  });
  return { code, stdout, stderr };
}

/** The flags of one printed command (no flag value here needs shell quoting). */
function flagsOf(line: string): Record<string, string> {
  const words = line.split(' ');
  const flags: Record<string, string> = {};
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    if (word.startsWith('--')) flags[word.slice(2)] = words[i + 1] ?? '';
  }
  return flags;
}

describe('podroute reservations over the EC2 emulator', () => {
  it.each([
    ['SyncFromCluster', 'explicit'],
    ['SyncFromCloud', 'prefix'],
  ])('%s: every printed reservation is accepted by CreateSubnetCidrReservation and listed as %s', async (mode, type) => {
    const { client, vpcId, subnetIds } = await world();
    const described = await client.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'vpc-id', Values: [vpcId] }] }));
    const { code, stdout, stderr } = await plan(
      ['--cluster-cidrs', '10.0.0.0/16,2600:1f18:1234:5600::/56', '--node-sync-mode', mode],
      JSON.stringify({ Subnets: described.Subnets }),
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const commands = stdout.split('\n').filter((line) => line.startsWith('aws ec2 create-subnet-cidr-reservation '));
    expect(commands).toHaveLength(6);
    for (const command of commands) {
      const flags = flagsOf(command);
      const created = await client.send(
        new CreateSubnetCidrReservationCommand({
          SubnetId: flags['subnet-id'],
          Cidr: flags.cidr,
          ReservationType: flags['reservation-type'] as 'prefix' | 'explicit',
          Description: flags.description,
        }),
      );
      expect(created.SubnetCidrReservation?.Cidr).toBe(flags.cidr);
    }
    for (const subnetId of subnetIds) {
      const listed = await client.send(new GetSubnetCidrReservationsCommand({ SubnetId: subnetId }));
      const all = [...(listed.SubnetIpv4CidrReservations ?? []), ...(listed.SubnetIpv6CidrReservations ?? [])];
      expect(all.map((r) => [r.ReservationType, r.Description])).toEqual([
        [type, 'podroute'],
        [type, 'podroute'],
      ]);
    }
  });
});
