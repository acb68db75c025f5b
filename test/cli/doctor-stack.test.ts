/**
 * `podroute doctor --stack` and `--dry-run-writes` against the local stand-ins: CloudFormation
 * (DescribeStackResources), IAM (SimulatePrincipalPolicy), SQS for the dead-letter queue, and the
 * EC2 emulator answering DryRun as EC2 does. In process through the CLI's `main`.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDoctorCommand } from '../../lib/cli/doctor-command.ts';
import { main } from '../../lib/cli/main.ts';
import { ACCOUNT_ID } from '../../infra/local/ec2/index.ts';
import type { IamAllow } from '../../infra/local/iam/index.ts';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { type DoctorServices, doctorClientsFor, startDoctorServices } from '../support/doctor-services.ts';

let services: DoctorServices;
let kube: KubeEmulator;
let deadLetterUrl: string;
let cluster: string;
let tableId: string;
let nodeEni: string;
let nodeInstance: string;
let runs = 0;

const ec2Arn = (type: string): string => `arn:aws:ec2:us-east-1:${ACCOUNT_ID}:${type}/*`;
const tag = (): string => `kubernetes.io/cluster/${cluster}`;
/** serverless.yml's RouteWorkerRole EC2 writes: RouteWrites and SourceDestCheck, on the cluster tag. */
const workerWrites = (): IamAllow[] => [
  { actions: ['ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute'], resource: ec2Arn('route-table'), resourceTag: tag() },
  { actions: ['ec2:ModifyNetworkInterfaceAttribute'], resource: ec2Arn('network-interface'), resourceTag: tag() },
];
const prefixWrites = (): IamAllow[] => [{ actions: ['ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses'], resource: ec2Arn('network-interface'), resourceTag: tag() }];

beforeAll(async () => {
  services = await startDoctorServices('podroute-stack-routes', 'podroute-doctor-stack-');
  deadLetterUrl = (await services.sqs.createQueue(`podroute-stack-dlq`)).queueUrl;
});
afterAll(() => services.close());

beforeEach(async () => {
  runs += 1;
  cluster = `stack-${runs}`;
  kube = await startKubeEmulator();
  await writeFile(services.kubeconfig, kube.kubeConfigYaml());
  services.iam.state.clear();
  services.lambda.setConcurrencyLimit(1000);
  services.ec2.permissions.clear();
  services.quotas.state.setDefault('vpc', 'L-93826ACB', { name: 'Routes per route table', value: 500 });
  tableId = services.ec2.state.addRouteTable({ tags: { [tag()]: 'owned' } }).id;
  const instance = services.ec2.state.addInstance({ primaryInterfaceTags: { [tag()]: 'owned' } });
  nodeEni = instance.networkInterfaceIds[0] ?? '';
  nodeInstance = instance.id;
  await kube.state.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-10-0-1-1' }, spec: { providerID: `aws:///us-east-1a/${instance.id}`, podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] }, status: { conditions: [] } });
  services.cloudFormation.putStack(`podroute-${cluster}`, [
    { logicalId: 'ReconcileRole', type: 'AWS::IAM::Role', physicalId: `podroute-${cluster}-reconcile` },
    { logicalId: 'RouteWorkerRole', type: 'AWS::IAM::Role', physicalId: `podroute-${cluster}-route-worker` },
    { logicalId: 'WorkQueue', type: 'AWS::SQS::Queue', physicalId: services.queueUrl },
    { logicalId: 'DeadLetterQueue', type: 'AWS::SQS::Queue', physicalId: deadLetterUrl },
    { logicalId: 'CidrTable', type: 'AWS::DynamoDB::Table', physicalId: services.dynamo.tableName },
    { logicalId: 'NodeWebhookLambdaFunction', type: 'AWS::Lambda::Function', physicalId: `podroute-${cluster}-node-webhook` },
    { logicalId: 'ReconcileHeartbeatAlarm', type: 'AWS::CloudWatch::Alarm', physicalId: `podroute-${cluster}-reconcile-heartbeat` },
    { logicalId: 'DeadLetterQueueAlarm', type: 'AWS::CloudWatch::Alarm', physicalId: `podroute-${cluster}-dlq-messages` },
  ]);
  services.cloudWatch.setAlarm(`podroute-${cluster}-reconcile-heartbeat`, 'OK');
  services.cloudWatch.setAlarm(`podroute-${cluster}-dlq-messages`, 'OK');
  services.cloudWatch.putDatapoint('podroute', 'ReconcileCompleted', { cluster, function: 'reconcile' }, Date.now() - 150_000, 1);
  services.lambda.putFunction(`podroute-${cluster}-node-webhook`);
  services.iam.state.putRole(`podroute-${cluster}-route-worker`, workerWrites());
});
afterEach(() => kube.close());

