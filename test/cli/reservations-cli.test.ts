/**
 * `podroute reservations` through main() with an in-memory io port, on the shipped example
 * (examples/subnets.json: `aws ec2 describe-subnets --output json` of three dual-stack subnets), plus
 * one run of the real binary reading stdin.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { builtCli } from '../support/cli-binary.ts';
import { main } from '../../lib/cli/main.ts';
import { shellQuote } from '../../lib/cli/reservations-command.ts';

const root = join(import.meta.dirname, '..', '..');
const example = join(root, 'examples', 'subnets.json');
const V4 = '10.0.0.0/16';
const V6 = '2600:1f18:4a3:6b00::/56';

async function cli(args: string[], files: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readFile: async (path) => {
      if (Object.hasOwn(files, path)) return files[path] as string;
      return readFile(path, 'utf8');
    },
    env: {},
  });
  return { code, stdout, stderr };
}

const subnetsFile = (subnets: unknown[]) => JSON.stringify({ Subnets: subnets });

describe('podroute reservations on the shipped example', () => {
  it('prints one create-subnet-cidr-reservation command per subnet and family, each after a comment', async () => {
    const { code, stdout, stderr } = await cli(['reservations', '--cluster-cidrs', `${V4},${V6}`, '--subnets', example]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.split('\n')).toEqual([
      '# subnet-0a1b2c3d4e5f60011 (us-east-1a) 10.0.0.0/19: 10.0.16.0/21 for pods (25% of the subnet, 128 /28 prefixes)',
      'aws ec2 create-subnet-cidr-reservation --subnet-id subnet-0a1b2c3d4e5f60011 --cidr 10.0.16.0/21 --reservation-type explicit --description podroute',
      '# subnet-0a1b2c3d4e5f60011 (us-east-1a) 2600:1f18:4a3:6b00::/64: 2600:1f18:4a3:6b00:8000::/66 for pods (25% of the subnet, 16384 /80 prefixes)',
      'aws ec2 create-subnet-cidr-reservation --subnet-id subnet-0a1b2c3d4e5f60011 --cidr 2600:1f18:4a3:6b00:8000::/66 --reservation-type explicit --description podroute',
      '# subnet-0a1b2c3d4e5f60012 (us-east-1b) 10.0.32.0/19: 10.0.48.0/21 for pods (25% of the subnet, 128 /28 prefixes)',
      'aws ec2 create-subnet-cidr-reservation --subnet-id subnet-0a1b2c3d4e5f60012 --cidr 10.0.48.0/21 --reservation-type explicit --description podroute',
      '# subnet-0a1b2c3d4e5f60012 (us-east-1b) 2600:1f18:4a3:6b01::/64: 2600:1f18:4a3:6b01:8000::/66 for pods (25% of the subnet, 16384 /80 prefixes)',
      'aws ec2 create-subnet-cidr-reservation --subnet-id subnet-0a1b2c3d4e5f60012 --cidr 2600:1f18:4a3:6b01:8000::/66 --reservation-type explicit --description podroute',
      // The example's third subnet also lists a disassociated IPv6 block: it is not used.
      '# subnet-0a1b2c3d4e5f60013 (us-east-1c) 10.0.64.0/19: 10.0.80.0/21 for pods (25% of the subnet, 128 /28 prefixes)',
      'aws ec2 create-subnet-cidr-reservation --subnet-id subnet-0a1b2c3d4e5f60013 --cidr 10.0.80.0/21 --reservation-type explicit --description podroute',
      '# subnet-0a1b2c3d4e5f60013 (us-east-1c) 2600:1f18:4a3:6b02::/64: 2600:1f18:4a3:6b02:8000::/66 for pods (25% of the subnet, 16384 /80 prefixes)',
      'aws ec2 create-subnet-cidr-reservation --subnet-id subnet-0a1b2c3d4e5f60013 --cidr 2600:1f18:4a3:6b02:8000::/66 --reservation-type explicit --description podroute',
      '',
    ]);
  });

  it('-o yaml prints the data of -o json; -o table one row per reservation', async () => {
    const args = ['reservations', '--cluster-cidrs', V4, '--subnets', example];
    const json = await cli([...args, '-o', 'json']);
    const yaml = await cli([...args, '-o', 'yaml']);
    expect(yaml.code).toBe(0);
    expect(load(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    const table = await cli([...args, '-o', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout.trimEnd().split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['SUBNET', 'ZONE', 'SUBNET CIDR', 'RESERVATION', 'TYPE', 'SHARE', 'PREFIXES'],
      ['subnet-0a1b2c3d4e5f60011', 'us-east-1a', '10.0.0.0/19', '10.0.16.0/21', 'explicit', '25%', '128 /28'],
      ['subnet-0a1b2c3d4e5f60012', 'us-east-1b', '10.0.32.0/19', '10.0.48.0/21', 'explicit', '25%', '128 /28'],
      ['subnet-0a1b2c3d4e5f60013', 'us-east-1c', '10.0.64.0/19', '10.0.80.0/21', 'explicit', '25%', '128 /28'],
    ]);
  });

  it('--format json prints the plan and the description', async () => {
    const { code, stdout } = await cli(['reservations', '--cluster-cidrs', V4, '--subnets', example, '--pod-share', '0.3', '--format', 'json']);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as { reservations: Array<{ subnetId: string; cidr: string; family: number }>; warnings: string[]; description: string };
    expect(plan.description).toBe('podroute');
    expect((plan as unknown as { reservationType: string }).reservationType).toBe('explicit');
    expect(plan.warnings).toEqual([]);
    expect(plan.reservations.map((r) => [r.subnetId, r.family, r.cidr])).toEqual([
      ['subnet-0a1b2c3d4e5f60011', 4, '10.0.16.0/21'],
      ['subnet-0a1b2c3d4e5f60012', 4, '10.0.48.0/21'],
      ['subnet-0a1b2c3d4e5f60013', 4, '10.0.80.0/21'],
    ]);
  });

  it('--pod-share changes the size, --description is quoted for the shell', async () => {
    const { code, stdout } = await cli(['reservations', '--cluster-cidrs', V4, '--subnets', example, '--pod-share', '0.2', '--description', "podroute's pods"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--cidr 10.0.24.0/22 --reservation-type explicit --description 'podroute'\\''s pods'\n");
  });

  it('--node-sync-mode SyncFromCloud asks for prefix-type reservations, EC2 picking from them', async () => {
    const { code, stdout } = await cli(['reservations', '--cluster-cidrs', V4, '--subnets', example, '--node-sync-mode', 'SyncFromCloud']);
    expect(code).toBe(0);
    expect(stdout.match(/--reservation-type \S+/g)).toEqual(Array(3).fill('--reservation-type prefix'));
    const json = await cli(['reservations', '--cluster-cidrs', V4, '--subnets', example, '--node-sync-mode', 'SyncFromCloud', '--format', 'json']);
    expect((JSON.parse(json.stdout) as { reservationType: string }).reservationType).toBe('prefix');
  });

  it('reads stdin as "-"', async () => {
    const text = await readFile(example, 'utf8');
    const { code, stdout } = await cli(['reservations', '--cluster-cidrs', V4, '--subnets', '-'], { '-': text });
    expect(code).toBe(0);
    expect(stdout.match(/^aws ec2 /gm)).toHaveLength(3);
  });

  it('warns on stderr, exit 0, when in-use addresses must sit inside a reservation', async () => {
    const file = subnetsFile([{ SubnetId: 'subnet-busy', CidrBlock: '10.0.1.0/24', AvailableIpAddressCount: 10 }]);
    const { code, stdout, stderr } = await cli(['reservations', '--cluster-cidrs', V4, '--subnets', 'f'], { f: file });
    expect(code).toBe(0);
    expect(stdout).toContain('--subnet-id subnet-busy --cidr 10.0.1.128/26 ');
    expect(stderr).toBe(
      'podroute: warning: subnet subnet-busy: 241 of its addresses are in use and only 187 lie outside 10.0.1.128/26, so at least 54 in-use addresses sit inside the reservation; prefixes holding them cannot be delegated until those addresses are freed\n',
    );
  });

  it('is listed in the main help and has its own', async () => {
    expect((await cli(['--help'])).stdout).toMatch(/^ {2}reservations +print the subnet CIDR reservations prefixes mode needs/m);
    const help = await cli(['reservations', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: podroute reservations /);
    expect((await cli(['help', 'reservations'])).stdout).toBe(help.stdout);
  });
});

describe('podroute reservations: exit 2 with one line on stderr, nothing on stdout', () => {
  const cannotHold = subnetsFile([
    { SubnetId: 'subnet-ok', CidrBlock: '10.0.1.0/24' },
    { SubnetId: 'subnet-elsewhere', CidrBlock: '172.31.0.0/20' },
  ]);
  it.each([
    ['a subnet outside the cluster CIDR', ['--cluster-cidrs', V4, '--subnets', 'f'], cannotHold,
      'podroute: subnet subnet-elsewhere cannot hold a /28 reservation: 172.31.0.0/20 does not overlap the cluster CIDR 10.0.0.0/16\n'],
    ['a dual-stack cluster and a subnet without IPv6', ['--cluster-cidrs', `${V4},${V6}`, '--subnets', 'f'], subnetsFile([{ SubnetId: 'subnet-v4', CidrBlock: '10.0.1.0/24' }]),
      'podroute: subnet subnet-v4 has no associated IPv6 CIDR block, so it cannot hold pods of cluster CIDR 2600:1f18:4a3:6b00::/56\n'],
    ['a pod share too small', ['--cluster-cidrs', V4, '--subnets', 'f', '--pod-share', '0.01'], subnetsFile([{ SubnetId: 'subnet-small', CidrBlock: '10.0.1.0/24' }]),
      'podroute: subnet subnet-small cannot hold a /28 reservation: a pod share of 0.01 of 10.0.1.0/24 is less than one /28 prefix\n'],
    ['no --subnets', ['--cluster-cidrs', V4], '', "podroute: --subnets is required (see 'podroute reservations --help')\n"],
    ['no --cluster-cidrs', ['--subnets', 'f'], cannotHold, "podroute: --cluster-cidrs is required (see 'podroute reservations --help')\n"],
    ['a bad cluster CIDR', ['--cluster-cidrs', '10.0.0.0/33', '--subnets', 'f'], cannotHold, 'podroute: --cluster-cidrs: invalid CIDR "10.0.0.0/33"\n'],
    ['a pod share of 1', ['--cluster-cidrs', V4, '--subnets', 'f', '--pod-share', '1'], cannotHold, 'podroute: --pod-share must be a number above 0 and below 1, not "1"\n'],
    ['a pod share that is no number', ['--cluster-cidrs', V4, '--subnets', 'f', '--pod-share', 'half'], cannotHold, 'podroute: --pod-share must be a number above 0 and below 1, not "half"\n'],
    ['an empty pod share', ['--cluster-cidrs', V4, '--subnets', 'f', '--pod-share', ' '], cannotHold, 'podroute: --pod-share must be a number above 0 and below 1, not " "\n'],
    ['an empty description', ['--cluster-cidrs', V4, '--subnets', 'f', '--description', ' '], cannotHold, 'podroute: --description must not be empty\n'],
    ['an unknown node-sync mode', ['--cluster-cidrs', V4, '--subnets', 'f', '--node-sync-mode', 'cloud'], cannotHold, 'podroute: --node-sync-mode must be SyncFromCluster or SyncFromCloud, not "cloud"\n'],
    ['an unknown format', ['--cluster-cidrs', V4, '--subnets', 'f', '--format', 'xml'], cannotHold, 'podroute: -o (--output) must be sh, json, yaml or table, not "xml"\n'],
    ['an unknown flag', ['--cluster-cidrs', V4, '--subnets', 'f', '--vpc', 'x'], cannotHold, /^podroute: Unknown option '--vpc'.*\n$/],
    ['a file that is not JSON', ['--cluster-cidrs', V4, '--subnets', 'f'], '{"Subnets": [', /^podroute: --subnets: "f" is not JSON \(.*\)\n$/],
    ['route tables instead of subnets', ['--cluster-cidrs', V4, '--subnets', 'f'], '{"RouteTables": []}', /^podroute: not an EC2 DescribeSubnets result: Subnets: .*\n$/],
    ['no subnets at all', ['--cluster-cidrs', V4, '--subnets', 'f'], '{"Subnets": []}', 'podroute: no subnets: the DescribeSubnets result lists none\n'],
    ['a missing file', ['--cluster-cidrs', V4, '--subnets', join(root, 'no-such-file.json')], '', /^podroute: --subnets: cannot read ".*no-such-file\.json": no such file\n$/],
  ])('%s', async (_name, args, file, message) => {
    const { code, stdout, stderr } = await cli(['reservations', ...args], { f: file });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    if (typeof message === 'string') expect(stderr).toBe(message);
    else expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('shellQuote', () => {
  it.each([
    ['podroute', 'podroute'],
    ['subnet-0abc', 'subnet-0abc'],
    ['2600:1f18::/66', '2600:1f18::/66'],
    ['two words', "'two words'"],
    ["it's", "'it'\\''s'"],
    ['$(rm -rf /)', "'$(rm -rf /)'"],
    ['', "''"],
  ])('%j -> %s', (text, quoted) => {
    expect(shellQuote(text)).toBe(quoted);
  });
});

describe('the real binary', () => {
  it('reads describe-subnets JSON on stdin and, for a subnet that cannot hold one, exits 2 with one line', async () => {
    const input = subnetsFile([{ SubnetId: 'subnet-tiny', CidrBlock: '10.0.1.0/28' }]);
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, builtCli(['reservations', '--cluster-cidrs', V4, '--subnets', '-']), { cwd: root }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      });
      child.stdin?.end(input);
    });
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('podroute: subnet subnet-tiny cannot hold a /28 reservation: a pod share of 0.5 of 10.0.1.0/28 is less than one /28 prefix\n');
    expect(result.code).toBe(2);
  });
});
