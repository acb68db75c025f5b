/**
 * `podroute doctor --stack` and `--dry-run-writes` against the local stand-ins: CloudFormation
 * (DescribeStackResources), IAM (SimulatePrincipalPolicy), SQS for the dead-letter queue, and the
 * EC2 emulator answering DryRun as EC2 does. In process through the CLI's `main`.
 */
import { writeFile } from 'node:fs/promises';
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
const prefixWrites = (): IamAllow[] => [{ actions: ['ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses'], resource: ec2Arn('network-interface'), resourceTag: tag() }];

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
  ]);
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
    expect(lines.filter((l) => !l.startsWith('ok') && !l.includes('admission webhook'))).toEqual([]);
    expect(line(lines, 'stack')).toBe(`ok    stack: podroute-${cluster}: 5 resources in ${ACCOUNT_ID} us-east-1`);
    expect(line(lines, 'iam RouteWorkerRole')).toBe(
      `ok    iam RouteWorkerRole: podroute-${cluster}-route-worker may ec2:CreateRoute, ec2:ReplaceRoute, ec2:DeleteRoute, ec2:ModifyNetworkInterfaceAttribute on resources tagged ${tag()} (IAM SimulatePrincipalPolicy)`,
    );
    expect(line(lines, 'queue')).toMatch(/^ok {4}queue: arn:aws:sqs:.*:podroute-stack-routes$/);
    expect(line(lines, 'cidr table')).toBe(`ok    cidr table: ${services.dynamo.tableName} is ACTIVE`);
    expect(line(lines, 'dead-letter queue')).toBe(`ok    dead-letter queue: empty (${deadLetterUrl})`);
    // Only the webhook is missing in this cluster.
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

  it('prefixes mode simulates prefix delegation for both roles that delegate', async () => {
    services.iam.state.putRole(`podroute-${cluster}-reconcile`, prefixWrites());
    const { lines } = await doctor(['--stack', `podroute-${cluster}`, '--mode', 'prefixes']);
    expect(line(lines, 'iam ReconcileRole')).toMatch(/^ok {4}iam ReconcileRole: podroute-\S+-reconcile may ec2:AssignPrivateIpAddresses, ec2:AssignIpv6Addresses on resources tagged /);
    expect(line(lines, 'iam RouteWorkerRole')).toMatch(/^FAIL {2}iam RouteWorkerRole: .* is denied ec2:AssignPrivateIpAddresses on network-interface \(implicitDeny\)/);
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
      'FAIL  lambda concurrency: the params reserve 11, the account can spare 0 (account quota 10, 10 unreserved; Lambda keeps 100 unreserved): the deploy would fail; ' +
        `set reconcileReservedConcurrency and webhookReservedConcurrency lower or to '' (none), or raise "Concurrent executions" (Service Quotas lambda L-B99A9384)`,
    );
    expect(line((await doctor(['--reserved-concurrency', '0'])).lines, 'lambda concurrency')).toBe('ok    lambda concurrency: no reserved concurrency asked (account quota 10, 10 unreserved; Lambda keeps 100 unreserved)');
  });

  it("counts the deployed stack's own reservations as room for an update", async () => {
    services.lambda.setConcurrencyLimit(111);
    services.lambda.putFunction(`podroute-${cluster}-reconcile`, 1);
    services.lambda.putFunction(`podroute-${cluster}-node-webhook`, 10);
    services.cloudFormation.putStack(`podroute-${cluster}`, [
      { logicalId: 'ReconcileLambdaFunction', type: 'AWS::Lambda::Function', physicalId: `podroute-${cluster}-reconcile` },
      { logicalId: 'NodeWebhookLambdaFunction', type: 'AWS::Lambda::Function', physicalId: `podroute-${cluster}-node-webhook` },
    ]);
    const { lines } = await doctor(['--stack', `podroute-${cluster}`]);
    expect(line(lines, 'lambda concurrency')).toBe("ok    lambda concurrency: the params reserve 11 of the 11 the account can spare (account quota 111, 100 unreserved, 11 of them the stack's; Lambda keeps 100 unreserved)");
    expect((await doctor(['--reserved-concurrency', '12', '--stack', `podroute-${cluster}`])).lines.find((l) => l.includes(' lambda concurrency:'))).toMatch(/^FAIL {2}lambda concurrency: the params reserve 12, the account can spare 11 /);
  });
});
