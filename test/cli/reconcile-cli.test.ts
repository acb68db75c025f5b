/**
 * `podroute reconcile --dry-run` end to end: the real command, the real AWS and Kubernetes clients,
 * against the local EC2 and Kubernetes emulators, dynalite (the lease table) and fauxqs (the queue),
 * reached through AWS_ENDPOINT_URL_EC2, _DYNAMODB and _SQS, the cluster through a kubeconfig file.
 * It prints the plan and what the function would send, and changes nothing.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { builtCli } from '../support/cli-binary.ts';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../infra/local/dynamodb.ts';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { main } from '../../lib/cli/main.ts';
import { RECONCILE_HELP, reconcileCommand } from '../../lib/cli/reconcile-command.ts';
import { NO_REGION } from '../../lib/cli/region.ts';
import { interceptLocalhostDns } from 'fauxqs';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

let ec2: Ec2Emulator;
let kube: KubeEmulator;
let dir: string;
let kubeconfig: string;
let tableId: string;
let dynamo: LocalDynamoDb;
let sqs: LocalSqs;
let queueUrl: string;
let restoreDns: () => void = () => undefined;
let stray: string;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    // The SDK sends to the queue URL's host (sqs.<region>.localhost): resolved to 127.0.0.1 in the child.
    const { stdout, stderr } = await run(process.execPath, builtCli(args, [join(root, 'test', 'support', 'localhost-dns.mjs')]), {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        AWS_ENDPOINT_URL_EC2: ec2.url,
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        AWS_ENDPOINT_URL_SQS: sqs.endpoint,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_REGION: 'us-east-1',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Runs `main` in process with the reconcile command, as the binary wires it, and an empty env. */
async function inProcess(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: (text: string) => void (stdout += text),
    stderr: (text: string) => void (stderr += text),
    readFile: (path: string) => readFile(path, 'utf8'),
    env,
  };
  const code = await main(args, io, { reconcile: reconcileCommand });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  ec2 = await startEc2Emulator({ throttle: false });
  kube = await startKubeEmulator();
  dynamo = await startLocalDynamoDb();
  sqs = await startLocalSqs();
  // The in-process runs send to the queue URL's host too (sqs.<region>.localhost).
  restoreDns = interceptLocalhostDns();
  queueUrl = (await sqs.createQueue('podroute-routes')).queueUrl;
  dir = await mkdtemp(join(tmpdir(), 'podroute-reconcile-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kube.kubeConfigYaml(kube.podrouteToken));
  tableId = ec2.state.addRouteTable({ tags: { 'kubernetes.io/cluster/demo': 'owned' } }).id;
  const ready = ec2.state.addInstance({});
  const fresh = ec2.state.addInstance({});
  await ec2.state.addRoute({ routeTableId: tableId, destinationCidr: '10.244.1.0/24', instanceId: ready.id });
  stray = ec2.state.addInstance({}).id;
  await ec2.state.addRoute({ routeTableId: tableId, destinationCidr: '10.244.9.0/24', instanceId: stray });
  await kube.state.addNode(node('ready', ready.id, '10.244.1.0/24'));
  await kube.state.addNode(node('fresh', fresh.id, '10.244.2.0/24'));
});
afterAll(async () => {
  await kube.close();
  await ec2.close();
  await dynamo.close();
  await sqs.stop();
  restoreDns();
  await rm(dir, { recursive: true, force: true });
});

/** The lease table and the queue the dry run reads. */
const stores = () => ['--cidr-table-name', dynamo.tableName, '--queue-url', queueUrl];

function node(name: string, instanceId: string, podCidr: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { providerID: `aws:///us-east-1a/${instanceId}`, podCIDR: podCidr, podCIDRs: [podCidr] },
    status: { conditions: [] },
  };
}

