/**
 * `podroute doctor --mode prefixes` against the EC2 and Kubernetes emulators and dynalite: the
 * plane's own checks (subnets, podroute's reservations per subnet, free blocks per pod range from
 * the CIDR table), the shared checks, and nothing written to EC2 or the CIDR table.
 */
import { writeFile } from 'node:fs/promises';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbCidrStore, cidrSetId } from '../../lib/aws/dynamodb-cidr-store.ts';
import { createDoctorCommand } from '../../lib/cli/doctor-command.ts';
import { main } from '../../lib/cli/main.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { type DoctorServices, doctorClientsFor, startDoctorServices } from '../support/doctor-services.ts';

let ec2: Ec2Emulator;
let kube: KubeEmulator;
let dynamo: LocalDynamo;
let kubeconfig: string;
let queueUrl: string;
/** A VPC per test (10.<n>.0.0/16), so each test's subnets and reservations are its own. */
let vpcs = 20;
let net: { cluster: string; a: string; b: string; c: string; rangeA: string; rangeC: string };

let services: DoctorServices;
beforeAll(async () => {
  services = await startDoctorServices('podroute-prefixes-routes', 'podroute-doctor-prefixes-');
  ({ ec2, dynamo, kubeconfig, queueUrl } = services);
});
afterAll(() => services.close());

/**
 * Subnet a has podroute's reservation (a /24 pod range: 16 /28 blocks), b none, c a /28 one (one
 * block); each subnet gets nodes as named.
 */
beforeEach(async () => {
  kube = await startKubeEmulator();
  await writeFile(kubeconfig, kube.kubeConfigYaml());
  kube.state.webhookConfigurations.put({
    metadata: { name: 'podroute' },
    webhooks: [{ name: 'node-join.podroute.io', clientConfig: { url: 'https://example.com/webhook/x' }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'DELETE'], resources: ['nodes'] }] }],
  });
  vpcs += 1;
  const n = vpcs;
  const vpc = ec2.state.addVpc({ cidrBlock: `10.${n}.0.0/16` });
  const subnet = (i: number, zone: string) => ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: `10.${n}.${i * 16}.0/20`, availabilityZone: zone }).id;
  const [a, b, c] = [subnet(0, 'us-east-1a'), subnet(1, 'us-east-1b'), subnet(2, 'us-east-1c')];
  const rangeA = ec2.state.createReservation({ subnetId: a, cidr: `10.${n}.8.0/24`, type: 'explicit', description: 'podroute' }).cidr;
  const rangeC = ec2.state.createReservation({ subnetId: c, cidr: `10.${n}.40.0/28`, type: 'explicit', description: 'podroute' }).cidr;
  // Another owner's reservation in b: not podroute's (its Description differs).
  ec2.state.createReservation({ subnetId: b, cidr: `10.${n}.24.0/24`, type: 'prefix', description: 'vpc-cni' });
  net = { cluster: `10.${n}.0.0/16`, a, b, c, rangeA, rangeC };
});
afterEach(async () => {
  await kube.close();
});

async function addNode(name: string, subnetId: string): Promise<void> {
  const instance = ec2.state.addInstance({ subnetId });
  await kube.state.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID: `aws:///us-east-1a/${instance.id}` }, status: { conditions: [] } });
}

async function lease(range: string, owners: string[]): Promise<void> {
  const store = new DynamoDbCidrStore({ client: dynamo.client(), tableName: dynamo.tableName, setId: cidrSetId(range, 28) });
  const set = await createCidrSet({ clusterCidr: range, nodeMaskSize: 28, store, rangeKind: 'pod range' });
  for (const owner of owners) await set.allocateNext(owner);
}

async function doctor(extra: string[] = []): Promise<{ code: number; lines: string[]; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const command = createDoctorCommand((region) => doctorClientsFor(services, region));
  const args = ['doctor', '--mode', 'prefixes', '--cluster-name', 'prefixes', '--cluster-cidrs', net.cluster, '--kubeconfig', kubeconfig, '--queue-url', queueUrl, '--cidr-table-name', dynamo.tableName, ...extra];
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), readFile: async () => '', env: { AWS_REGION: 'us-east-1' } }, { doctor: command });
  return { code, lines: stdout.trimEnd().split('\n'), stderr };
}

const line = (lines: string[], check: string): string => lines.find((l) => l.includes(` ${check}:`)) ?? `(no line for ${check})`;
const tableItems = async (): Promise<number> => (await dynamo.client().send(new ScanCommand({ TableName: dynamo.tableName }))).Items?.length ?? 0;

