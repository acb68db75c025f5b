/**
 * `podroute plan`: the contract (ARCHITECTURE.md, contract 1). `main()` takes an io port, so most
 * cases run it in process; a few run the built binary, as an installed package runs it, to prove
 * it wires the same io (files, stdin, stdout, stderr, exit code). bin/podroute.ts's SIGPIPE
 * handling is in plan-pipe.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from '../support/cli-binary.ts';
import { main } from '../../lib/cli/main.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `main` in process with captured output; `input` is what `-` reads, as stdin would give it. */
async function cli(args: string[], input?: string): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readFile: async (path) => (path === '-' ? (input ?? '') : readFile(path, 'utf8')),
    env: {},
  });
  return { code, stdout, stderr };
}

/** Runs the real command, as an installed package runs it, and never throws on a non-zero exit. */
async function binary(args: string[], input?: string): Promise<Outcome> {
  const child = run(process.execPath, builtCli(args), { cwd: root });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The fields of an example node this file looks at. */
interface KubeletNode {
  metadata: { labels: Record<string, string>; managedFields: Array<{ manager: string }> };
  spec: { providerID?: string; podCIDRs?: string[] };
  status: { conditions: Array<{ type: string }>; images: unknown[]; nodeInfo: Record<string, string>; daemonEndpoints: unknown };
}

const example = (name: string) => join(root, 'examples', name);
const planArgs = ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podroute-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('podroute plan on the shipped examples', () => {
  it('prints exactly one JSON plan with the contract keys and exits 0', async () => {
    const { code, stdout, stderr } = await cli([...planArgs, '--cluster-name', 'demo']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const plan = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(plan)).toEqual(['create', 'replace', 'delete', 'nodes']);
    expect(plan.create).toEqual([
      { routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.2.0/24', node: 'ip-10-0-1-11.ec2.internal', instanceId: 'i-0a1b2c3d4e5f60002' },
    ]);
    expect(plan.replace).toEqual([
      { routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.3.0/24', node: 'ip-10-0-1-12.ec2.internal', instanceId: 'i-0a1b2c3d4e5f60003', reason: 'blackhole' },
      { routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.4.0/24', node: 'ip-10-0-1-13.ec2.internal', instanceId: 'i-0a1b2c3d4e5f60004', reason: 'moved', expect: { instanceId: 'i-0a1b2c3d4e5f60099' } },
    ]);
    expect(plan.delete).toEqual([
      { routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.7.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } },
      { routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.9.0/24', reason: 'no-owner', expect: { instanceId: 'i-0a1b2c3d4e5f60005', blackhole: false } },
    ]);
    expect(plan.nodes).toEqual([
      // EKS Fargate: its providerID names no EC2 instance, so podroute never routes nor patches it.
      { node: 'fargate-ip-10-0-1-200.ec2.internal', networkUnavailable: false, patch: false, unmanaged: 'not-an-ec2-instance' },
      { node: 'ip-10-0-1-10.ec2.internal', networkUnavailable: false, patch: false },
      { node: 'ip-10-0-1-11.ec2.internal', networkUnavailable: 'pending', patch: false },
      { node: 'ip-10-0-1-12.ec2.internal', networkUnavailable: 'pending', patch: false },
      { node: 'ip-10-0-1-13.ec2.internal', networkUnavailable: 'pending', patch: false },
      { node: 'ip-10-0-1-14.ec2.internal', networkUnavailable: true, patch: true },
    ]);
  });

  it('without --cluster-name treats every table in the file as the cluster\'s', async () => {
    const { code, stdout } = await cli(planArgs);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as { create: Array<{ routeTableId: string }>; delete: Array<{ routeTableId: string }> };
    expect(plan.create.map((op) => op.routeTableId)).toContain('rtb-0a1b2c3d4e5f60002');
    expect(plan.delete.map((op) => op.routeTableId)).toContain('rtb-0a1b2c3d4e5f60002');
  });

  it('reads the node list from stdin with --nodes -', async () => {
    const nodes = await readFile(example('nodes.json'), 'utf8');
    const { code, stdout } = await cli(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', '-', '--route-tables', example('route-tables.json')], nodes);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { nodes: unknown[] }).nodes).toHaveLength(6);
  });

  it('the nodes example is what kubectl prints: a List of kubelet-registered nodes of 10-15 KB each', async () => {
    const list = JSON.parse(await readFile(example('nodes.json'), 'utf8')) as { apiVersion: string; kind: string; metadata: unknown; items: KubeletNode[] };
    expect([list.apiVersion, list.kind, list.metadata]).toEqual(['v1', 'List', { resourceVersion: '' }]);
    const regular = list.items.filter((item) => !String(item.spec.providerID).includes('fargate-'));
    expect(regular.length).toBeGreaterThanOrEqual(5);
    for (const item of regular) {
      const size = JSON.stringify(item).length;
      expect(size).toBeGreaterThanOrEqual(10_000);
      expect(size).toBeLessThanOrEqual(15_000);
      expect(item.metadata.labels['topology.kubernetes.io/zone']).toMatch(/^us-east-1[a-f]$/);
      expect(item.metadata.labels['node.kubernetes.io/instance-type']).toBeTruthy();
      expect(item.metadata.managedFields.map((m) => m.manager)).toContain('kubelet');
      expect(item.spec.providerID).toMatch(/^aws:\/\/\/us-east-1[a-f]\/i-[0-9a-f]{17}$/);
      expect(item.status.conditions.map((c) => c.type)).toEqual(expect.arrayContaining(['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']));
      expect(item.status.images.length).toBeGreaterThan(10);
      expect(Object.keys(item.status.nodeInfo)).toEqual(expect.arrayContaining(['kubeletVersion', 'containerRuntimeVersion', 'osImage', 'bootID']));
      expect(item.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    }
    expect(regular.some((item) => item.spec.podCIDRs === undefined)).toBe(true);
    expect(regular.some((item) => item.status.conditions.some((c) => c.type === 'NetworkUnavailable'))).toBe(true);
  });

  it('accepts the API server\'s NodeList as well as kubectl\'s List', async () => {
    const list = JSON.parse(await readFile(example('nodes.json'), 'utf8')) as Record<string, unknown>;
    const p = join(dir, 'nodelist.json');
    await writeFile(p, JSON.stringify({ ...list, kind: 'NodeList', metadata: { resourceVersion: '48213' } }));
    const fromApi = await cli(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', p, '--route-tables', example('route-tables.json'), '--cluster-name', 'demo']);
    const fromKubectl = await cli([...planArgs, '--cluster-name', 'demo']);
    expect(fromApi.code).toBe(0);
    expect(fromApi.stdout).toBe(fromKubectl.stdout);
  });

  it('--node-selector lists the nodes outside it as unmanaged and routes none of them', async () => {
    const { code, stdout } = await cli([...planArgs, '--cluster-name', 'demo', '--node-selector', 'node.kubernetes.io/instance-type in (m5.xlarge)']);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as { create: unknown[]; replace: Array<{ node: string }>; nodes: Array<{ node: string; unmanaged?: string; patch: boolean }> };
    expect(plan.create).toEqual([]);
    expect(plan.replace.map((op) => op.node)).toEqual(['ip-10-0-1-13.ec2.internal']);
    expect(plan.nodes.filter((n) => n.unmanaged === undefined).map((n) => n.node)).toEqual(['ip-10-0-1-13.ec2.internal']);
    expect(plan.nodes.filter((n) => n.unmanaged !== undefined).every((n) => !n.patch)).toBe(true);
  });

  it('marks the plan unsafe when the guard trips and still lists the deletions', async () => {
    const empty = join(dir, 'empty-nodes.json');
    await writeFile(empty, JSON.stringify({ apiVersion: 'v1', kind: 'NodeList', items: [] }));
    const { code, stdout } = await cli(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', empty, '--route-tables', example('route-tables.json'), '--cluster-name', 'demo']);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as { unsafe?: string; delete: unknown[] };
    expect(plan.unsafe).toMatch(/empty/);
    expect(plan.delete.length).toBeGreaterThan(0);
  });

  it('-o yaml prints the plan -o json prints, as one YAML document', async () => {
    const json = await cli([...planArgs, '--cluster-name', 'demo', '-o', 'json']);
    const yaml = await cli([...planArgs, '--cluster-name', 'demo', '-o', 'yaml']);
    expect([yaml.code, yaml.stderr]).toEqual([0, '']);
    expect(load(yaml.stdout)).toEqual(JSON.parse(json.stdout));
  });

  it('prints a readable table with --format table', async () => {
    const { code, stdout } = await cli([...planArgs, '--cluster-name', 'demo', '--format', 'table']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/1 to create, 2 to replace, 2 to delete/);
    expect(stdout).toMatch(/ACTION\s+ROUTE TABLE\s+DESTINATION/);
    expect(stdout).not.toMatch(/^\{/);
  });

  it('nodes whose pod CIDRs overlap: the first registered owns, the others are conflicts with no route', async () => {
    const kubeNode = (name: string, instance: string, podCidr: string, created: string) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, creationTimestamp: created },
      spec: { providerID: `aws:///us-east-1a/${instance}`, podCIDR: podCidr, podCIDRs: [podCidr] },
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' }] },
    });
    const nodes = join(dir, 'overlapping-nodes.json');
    await writeFile(nodes, JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '' },
      items: [
        // Registered later, with the victim's exact CIDR, and sorting first by name.
        kubeNode('a-same', 'i-0000000000000000a', '10.244.1.0/24', '2026-01-02T00:00:00Z'),
        kubeNode('b-inside', 'i-0000000000000000b', '10.244.1.128/25', '2026-01-02T00:00:00Z'),
        kubeNode('c-everything', 'i-0000000000000000c', '10.244.0.0/16', '2026-01-02T00:00:00Z'),
        kubeNode('victim', 'i-00000000000000001', '10.244.1.0/24', '2026-01-01T00:00:00Z'),
      ],
    }));
    const tablesFile = join(dir, 'overlapping-tables.json');
    const route = (cidr: string, instance: string) => ({ DestinationCidrBlock: cidr, InstanceId: instance, Origin: 'CreateRoute', State: 'active' });
    await writeFile(tablesFile, JSON.stringify({
      RouteTables: [{ RouteTableId: 'rtb-0a1b2c3d4e5f60001', Routes: [route('10.244.1.0/24', 'i-0000000000000000a'), route('10.244.1.128/25', 'i-0000000000000000b')], Tags: [] }],
    }));
    const { code, stdout, stderr } = await cli(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', nodes, '--route-tables', tablesFile]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as { create: unknown[]; replace: unknown[]; delete: unknown[]; nodes: unknown[] };
    expect(plan.create).toEqual([]);
    expect(plan.replace).toEqual([{ routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.1.0/24', node: 'victim', instanceId: 'i-00000000000000001', reason: 'moved', expect: { instanceId: 'i-0000000000000000a' } }]);
    expect(plan.delete).toEqual([{ routeTableId: 'rtb-0a1b2c3d4e5f60001', destinationCidr: '10.244.1.128/25', reason: 'no-owner', expect: { instanceId: 'i-0000000000000000b', blackhole: false } }]);
    expect(plan.nodes).toEqual([
      { node: 'a-same', networkUnavailable: true, patch: true, conflict: 'overlaps-pod-cidr' },
      { node: 'b-inside', networkUnavailable: true, patch: true, conflict: 'overlaps-pod-cidr' },
      { node: 'c-everything', networkUnavailable: true, patch: true, conflict: 'overlaps-pod-cidr' },
      { node: 'victim', networkUnavailable: 'pending', patch: false },
    ]);
    const table = await cli(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', nodes, '--route-tables', tablesFile, '--format', 'table']);
    expect(table.stdout).toMatch(/a-same\s+true\s+yes\s+overlaps-pod-cidr/);
  });

  it('documents every flag in --help', async () => {
    const { code, stdout } = await cli(['plan', '--help']);
    expect(code).toBe(0);
    for (const flag of ['--cluster-cidrs', '--nodes', '--route-tables', '--cluster-name', '--node-selector', '--format', '--max-delete-share', '--min-deletes-for-guard']) {
      expect(stdout).toContain(flag);
    }
  });
});

describe('podroute plan on bad input', () => {
  const cases: Array<[string, () => Promise<string[]>, RegExp]> = [
    ['a missing nodes file', async () => ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', join(dir, 'nope.json'), '--route-tables', example('route-tables.json')], /--nodes: cannot read .*no such file/],
    ['a nodes file that is not JSON', async () => {
      const p = join(dir, 'bad.json');
      await writeFile(p, '{"items": [');
      return ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', p, '--route-tables', example('route-tables.json')];
    }, /--nodes: .* is not JSON/],
    ['a file that is not a NodeList', async () => {
      const p = join(dir, 'pods.json');
      await writeFile(p, JSON.stringify({ kind: 'PodList', items: [] }));
      return ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', p, '--route-tables', example('route-tables.json')];
    }, /not a Kubernetes NodeList/],
    ['a List holding something other than Nodes', async () => {
      const p = join(dir, 'mixed.json');
      await writeFile(p, JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }] }));
      return ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', p, '--route-tables', example('route-tables.json')];
    }, /not a Kubernetes NodeList: items\.0\.kind: every item must be a Node/],
    ['a bad --node-selector', async () => [...planArgs, '--node-selector', 'role in ()'], /--node-selector: invalid label selector "role in \(\)": 'in' needs at least one value/],
    ['route tables that are not describe-route-tables output', async () => {
      const p = join(dir, 'tables.json');
      await writeFile(p, JSON.stringify({ Reservations: [] }));
      return ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', example('nodes.json'), '--route-tables', p];
    }, /RouteTables/],
    ['a bad cluster CIDR', async () => ['plan', '--cluster-cidrs', '10.244.0.0/33', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')], /invalid CIDR "10\.244\.0\.0\/33"/],
    ['a missing required flag', async () => ['plan', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')], /--cluster-cidrs is required/],
    ['an unknown flag', async () => [...planArgs, '--frobnicate'], /frobnicate/],
    ['a bad --format', async () => [...planArgs, '--format', 'xml'], /-o \(--output\) must be json, yaml or table, not "xml"/],
    ['a bad -o', async () => [...planArgs, '-o', 'wide'], /-o \(--output\) must be json, yaml or table, not "wide"/],
    ['-o and --format that disagree', async () => [...planArgs, '-o', 'json', '--format', 'table'], /--format is the old name of -o/],
    ['a bad --max-delete-share', async () => [...planArgs, '--max-delete-share', 'lots'], /--max-delete-share must be a number/],
    // The functions' config checks (lib/config.ts), shared.
    ['a cluster CIDR of everything (IPv4)', async () => ['plan', '--cluster-cidrs', '0.0.0.0/0', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')], /--cluster-cidrs: 0\.0\.0\.0\/0 is too broad/],
    ['a cluster CIDR of everything (IPv6)', async () => ['plan', '--cluster-cidrs', '10.244.0.0/16,::/0', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')], /--cluster-cidrs: ::\/0 is too broad/],
    ['a fractional --min-deletes-for-guard', async () => [...planArgs, '--min-deletes-for-guard', '2.5'], /--min-deletes-for-guard must be a whole number from 0 to 1000, got 2\.5/],
    ['a --max-delete-share above 1', async () => [...planArgs, '--max-delete-share', '1.5'], /--max-delete-share must be a number > 0 and <= 1, got 1\.5/],
    ['an unknown command', async () => ['apply'], /unknown command "apply"/],
    // Contract 1: no table carrying the cluster tag is bad input (upstream refuses to run without one).
    ['no table tagged for --cluster-name', async () => [...planArgs, '--cluster-name', 'demo-typo'], /no route table carries the tag kubernetes\.io\/cluster\/demo-typo/],
    // Contract 1, bad input: a --cluster-cidrs no node's pod CIDR lies in would plan every node unavailable.
    ['a --cluster-cidrs that holds no node\'s pod CIDR (a typo)', async () => ['plan', '--cluster-cidrs', '10.245.0.0/16', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')], /no managed node's pod CIDR lies in --cluster-cidrs 10\.245\.0\.0\/16 .*check --cluster-cidrs/],
    ['a route table file with no tables', async () => {
      const p = join(dir, 'no-tables.json');
      await writeFile(p, JSON.stringify({ RouteTables: [] }));
      return ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', example('nodes.json'), '--route-tables', p];
    }, /no route table/],
  ];

  it.each(cases)('%s: exit 2, one clear line, no stack trace, nothing on stdout', async (_name, args, message) => {
    const { code, stdout, stderr } = await cli(await args());
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^podroute: /);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the podroute binary', () => {
  // Each case spawns the built command, so only these few: they prove bin/podroute.ts gives main()
  // the real files, stdin, stdout, stderr and exit code.
  it('prints the same plan as main() for files, and exits 0', async () => {
    const args = [...planArgs, '--cluster-name', 'demo'];
    const [spawned, inProcess] = [await binary(args), await cli(args)];
    expect(spawned).toEqual({ code: 0, stdout: inProcess.stdout, stderr: '' });
    expect(Object.keys(JSON.parse(spawned.stdout) as object)).toEqual(['create', 'replace', 'delete', 'nodes']);
  }, 60_000);

  it('reads --nodes - from its stdin', async () => {
    const nodes = await readFile(example('nodes.json'), 'utf8');
    const args = ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', '-', '--route-tables', example('route-tables.json')];
    const spawned = await binary(args, nodes);
    expect(spawned.code).toBe(0);
    expect(spawned.stdout).toBe((await cli(args, nodes)).stdout);
    expect((JSON.parse(spawned.stdout) as { nodes: unknown[] }).nodes).toHaveLength(6);
  }, 60_000);

  it('bad input: exit 2, one line on stderr, no stack trace, nothing on stdout', async () => {
    const spawned = await binary(['plan', '--cluster-cidrs', '10.244.0.0/33', '--nodes', example('nodes.json'), '--route-tables', join(dir, 'nope.json')]);
    expect(spawned.code).toBe(2);
    expect(spawned.stdout).toBe('');
    expect(spawned.stderr).toMatch(/^podroute: [^\n]*invalid CIDR "10\.244\.0\.0\/33"[^\n]*\n$/);
  }, 60_000);
});
