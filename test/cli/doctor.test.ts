/**
 * `podroute doctor` against the local stand-ins: the EC2 and Kubernetes emulators (with
 * SubjectAccessReview and MutatingWebhookConfigurations), DynamoDB (dynalite) and SQS (fauxqs).
 * The command runs in process through the CLI's `main`, with SDK clients for the stand-ins; one
 * test spawns the real binary.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtCli } from '../support/cli-binary.ts';
import { createDoctorCommand } from '../../lib/cli/doctor-command.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import type { LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import type { ServiceQuotasEmulator } from '../../infra/local/service-quotas/index.ts';
import { main } from '../../lib/cli/main.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { type DoctorServices, doctorClientsFor, startDoctorServices } from '../support/doctor-services.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

let ec2: Ec2Emulator;
let kube: KubeEmulator;
let sqs: LocalSqs;
let dynamo: LocalDynamo;
let quotas: ServiceQuotasEmulator;
let kubeconfig: string;
let queueUrl: string;
let tableId: string;
/** A cluster name per test, so each test sees only its own tagged table in the shared EC2 emulator. */
let cluster: string;
let clusters = 0;

/** The webhook registration of infra/kubernetes/webhook.yaml (its URL's token is a placeholder). */
const WEBHOOK_CONFIGURATION = {
  metadata: { name: 'podroute' },
  webhooks: [
    {
      name: 'node-join.podroute.io',
      admissionReviewVersions: ['v1'],
      sideEffects: 'NoneOnDryRun',
      failurePolicy: 'Ignore',
      clientConfig: { url: 'https://abc123.execute-api.us-east-1.amazonaws.com/webhook/secret-token-do-not-print' },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'DELETE'], resources: ['nodes'], scope: 'Cluster' }],
    },
  ],
};

function node(name: string, providerID: string, podCidr?: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { providerID, ...(podCidr ? { podCIDR: podCidr, podCIDRs: [podCidr] } : {}) },
    status: { conditions: [] },
  };
}

let services: DoctorServices;
beforeAll(async () => {
  services = await startDoctorServices('podroute-demo-routes', 'podroute-doctor-');
  ({ ec2, sqs, dynamo, quotas, kubeconfig, queueUrl } = services);
});
afterAll(() => services.close());

beforeEach(async () => {
  kube = await startKubeEmulator();
  await writeFile(kubeconfig, kube.kubeConfigYaml());
  kube.state.webhookConfigurations.put(WEBHOOK_CONFIGURATION);
  quotas.state.clear();
  quotas.state.setDefault('vpc', 'L-93826ACB', { name: 'Routes per route table', value: 500 });
  clusters += 1;
  cluster = `demo-${clusters}`;
  tableId = ec2.state.addRouteTable({ tags: { [`kubernetes.io/cluster/${cluster}`]: 'owned' } }).id;
});
afterEach(async () => {
  await kube.close();
});

const clusterName = (): string => cluster;

/** Node instances as a launch template with a `network-interface` TagSpecification starts them. */
const clusterInterfaceTags = () => ({ [`kubernetes.io/cluster/${cluster}`]: 'owned' });

async function healthyCluster(): Promise<void> {
  const a = ec2.state.addInstance({ primaryInterfaceTags: clusterInterfaceTags() });
  const b = ec2.state.addInstance({ primaryInterfaceTags: clusterInterfaceTags() });
  ec2.state.addRoute({ routeTableId: tableId, destinationCidr: '10.244.1.0/24', instanceId: a.id });
  await kube.state.addNode(node('ip-10-0-1-1', `aws:///us-east-1a/${a.id}`, '10.244.1.0/24'));
  await kube.state.addNode(node('ip-10-0-1-2', `aws:///us-east-1a/${b.id}`, '10.244.2.0/24'));
  await kube.state.addNode(node('fargate-ip-10-0-9-9', 'aws:///us-east-1a/fargate-ip-10-0-9-9.ec2.internal'));
}

async function doctor(extra: string[] = []): Promise<{ code: number; lines: string[]; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const command = createDoctorCommand((region) => doctorClientsFor(services, region));
  const args = ['doctor', '--cluster-name', clusterName(), '--cluster-cidrs', '10.244.0.0/16', '--kubeconfig', kubeconfig, '--queue-url', queueUrl, '--cidr-table-name', dynamo.tableName, ...extra];
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), readFile: async () => '', env: { AWS_REGION: 'us-east-1' } }, { doctor: command });
  return { code, lines: stdout.trimEnd().split('\n'), stderr };
}