describe('podroute reconcile --dry-run', () => {
  it('prints the plan for the live cluster and changes nothing (the real binary)', async () => {
    const before = { routes: JSON.stringify(ec2.state.routes(tableId)), nodes: JSON.stringify(kube.state.nodes()) };
    const { code, stdout, stderr } = await cli(['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', '10.244.0.0/16', '--kubeconfig', kubeconfig, ...stores()]);
    // Nothing but the SDK's notice that it sends to the queue URL's host, not to AWS_ENDPOINT_URL_SQS.
    expect(stderr.split('\n').filter((line) => line !== '' && !/QueueUrl=|useQueueUrlAsEndpoint/.test(line))).toEqual([]);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as {
      create: Array<{ destinationCidr: string; node: string }>;
      delete: Array<{ destinationCidr: string; reason: string }>;
      nodes: Array<{ node: string; networkUnavailable: unknown }>;
      send: Array<{ kind: string; destinationCidr?: string }>;
      occupy: Array<{ node: string; cidr: string }>;
    };
    expect(plan.create.map((op) => [op.node, op.destinationCidr])).toEqual([['fresh', '10.244.2.0/24']]);
    expect(plan.delete).toEqual([{ routeTableId: tableId, destinationCidr: '10.244.9.0/24', reason: 'no-owner', expect: { instanceId: stray, blackhole: false } }]);
    expect(plan.nodes).toEqual([
      { node: 'fresh', networkUnavailable: 'pending', patch: false },
      { node: 'ready', networkUnavailable: false, patch: true },
    ]);
    // The function would send the create and the deletion, and adopt both nodes' pod CIDRs (the lease table is empty).
    expect(plan.send.map((m) => [m.kind, m.destinationCidr])).toEqual([['create', '10.244.2.0/24'], ['delete', '10.244.9.0/24']]);
    expect(plan.occupy).toEqual([{ node: 'fresh', cidr: '10.244.2.0/24' }, { node: 'ready', cidr: '10.244.1.0/24' }]);
    expect(JSON.stringify(ec2.state.routes(tableId))).toBe(before.routes);
    expect(JSON.stringify(kube.state.nodes())).toBe(before.nodes);
  }, 60_000);

  it.each([
    [['reconcile', '--cluster-name', 'demo', '--cluster-cidrs', '10.244.0.0/16'], /only with --dry-run/],
    [['reconcile', '--dry-run', '--cluster-cidrs', '10.244.0.0/16'], /CLUSTER_NAME/],
    [['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', 'nope'], /invalid CIDR "nope"/],
    [['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', '0.0.0.0/0'], /CLUSTER_CIDRS 0\.0\.0\.0\/0 is too broad/],
    [['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', '10.244.0.0/16', '--queue-url', 'http://127.0.0.1:9/q'], /--cidr-table-name or set CIDR_TABLE_NAME/],
    [['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', '10.244.0.0/16', '--cidr-table-name', 't'], /--queue-url or set QUEUE_URL/],
    [['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', '10.244.0.0/16', '--kubeconfig', '/nonexistent/kubeconfig', '--cidr-table-name', 't', '--queue-url', 'http://127.0.0.1:9/q'], /cannot load the kubeconfig/],
  ])('%j: exit 2 with one line', async (args, message) => {
    // In process: these fail before any client is made (the binary's own run is the case above).
    const { code, stdout, stderr } = await inProcess(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(message);
  });

  it('prints its help for --help and for `podroute help|--help|-h reconcile`, the binary loading the command only then', async () => {
    const own = await inProcess(['reconcile', '--help']);
    expect(own).toEqual({ code: 0, stdout: RECONCILE_HELP, stderr: '' });
    expect(await inProcess(['help', 'reconcile'])).toEqual(own);
    expect(await inProcess(['--help', 'reconcile'])).toEqual(own);
    expect(await inProcess(['-h', 'reconcile'])).toEqual(own);
    const spawned = await cli(['help', 'reconcile']);
    expect(spawned).toEqual({ code: 0, stdout: RECONCILE_HELP, stderr: '' });
  }, 60_000);

  describe('in process, the SDK pointed at the emulator', () => {
    afterEach(() => {
      vi.unstubAllEnvs();
    });
    const dryRun = () => ['reconcile', '--dry-run', '--cluster-name', 'demo', '--cluster-cidrs', '10.244.0.0/16', '--kubeconfig', kubeconfig, ...stores()];
    const sdkEnvironment = () => {
      vi.stubEnv('AWS_ENDPOINT_URL_EC2', ec2.url);
      vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', dynamo.endpoint);
      vi.stubEnv('AWS_ENDPOINT_URL_SQS', sqs.endpoint);
      vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
      vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
      vi.stubEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');
      // Nothing for the SDK's own region chain to find.
      vi.stubEnv('AWS_REGION', undefined);
      vi.stubEnv('AWS_PROFILE', undefined);
      vi.stubEnv('AWS_CONFIG_FILE', join(dir, 'no-aws-config'));
      vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', join(dir, 'no-aws-credentials'));
      vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
    };

    it('-o yaml --detailed-exitcode: the plan as YAML, exit 2 (changes pending)', async () => {
      sdkEnvironment();
      const { code, stdout, stderr } = await inProcess([...dryRun(), '-o', 'yaml', '--detailed-exitcode'], { AWS_DEFAULT_REGION: 'us-east-1' });
      expect(stderr).toBe('');
      expect(code).toBe(2);
      expect(stdout).toMatch(/^create:\n- routeTableId: rtb-\S+\n {2}destinationCidr: 10\.244\.2\.0\/24\n {2}node: fresh\n/);
    }, 30_000);

    it('with no region anywhere: exit 2, the one line that says how to set one, no AWS call', async () => {
      sdkEnvironment();
      const calls = ec2.stats.count('DescribeRouteTables');
      const { code, stdout, stderr } = await inProcess(dryRun());
      expect([code, stdout, stderr]).toEqual([2, '', `podroute: ${NO_REGION}\n`]);
      expect(ec2.stats.count('DescribeRouteTables')).toBe(calls);
    }, 30_000);
  });
});