async function doctor(extra: string[]): Promise<{ code: number; lines: string[]; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const command = createDoctorCommand((region) => doctorClientsFor(services, region));
  const args = ['doctor', '--cluster-name', cluster, '--cluster-cidrs', '10.244.0.0/16', '--kubeconfig', services.kubeconfig, ...extra];
  const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), readFile: async () => '', env: { AWS_REGION: 'us-east-1' } };
  const code = await main(args, io, { doctor: command });
  return { code, lines: stdout.trimEnd().split('\n'), stderr };
}
const line = (lines: string[], check: string): string => lines.find((l) => l.includes(` ${check}:`)) ?? `(no line for ${check})`;

describe('podroute doctor --stack', () => {
  it("checks the worker role's EC2 writes for the role, and reads the queue, table and dead-letter queue from the stack", async () => {
    const { code, lines, stderr } = await doctor(['--stack', `podroute-${cluster}`]);
    expect(stderr).toBe('');
    // Only the webhook is missing in this cluster, and so never called.
    expect(lines.filter((l) => !l.startsWith('ok') && !/ (admission webhook|webhook last call):/.test(l))).toEqual([]);
    expect(line(lines, 'webhook last call')).toBe(
      `warn  webhook last call: podroute-${cluster}-node-webhook was not called in 24 hours: no node joined or left, or the API server does not reach it (check the MutatingWebhookConfiguration's URL)`,
    );
    services.cloudWatch.putDatapoint('AWS/Lambda', 'Invocations', { FunctionName: `podroute-${cluster}-node-webhook` }, Date.now() - 60_000, 2);
    expect(line((await doctor(['--stack', `podroute-${cluster}`])).lines, 'webhook last call')).toMatch(new RegExp(`^ok {4}webhook last call: podroute-${cluster}-node-webhook called \\d+ min ago \\(\\S+, AWS/Lambda Invocations\\)$`));
    expect(line(lines, 'stack')).toBe(`ok    stack: podroute-${cluster}: 8 resources in ${ACCOUNT_ID} us-east-1`);
    expect(line(lines, 'alarms')).toBe('ok    alarms: all 2 OK');
    expect(line(lines, 'last reconcile')).toMatch(/^ok {4}last reconcile: completed \d+ min ago \(\S+, podroute\/ReconcileCompleted\)$/);
    expect(line(lines, 'iam RouteWorkerRole')).toBe(
      `ok    iam RouteWorkerRole: podroute-${cluster}-route-worker may ec2:CreateRoute, ec2:ReplaceRoute, ec2:DeleteRoute, ec2:ModifyNetworkInterfaceAttribute on resources tagged ${tag()} (IAM SimulatePrincipalPolicy)`,
    );
    expect(line(lines, 'queue')).toMatch(/^ok {4}queue: arn:aws:sqs:.*:podroute-stack-routes$/);
    expect(line(lines, 'cidr table')).toBe(`ok    cidr table: ${services.dynamo.tableName} is ACTIVE`);
    expect(line(lines, 'dead-letter queue')).toBe(`ok    dead-letter queue: empty (${deadLetterUrl})`);
    expect(code).toBe(1);
  });

  it.each([
    ['a statement missing', () => workerWrites().slice(0, 1), 'ec2:ModifyNetworkInterfaceAttribute on network-interface (implicitDeny)'],
    ["another cluster's tag", () => workerWrites().map((w) => ({ ...w, resourceTag: 'kubernetes.io/cluster/other' })), 'ec2:CreateRoute on route-table (implicitDeny, missing aws:ResourceTag/kubernetes.io/cluster/other)'],
  ])('FAILs a worker role with %s', async (_label, allows, denied) => {
    services.iam.state.putRole(`podroute-${cluster}-route-worker`, allows());
    const { code, lines } = await doctor(['--stack', `podroute-${cluster}`]);
    expect(code).toBe(1);
    expect(line(lines, 'iam RouteWorkerRole')).toMatch(/^FAIL {2}iam RouteWorkerRole: podroute-\S+-route-worker is denied /);
    expect(line(lines, 'iam RouteWorkerRole')).toContain(denied);
    expect(line(lines, 'iam RouteWorkerRole')).toMatch(/: redeploy the stack \(serverless.yml RouteWorkerRole\), and check its permissions boundary and the account's SCPs$/);
  });

  it('prefixes mode simulates prefix delegation and unassign for both roles that delegate', async () => {
    services.iam.state.putRole(`podroute-${cluster}-reconcile`, prefixWrites());
    services.iam.state.putRole(`podroute-${cluster}-route-worker`, [{ actions: ['ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses'], resource: ec2Arn('network-interface'), resourceTag: tag() }]);
    const { lines } = await doctor(['--stack', `podroute-${cluster}`, '--mode', 'prefixes']);
    expect(line(lines, 'iam ReconcileRole')).toMatch(/^ok {4}iam ReconcileRole: podroute-\S+-reconcile may ec2:AssignPrivateIpAddresses, ec2:AssignIpv6Addresses, ec2:UnassignPrivateIpAddresses, ec2:UnassignIpv6Addresses on resources tagged /);
    expect(line(lines, 'iam RouteWorkerRole')).toMatch(/^FAIL {2}iam RouteWorkerRole: .* is denied ec2:UnassignPrivateIpAddresses on network-interface \(implicitDeny\)/);
  });

  it('FAILs an alarm in ALARM and a reconcile heartbeat older than 15 minutes', async () => {
    services.cloudWatch.setAlarm(`podroute-${cluster}-dlq-messages`, 'ALARM', 'Threshold Crossed: 1 datapoint [3.0] was greater than the threshold (0.0).');
    const stale = `stale-${cluster}`;
    services.cloudWatch.putDatapoint('podroute', 'ReconcileCompleted', { cluster: stale, function: 'reconcile' }, Date.now() - 3600_000, 1);
    const { lines } = await doctor(['--stack', `podroute-${cluster}`]);
    expect(line(lines, 'alarms')).toBe(`FAIL  alarms: 1 of 2 in ALARM: podroute-${cluster}-dlq-messages (Threshold Crossed: 1 datapoint [3.0] was greater than the threshold (0.0).); runbooks in docs/operate/alarms.md`);
    // Another cluster's heartbeat is not this one's: the stack's cluster has one 2.5 minutes old.
    services.cloudFormation.putStack(stale, [{ logicalId: 'ReconcileHeartbeatAlarm', type: 'AWS::CloudWatch::Alarm', physicalId: 'x' }]);
    const old = await doctor(['--stack', stale, '--cluster-name', stale]);
    expect(line(old.lines, 'last reconcile')).toMatch(/^FAIL {2}last reconcile: completed \d+ min ago \(.*\): none in 15 minutes; check the schedule/);
    const none = await doctor(['--stack', stale, '--cluster-name', `never-${cluster}`]);
    expect(line(none.lines, 'last reconcile')).toBe("FAIL  last reconcile: no reconcile completed in 24 hours (podroute/ReconcileCompleted): check the schedule and the reconcile function's logs");
  });

  it('warns about messages in the dead-letter queue', async () => {
    const sqs = services.sqs.createClient();
    for (const body of ['{"a":1}', '{"b":2}']) await sqs.send(new SendMessageCommand({ QueueUrl: deadLetterUrl, MessageBody: body }));
    const { lines } = await doctor(['--stack', `podroute-${cluster}`]);
    expect(line(lines, 'dead-letter queue')).toMatch(/^warn {2}dead-letter queue: 2 route messages the worker gave up on: .*docs\/operate\/dlq-redrive.md/);
  });

  it('FAILs a stack it cannot read and checks nothing of it; FAILs a caller that may not simulate', async () => {
    const missing = await doctor(['--stack', 'no-such-stack']);
    expect(missing.code).toBe(1);
    expect(line(missing.lines, 'stack')).toMatch(/^FAIL {2}stack: cannot read no-such-stack: Stack with id no-such-stack does not exist; check the stack name/);
    expect(missing.lines.filter((l) => / (iam \w+|dead-letter queue):/.test(l))).toEqual([]);
    expect(line(missing.lines, 'queue')).toBe('warn  queue: not checked: pass --queue-url');
    // DescribeStackResources answers only a stack's first 100 resources: a cut answer is not judged.
    const big = `big-${cluster}`;
    services.cloudFormation.putStack(big, Array.from({ length: 120 }, (_, i) => ({ logicalId: `Topic${i}`, type: 'AWS::SNS::Topic', physicalId: `arn:aws:sns:us-east-1:000000000000:t${i}` })));
    const cut = await doctor(['--stack', big]);
    expect(line(cut.lines, 'stack')).toMatch(/^FAIL {2}stack: cannot read big-.*: stack big-.* has 100 or more resources, more than DescribeStackResources answers/);
    services.iam.state.denySimulation();
    const denied = await doctor(['--stack', `podroute-${cluster}`]);
    expect(line(denied.lines, 'iam RouteWorkerRole')).toMatch(/^FAIL {2}iam RouteWorkerRole: cannot simulate .*: .*not authorized .* \(the caller needs iam:SimulatePrincipalPolicy\)$/);
  });
});

describe('podroute doctor --dry-run-writes', () => {
  it("asks EC2 with DryRun whether the caller may make the worker's writes, and nothing changes", async () => {
    const before = JSON.stringify(services.ec2.state.routes(tableId));
    const allowed = await doctor(['--dry-run-writes']);
    expect(line(allowed.lines, 'dry run writes')).toBe(`ok    dry run writes: your credentials may ec2:CreateRoute on ${tableId}, ec2:ModifyNetworkInterfaceAttribute on ${nodeEni} (EC2 DryRun)`);
    services.ec2.permissions.deny('CreateRoute');
    const denied = await doctor(['--dry-run-writes']);
    expect(line(denied.lines, 'dry run writes')).toBe(
      `FAIL  dry run writes: your credentials may not ec2:CreateRoute on ${tableId} (EC2 DryRun: UnauthorizedOperation); with podroute's role, grant its RouteWrites and SourceDestCheck statements (serverless.yml)`,
    );
    expect(JSON.stringify(services.ec2.state.routes(tableId))).toBe(before);
    expect(services.ec2.state.sourceDestCheck(nodeInstance)).toBe(true);
  });
});

describe('podroute doctor: Lambda concurrency', () => {
  it("FAILs the params' reservations on an account that cannot spare them (Lambda keeps 100 unreserved), and passes none", async () => {
    services.lambda.setConcurrencyLimit(10);
    const low = await doctor([]);
    expect(line(low.lines, 'lambda concurrency')).toBe(
      'FAIL  lambda concurrency: the params reserve 16, the account can spare 0 (account quota 10, 10 unreserved; Lambda keeps 100 unreserved): the deploy would fail; ' +
        `set reconcileReservedConcurrency, webhookReservedConcurrency and cloudEventsReservedConcurrency lower or to '' (none), or raise "Concurrent executions" (Service Quotas lambda L-B99A9384)`,
    );
    expect(line((await doctor(['--reserved-concurrency', '0'])).lines, 'lambda concurrency')).toBe('ok    lambda concurrency: no reserved concurrency asked (account quota 10, 10 unreserved; Lambda keeps 100 unreserved)');
  });

  it("counts the deployed stack's own reservations as room for an update", async () => {
    services.lambda.setConcurrencyLimit(116);
    services.lambda.putFunction(`podroute-${cluster}-reconcile`, 1);
    services.lambda.putFunction(`podroute-${cluster}-node-webhook`, 15);
    services.cloudFormation.putStack(`podroute-${cluster}`, [
      { logicalId: 'ReconcileLambdaFunction', type: 'AWS::Lambda::Function', physicalId: `podroute-${cluster}-reconcile` },
      { logicalId: 'NodeWebhookLambdaFunction', type: 'AWS::Lambda::Function', physicalId: `podroute-${cluster}-node-webhook` },
    ]);
    const { lines } = await doctor(['--stack', `podroute-${cluster}`]);
    expect(line(lines, 'lambda concurrency')).toBe("ok    lambda concurrency: the params reserve 16 of the 16 the account can spare (account quota 116, 100 unreserved, 16 of them the stack's; Lambda keeps 100 unreserved)");
    expect((await doctor(['--reserved-concurrency', '17', '--stack', `podroute-${cluster}`])).lines.find((l) => l.includes(' lambda concurrency:'))).toMatch(/^FAIL {2}lambda concurrency: the params reserve 17, the account can spare 16 /);
  });
});

/** A strategic-merge PATCH of a node's spec, as `manager` sends it (kube-controller-manager's node IPAM patches spec.podCIDR and podCIDRs). */
async function patchPodCidr(name: string, cidr: string, manager: string): Promise<number> {
  const url = new URL(`${kube.url}/api/v1/nodes/${name}?fieldManager=${manager}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PATCH', ca: kube.caPem, headers: { authorization: `Bearer ${kube.token}`, 'content-type': 'application/strategic-merge-patch+json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ spec: { podCIDR: cidr, podCIDRs: [cidr] } }));
  });
}

/** A strategic-merge PATCH of a node's NetworkUnavailable condition on nodes/status, as `manager`'s route controller sends it. */
async function patchCondition(name: string, manager: string): Promise<number> {
  const url = new URL(`${kube.url}/api/v1/nodes/${name}/status?fieldManager=${manager}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PATCH', ca: kube.caPem, headers: { authorization: `Bearer ${kube.token}`, 'content-type': 'application/strategic-merge-patch+json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    const condition = { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route', lastTransitionTime: '2026-01-01T00:00:00Z' };
    req.end(JSON.stringify({ status: { conditions: [condition] } }));
  });
}

describe('podroute doctor: a second allocator', () => {
  it('passes nodes whose pod CIDRs no controller manager set', async () => {
    const { lines } = await doctor([]);
    expect(line(lines, 'second allocator')).toBe("ok    second allocator: no controller manager set any of 1 nodes' pod CIDRs");
    expect(line(lines, 'second route controller')).toBe("ok    second route controller: no controller manager wrote any of 1 nodes' NetworkUnavailable conditions");
  });

  it("FAILs when a controller manager's route controller marked the newest node's NetworkUnavailable", async () => {
    await kube.state.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-10-0-9-8' }, spec: { providerID: 'aws:///us-east-1a/i-0000000000000abce' }, status: { conditions: [] } });
    expect(await patchPodCidr('ip-10-0-9-8', '10.244.8.0/24', 'podroute')).toBe(200);
    expect(await patchCondition('ip-10-0-9-8', 'cloud-controller-manager')).toBe(200);
    const { code, lines } = await doctor([]);
    expect(code).toBe(1);
    expect(line(lines, 'second allocator')).toMatch(/^ok /);
    expect(line(lines, 'second route controller')).toMatch(/^FAIL {2}second route controller: the newest node, ip-10-0-9-8 \(created \S+\), had its NetworkUnavailable condition written by cloud-controller-manager: a second route controller is running; run kube-controller-manager with --allocate-node-cidrs=false/);
  });

  it('FAILs when the newest node got its pod CIDR from kube-controller-manager, with the flags that stop it', async () => {
    await kube.state.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-10-0-9-9' }, spec: { providerID: 'aws:///us-east-1a/i-0000000000000abcd' }, status: { conditions: [] } });
    expect(await patchPodCidr('ip-10-0-9-9', '10.244.9.0/24', 'kube-controller-manager')).toBe(200);
    const { code, lines } = await doctor([]);
    expect(code).toBe(1);
    expect(line(lines, 'second allocator')).toMatch(
      /^FAIL {2}second allocator: the newest node with a pod CIDR, ip-10-0-9-9 \(created \S+\), got it from kube-controller-manager: a second allocator is running; run kube-controller-manager with --allocate-node-cidrs=false --configure-cloud-routes=false, and the cloud controller manager with --configure-cloud-routes=false$/,
    );
  });

  it('warns about older nodes a controller manager allocated before podroute', async () => {
    kube.state.putRawNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'ip-10-0-0-5',
        uid: '5d1c1a3e-0000-4000-8000-000000000005',
        creationTimestamp: '2024-01-01T00:00:00Z',
        managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2024-01-01T00:00:02Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, 'v:"10.244.5.0/24"': {} } } } }],
      },
      spec: { providerID: 'aws:///us-east-1a/i-0000000000000beef', podCIDR: '10.244.5.0/24', podCIDRs: ['10.244.5.0/24'] },
      status: { conditions: [] },
    });
    const { lines } = await doctor([]);
    expect(line(lines, 'second allocator')).toMatch(/^warn {2}second allocator: 1 of 2 nodes' pod CIDRs were set by a controller manager, none of the newest: ip-10-0-0-5 \(kube-controller-manager\) /);
  });
});