const line = (lines: string[], check: string): string => lines.find((l) => l.includes(` ${check}:`)) ?? `(no line for ${check})`;

describe('podroute doctor', () => {
  it('-o json and -o yaml print the checks the table prints, as {status, check, detail}', async () => {
    await healthyCluster();
    const table = await doctor();
    const json = await doctor(['-o', 'json']);
    const yaml = await doctor(['-o', 'yaml']);
    expect([json.code, yaml.code, json.stderr, yaml.stderr]).toEqual([0, 0, '', '']);
    const checks = JSON.parse(json.lines.join('\n')) as Array<{ status: string; check: string; detail: string }>;
    expect(checks.map((c) => `${c.status.padEnd(4)}  ${c.check}: ${c.detail}`)).toEqual(table.lines);
    expect(loadAll(yaml.lines.join('\n'))).toEqual([checks]);
  });

  it('passes every check on a healthy setup, one line per check', async () => {
    await healthyCluster();
    const before = { routes: JSON.stringify(ec2.state.routes(tableId)), nodes: JSON.stringify(kube.state.nodes()) };
    const { code, lines, stderr } = await doctor();
    expect(stderr).toBe('');
    expect(lines.every((l) => /^(ok {2}|warn|FAIL) {2}[a-z][^:]*: /.test(l))).toBe(true);
    expect(lines.filter((l) => !l.startsWith('ok'))).toEqual([]);
    expect(code).toBe(0);
    expect(line(lines, 'route tables')).toBe(`ok    route tables: 1 found by tag kubernetes.io/cluster/${clusterName()}: ${tableId}`);
    expect(line(lines, 'route quota')).toBe("ok    route quota: 500 routes per route table (Service Quotas vpc/L-93826ACB, AWS's default)");
    // The VPC's local route and node a's route are in the table; node b's is still to make.
    expect(line(lines, `route quota ${tableId}`)).toBe(`ok    route quota ${tableId}: 3 of 500 IPv4 routes (2 in the table, podroute's or not, + 1 for 2 managed nodes)`);
    expect(line(lines, 'pod CIDRs')).toBe('ok    pod CIDRs: 2 pod CIDRs, all /24 in 10.244.0.0/16');
    expect(line(lines, 'nodes')).toBe('ok    nodes: manages 2 of 3; leaves 1 alone: fargate-ip-10-0-9-9 (not-an-ec2-instance)');
    expect(lines.filter((l) => l.includes(' permission '))).toHaveLength(7);
    expect(line(lines, 'permission patch nodes/status')).toBe('ok    permission patch nodes/status: allowed for user podroute in group podroute');
    expect(line(lines, 'admission webhook')).toBe('ok    admission webhook: node CREATE and DELETE go to podroute/node-join.podroute.io -> abc123.execute-api.us-east-1.amazonaws.com');
    expect(line(lines, 'queue')).toMatch(/^ok {4}queue: arn:aws:sqs:us-east-1:\d+:podroute-demo-routes$/);
    expect(line(lines, 'cidr table')).toBe(`ok    cidr table: ${dynamo.tableName} is ACTIVE`);
    expect(line(lines, 'interface tags')).toBe(`ok    interface tags: the primary interfaces of 2 managed nodes carry kubernetes.io/cluster/${clusterName()}`);
    expect(lines.join('\n')).not.toContain('secret-token-do-not-print');
    expect(kube.state.access.reviews()).toEqual(['list /nodes', 'get /nodes', 'patch /nodes', 'patch /nodes/status', 'create /events', 'get /events', 'patch /events']);
    // Read-only: nothing changed.
    expect(JSON.stringify(ec2.state.routes(tableId))).toBe(before.routes);
    expect(JSON.stringify(kube.state.nodes())).toBe(before.nodes);
  });

  it('leaves the nodes outside --node-selector alone, and counts no routes for them', async () => {
    await healthyCluster();
    const { lines } = await doctor(['--node-selector', 'podroute.io/managed=true']);
    expect(line(lines, 'nodes')).toBe(
      'warn  nodes: manages 0 of 3; leaves 3 alone: fargate-ip-10-0-9-9 (outside-node-selector), ip-10-0-1-1 (outside-node-selector), ip-10-0-1-2 (outside-node-selector)',
    );
    expect(line(lines, `route quota ${tableId}`)).toMatch(/^ok {4}route quota .*\+ 0 for 0 managed nodes\)$/);
  });

  it("asks about exactly the permissions podroute's ClusterRole grants (infra/kubernetes/rbac.yaml)", async () => {
    await healthyCluster();
    await doctor();
    const [role] = loadAll(await readFile(join(root, 'infra/kubernetes/rbac.yaml'), 'utf8')) as Array<{ rules: Array<Record<string, string[]>> }>;
    const granted = (role?.rules ?? []).flatMap((r) => (r.verbs ?? []).flatMap((verb) => (r.resources ?? []).map((resource) => `${verb} /${resource}`)));
    expect([...new Set(kube.state.access.reviews())].sort()).toEqual(granted.sort());
  });

  it('FAILs a missing permission, exit 1', async () => {
    await healthyCluster();
    kube.state.access.deny({ verb: 'patch', resource: 'nodes', subresource: 'status' });
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      "FAIL  permission patch nodes/status: denied for user podroute in group podroute (denied by the emulator): grant it in podroute's ClusterRole and bind that to podroute's group (infra/kubernetes/rbac.yaml)",
    ]);
  });

  it("answers for podroute's identity, not the caller's: an admin caller with podroute's binding deleted gets every permission FAILed", async () => {
    await healthyCluster();
    expect(kube.state.access.removeBinding('podroute')).toBe(true);
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    const permissions = lines.filter((l) => l.includes(' permission '));
    expect(permissions).toHaveLength(7);
    expect(permissions.every((l) => l.startsWith('FAIL  ') && l.includes('denied for user podroute in group podroute: grant it'))).toBe(true);
    expect(lines.filter((l) => l.startsWith('FAIL') && !l.includes(' permission '))).toEqual([]);
  });

  it.each([
    [['--kube-user', 'someone', '--kube-groups', ''], 'FAIL', 'denied for user someone: grant it'],
    [['--kube-user', '', '--kube-groups', 'podroute'], 'ok  ', 'allowed for group podroute'],
    [['--kube-user', 'admin', '--kube-groups', 'viewers,system:masters'], 'ok  ', 'allowed for user admin in groups viewers,system:masters'],
  ])('%j: the permissions of that identity', async (extra, status, detail) => {
    await healthyCluster();
    const { lines } = await doctor(extra);
    expect(line(lines, 'permission list nodes')).toBe(`${status}  permission list nodes: ${detail}${status === 'FAIL' ? " in podroute's ClusterRole and bind that to podroute's group (infra/kubernetes/rbac.yaml)" : ''}`);
  });

  it('FAILs a missing webhook, exit 1', async () => {
    await healthyCluster();
    kube.state.webhookConfigurations.remove('podroute');
    kube.state.webhookConfigurations.put({
      metadata: { name: 'someone-else' },
      webhooks: [{ name: 'pods.example.com', clientConfig: { url: 'https://example.com/' }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] }],
    });
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      'FAIL  admission webhook: no MutatingWebhookConfiguration covers node CREATE or DELETE; apply infra/kubernetes (nodes then wait for the schedule)',
    ]);
  });

  it('FAILs a webhook that covers CREATE but not DELETE', async () => {
    await healthyCluster();
    kube.state.webhookConfigurations.put({
      ...WEBHOOK_CONFIGURATION,
      webhooks: [{ ...WEBHOOK_CONFIGURATION.webhooks[0], rules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['nodes'] }] }],
    });
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    expect(line(lines, 'admission webhook')).toMatch(/^FAIL {2}admission webhook: no webhook for node DELETE/);
  });

  it('FAILs a table without room under the applied quota, exit 1, and passes with the raised one', async () => {
    await healthyCluster();
    for (let i = 0; i < 4; i += 1) ec2.state.addRoute({ routeTableId: tableId, destinationCidr: `192.168.${i}.0/24`, gatewayId: ec2.state.addGateway() });
    quotas.state.setApplied('vpc', 'L-93826ACB', { name: 'Routes per route table', value: 6 });
    const calls = quotas.state.calls().length;
    const full = await doctor();
    expect(full.code).toBe(1);
    expect(line(full.lines, 'route quota')).toBe('ok    route quota: 6 routes per route table (Service Quotas vpc/L-93826ACB, applied)');
    expect(full.lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      `FAIL  route quota ${tableId}: 7 of 6 IPv4 routes (6 in the table, podroute's or not, + 1 for 2 managed nodes): over the quota; raise "Routes per route table" (up to 1000)`,
    ]);
    quotas.state.setApplied('vpc', 'L-93826ACB', { name: 'Routes per route table', value: 1000 });
    expect((await doctor()).code).toBe(0);
    // The applied value answers: the default is not asked.
    expect(quotas.state.calls().slice(calls)).toEqual(['GetServiceQuota vpc/L-93826ACB', 'GetServiceQuota vpc/L-93826ACB']);
  });

  it('counts every route of the table, inside the cluster CIDRs too: a gateway, a bare interface, an unmanaged node', async () => {
    await healthyCluster();
    const unmanaged = ec2.state.addInstance({});
    ec2.state.addRoute({ routeTableId: tableId, destinationCidr: '10.244.200.0/24', gatewayId: ec2.state.addGateway() });
    ec2.state.addRoute({ routeTableId: tableId, destinationCidr: '10.244.201.0/24', networkInterfaceId: unmanaged.networkInterfaceIds[0] });
    ec2.state.addRoute({ routeTableId: tableId, destinationCidr: '10.244.202.0/24', instanceId: unmanaged.id });
    ec2.state.addPropagatedRoute({ routeTableId: tableId, destinationCidr: '172.16.0.0/16', gatewayId: ec2.state.addGateway() });
    const { lines } = await doctor();
    // local + node a + the three above; the propagated route has a quota of its own.
    expect(line(lines, `route quota ${tableId}`)).toBe(`ok    route quota ${tableId}: 6 of 500 IPv4 routes (5 in the table, podroute's or not, + 1 for 2 managed nodes)`);
  });

  it.each([
    ['denied', () => (quotas.state.deny('GetServiceQuota'), quotas.state.deny('GetAWSDefaultServiceQuota')), /applied: .*not authorized to perform servicequotas:GetServiceQuota; AWS's default: .*not authorized/],
    ['unknown', () => quotas.state.clear(), /applied: .*does not exist; AWS's default: .*does not exist/],
  ])('Service Quotas %s: --route-quota, with a warning', async (_label, arrange, why) => {
    await healthyCluster();
    arrange();
    const { code, lines } = await doctor(['--route-quota', '2']);
    expect(code).toBe(1);
    expect(line(lines, 'route quota')).toMatch(/^warn {2}route quota: 2 routes per route table from ROUTE_QUOTA \(--route-quota\): Service Quotas answered none \(/);
    expect(line(lines, 'route quota')).toMatch(why);
    expect(line(lines, `route quota ${tableId}`)).toMatch(/^FAIL {2}route quota \S+: 3 of 2 IPv4 routes/);
  });

  it('FAILs pod CIDRs of another mask, exit 1', async () => {
    await healthyCluster();
    const { code, lines } = await doctor(['--node-mask-size-ipv4', '25']);
    expect(code).toBe(1);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      "FAIL  pod CIDRs: 2 of 2 do not match /25 in 10.244.0.0/16: ip-10-0-1-1 10.244.1.0/24 is a /24, configured mask is /25; ip-10-0-1-2 10.244.2.0/24 is a /24, configured mask is /25 (--node-cidr-mask-size must equal podroute's mask)",
    ]);
  });

  it('FAILs when no route table is found, and when the queue and table do not exist', async () => {
    await healthyCluster();
    const { code, lines } = await doctor(['--cluster-name', 'nobody', '--queue-url', `${sqs.endpoint}/000000000000/missing`, '--cidr-table-name', 'missing-table']);
    expect(code).toBe(1);
    expect(line(lines, 'route tables')).toMatch(/^FAIL {2}route tables: none found by tag kubernetes\.io\/cluster\/nobody/);
    expect(line(lines, 'queue')).toMatch(/^FAIL {2}queue: no queue at /);
    expect(line(lines, 'cidr table')).toBe('FAIL  cidr table: no table named missing-table: deploy the stack, or check the name and region');
  });

  // The route worker turns the source/destination check off per interface, and its IAM statement
  // (serverless.yml, Sid SourceDestCheck) allows that only on interfaces with the cluster tag.
  // EC2 does not copy instance tags to interfaces, so an install that tagged only instances
  // would stop routing new nodes.
  it('FAILs managed nodes whose primary interface lacks the cluster tag, naming up to 10 interfaces', async () => {
    await healthyCluster();
    const untagged = [];
    for (let i = 0; i < 12; i += 1) {
      // Tagged instance, untagged interface: the layout before the upgrade; one interface has another cluster's tag.
      const tags: Record<string, string> = i === 0 ? { 'kubernetes.io/cluster/someone-else': 'owned' } : {};
      const instance = ec2.state.addInstance({ tags: clusterInterfaceTags(), primaryInterfaceTags: tags, secondaryEnis: i === 1 ? 1 : 0 });
      untagged.push(instance.networkInterfaceIds[0]);
      await kube.state.addNode(node(`untagged-${i}`, `aws:///us-east-1a/${instance.id}`, `10.244.${10 + i}.0/24`));
    }
    // An unmanaged node's interface is not podroute's business.
    const outside = ec2.state.addInstance({});
    await kube.state.addNode({ ...node('outside', `aws:///us-east-1a/${outside.id}`), metadata: { name: 'outside', labels: { 'node-role': 'other' } } });
    const { code, lines } = await doctor(['--node-selector', 'node-role!=other']);
    expect(code).toBe(1);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      `FAIL  interface tags: 12 of 14 managed nodes' primary interfaces lack kubernetes.io/cluster/${clusterName()}: ` +
        `${untagged.slice(0, 10).map((eni, i) => `${eni} (untagged-${i})`).join(', ')}, ...; ` +
        `the route worker cannot turn off their source/destination check: tag them ` +
        `(aws ec2 create-tags --resources <eni> --tags Key=kubernetes.io/cluster/${clusterName()},Value=owned) ` +
        `and tag new ones in the nodes' launch template (TagSpecifications, ResourceType network-interface)`,
    ]);
  });

  it.each([
    [['--route-quota', '0'], /--route-quota must be a whole number from 1 to 1000/],
    [['--route-quota', '1001'], /--route-quota must be a whole number from 1 to 1000/],
    [['--route-quota', 'lots'], /--route-quota must be a whole number/],
    [['--node-mask-size-ipv4', '40'], /NODE_MASK_SIZE_IPV4 must be a whole number from 1 to 32, got 40/],
    [['--no-such-flag'], /Unknown option '--no-such-flag'/],
    [['--kube-user', ' ', '--kube-groups', ','], /--kube-user and --kube-groups are both empty/],
  ])('%j: exit 2 with one line', async (extra, message) => {
    const { code, lines, stderr } = await doctor(extra);
    expect(code).toBe(2);
    expect(lines).toEqual(['']);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(message);
  });

  it('runs as the podroute binary', async () => {
    await healthyCluster();
    kube.state.access.deny({ verb: 'list', resource: 'nodes' });
    let result: { code: number; stdout: string; stderr: string };
    try {
      const out = await run(
        process.execPath,
        builtCli(['doctor', '--cluster-name', clusterName(), '--cluster-cidrs', '10.244.0.0/16', '--kubeconfig', kubeconfig]),
        {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? '',
            AWS_ENDPOINT_URL_EC2: ec2.url,
            AWS_ENDPOINT_URL_SERVICE_QUOTAS: quotas.url,
            AWS_ENDPOINT_URL_LAMBDA: services.lambda.url,
            AWS_ACCESS_KEY_ID: 'local',
            AWS_SECRET_ACCESS_KEY: 'local',
            AWS_REGION: 'us-east-1',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
        },
      );
      result = { code: 0, stdout: out.stdout, stderr: out.stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      result = { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      "FAIL  permission list nodes: denied for user podroute in group podroute (denied by the emulator): grant it in podroute's ClusterRole and bind that to podroute's group (infra/kubernetes/rbac.yaml)",
    ]);
    expect(line(lines, 'queue')).toBe('warn  queue: not checked: pass --queue-url');
  }, 60_000);
});