describe('podroute doctor --mode prefixes', () => {
  it('checks subnets, reservations and free blocks, and no route table, quota or interface tag', async () => {
    await addNode('a-1', net.a);
    await addNode('a-2', net.a);
    await lease(net.rangeA, ['a-1', 'a-2', 'gone']);
    const before = { items: await tableItems(), creates: ec2.stats.count('CreateSubnetCidrReservation') };
    const { code, lines, stderr } = await doctor();
    expect(stderr).toBe('');
    expect(lines.filter((l) => !l.startsWith('ok'))).toEqual([]);
    expect(code).toBe(0);
    expect(line(lines, 'subnets')).toBe(`ok    subnets: 2 managed nodes in 1 subnets: ${net.a} (us-east-1a)`);
    expect(line(lines, `reservations ${net.a}`)).toBe(`ok    reservations ${net.a}: 2 managed nodes (a-1, a-2); pod ranges ${net.rangeA} (Description podroute)`);
    expect(line(lines, `free blocks ${net.rangeA}`)).toBe(`ok    free blocks ${net.rangeA}: 13 of 16 /28 blocks free`);
    expect(lines.filter((l) => /route tables|route quota|interface tags/.test(l))).toEqual([]);
    expect(lines.filter((l) => l.includes(' permission '))).toHaveLength(7);
    // Read-only: no lease, registry entry or reservation was written.
    expect(await tableItems()).toBe(before.items);
    expect(ec2.stats.count('CreateSubnetCidrReservation')).toBe(before.creates);
  });

  it("reports podroute's own permissions: an admin caller with podroute's binding deleted gets them FAILed", async () => {
    await addNode('a-1', net.a);
    kube.state.access.removeBinding('podroute');
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    const failed = lines.filter((l) => l.startsWith('FAIL'));
    expect(failed).toHaveLength(7);
    expect(failed.every((l) => / permission .*: denied for user podroute in group podroute: /.test(l))).toBe(true);
  });

  it('FAILs a subnet without podroute reservation, naming its nodes and the command that makes one', async () => {
    await addNode('a-1', net.a);
    await addNode('b-1', net.b);
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([
      `FAIL  reservations ${net.b}: 1 managed nodes (b-1): subnet ${net.b} (us-east-1b) has no podroute subnet CIDR reservation (Description podroute) inside cluster CIDR(s) ${net.cluster}, ` +
        `so this node gets no pod CIDR: aws ec2 create-subnet-cidr-reservation --subnet-id ${net.b} --reservation-type explicit --description podroute --cidr <a range inside ${net.cluster.replace('0.0/16', '16.0/20')}>`,
    ]);
    expect(line(lines, 'subnets')).toBe(`ok    subnets: 2 managed nodes in 2 subnets: ${[`${net.a} (us-east-1a)`, `${net.b} (us-east-1b)`].sort().join(', ')}`);
  });

  it("FAILs another owner's prefix reservation under SyncFromCloud", async () => {
    ec2.state.createReservation({ subnetId: net.a, cidr: net.cluster.replace('0.0/16', '12.0/24'), type: 'prefix', description: 'vpc-cni' });
    await addNode('a-1', net.a);
    const { code, lines } = await doctor(['--node-sync-mode', 'SyncFromCloud']);
    expect(code).toBe(1);
    expect(line(lines, `reservations ${net.a}`)).toMatch(/^FAIL {2}reservations \S+: 1 managed nodes \(a-1\): another owner's prefix reservations \S+ \(\S+, Description vpc-cni\): under SyncFromCloud/);
  });

  it('FAILs a pod range with no free block, warns one nearly full', async () => {
    await addNode('c-1', net.c);
    await addNode('a-1', net.a);
    await lease(net.rangeC, ['c-1']);
    await lease(net.rangeA, Array.from({ length: 14 }, (_, i) => `n-${i}`));
    const { code, lines } = await doctor();
    expect(code).toBe(1);
    expect(line(lines, `free blocks ${net.rangeC}`)).toBe(
      `FAIL  free blocks ${net.rangeC}: 0 of 1 /28 blocks free: new nodes of its subnet get no pod CIDR; add a podroute reservation to the subnet`,
    );
    expect(line(lines, `free blocks ${net.rangeA}`)).toBe(`warn  free blocks ${net.rangeA}: 2 of 16 /28 blocks free: little room to grow`);
  });

  it('FAILs a managed node EC2 does not list, and warns free blocks unchecked without a CIDR table', async () => {
    await addNode('a-1', net.a);
    await kube.state.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'ghost' }, spec: { providerID: 'aws:///us-east-1a/i-0000000000000dead' }, status: { conditions: [] } });
    const { code, lines } = await doctor(['--cidr-table-name', '']);
    expect(code).toBe(1);
    expect(line(lines, 'subnets')).toBe(`FAIL  subnets: 2 managed nodes in 1 subnets: ${net.a} (us-east-1a); 1 not placed: EC2 does not list instance i-0000000000000dead of node ghost (yet)`);
    expect(line(lines, 'free blocks')).toBe('warn  free blocks: not checked: pass --cidr-table-name');
  });
});
