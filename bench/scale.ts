/**
 * Scale: one reconcile in prefixes mode over N nodes as the kubelet registers them (10-15 KB of
 * JSON each: infra/local/kube/kubelet-node.ts), for N = 5,000, 20,000 and 100,000. Each size runs
 * in a child process of its own, so its peak RSS (`process.resourceUsage().maxRSS`) is that
 * reconcile's alone: what the reconcile Lambda's memory setting must hold.
 *
 * The nodes come from a small HTTPS server in the parent that answers `GET /api/v1/nodes` in pages
 * (limit / continue, as the API server does), building each page's nodes when asked, so neither
 * process holds the cluster as a whole unless reconcile does. The child runs the real reconcile use
 * case over the real Kubernetes adapter (KubeNodes, paged listing) against that server; its CIDR
 * sets (claim protocol over the in-memory store, every node's block leased) and the ENI prefix port
 * (each node's prefix delegated) are in memory, as at steady state: nothing to write.
 *
 *   node --import tsx bench/scale.ts 5000        one size, printed as JSON
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { kubeletNode } from '../infra/local/kube/kubelet-node.ts';
import type { EniPrefixes, Subnets } from '../lib/usecases/ports.ts';

export interface ScaleRun {
  nodes: number;
  /** Bytes of one node's JSON as the server sends it (the first node; they vary by a few bytes). */
  nodeBytes: number;
  /** Wall time of the reconcile, less the time the node server spent building pages (below). */
  reconcileMs: number;
  /** Time the parent's node server spent building and serializing pages (the API server's share). */
  serverMs: number;
  peakRssMb: number;
  errors: number;
  /** EC2 calls the run made (answered from memory): interfaces 200 ids a call, subnets once. */
  ec2Calls: { DescribeInstances: number; DescribeSubnets: number };
}

const TLS_DIR = new URL('../infra/local/kube/tls/', import.meta.url);
const TOKEN = 'scale-bench-token';
// The cluster CIDR is the VPC's blocks (prefixes mode); the pods live in subnet reservations.
const CLUSTER_CIDR = '10.0.0.0/8';
// What EC2 delegates: an IPv4 /28 per node (EC2 User Guide, prefix delegation).
const NODE_MASK = 28;
// Subnets are at most /16 (Amazon VPC User Guide, "Subnet CIDR blocks"); each keeps its upper half
// (a /17, 2,048 prefixes) as podroute's explicit reservation and hosts 2,000 nodes: 50 subnets for
// 100,000 nodes, each its own CIDR set, as in a real multi-AZ VPC.
const NODES_PER_SUBNET = 2_000;

export const subnetOf = (i: number): number => Math.floor(i / NODES_PER_SUBNET);
export const subnetId = (s: number): string => `subnet-0scale${String(s).padStart(4, '0')}`;
export const reservationOf = (s: number): string => `10.${s}.128.0/17`;

/** Node `i`'s name and pod CIDR (a /28 in its subnet's reservation). */
export function nodeName(i: number): string {
  return `ip-10-${Math.floor(i / 65_536) % 256}-${Math.floor(i / 256) % 256}-${i % 256}.ec2.internal`;
}
export function podCidrOf(i: number): string {
  const offset = (i % NODES_PER_SUBNET) * 16;
  return `10.${subnetOf(i)}.${128 + Math.floor(offset / 256)}.${offset % 256}/${NODE_MASK}`;
}
export const instanceIdOf = (i: number): string => `i-${i.toString(16).padStart(17, '0')}`;

function node(i: number): object {
  const s = subnetOf(i);
  const k = i % NODES_PER_SUBNET;
  return kubeletNode({
    name: nodeName(i),
    instanceId: instanceIdOf(i),
    zone: `us-east-1${'abc'[s % 3] ?? 'a'}`,
    // In the lower half of its subnet, outside the reservation.
    privateIp: `10.${s}.${Math.floor(k / 250)}.${(k % 250) + 4}`,
    podCidrs: [podCidrOf(i)],
    networkUnavailable: 'False',
    index: i,
  });
}

/** The NodeList pages of `count` generated nodes over HTTPS, with the sandbox emulator's certificate. */
async function startNodeServer(count: number): Promise<{ url: string; caPem: string; busyMs(): number; close(): Promise<void> }> {
  let busyMs = 0;
  const caPem = readFileSync(new URL('ca.crt', TLS_DIR), 'utf8');
  const server = https.createServer({ cert: readFileSync(new URL('server.crt', TLS_DIR), 'utf8'), key: readFileSync(new URL('server.key', TLS_DIR), 'utf8') }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
      return;
    }
    if (req.method !== 'GET' || url.pathname !== '/api/v1/nodes') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      return;
    }
    const started = performance.now();
    const limit = Number(url.searchParams.get('limit') ?? '0') || count;
    const from = Number(url.searchParams.get('continue') ?? '0') || 0;
    const to = Math.min(count, from + limit);
    const items: object[] = [];
    for (let i = from; i < to; i++) items.push(node(i));
    const metadata = to < count ? { resourceVersion: '1', continue: String(to), remainingItemCount: count - to } : { resourceVersion: '1' };
    const body = JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata, items });
    busyMs += performance.now() - started;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, caPem, busyMs: () => busyMs, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Runs one size in a child process and answers what it printed. */
export async function scaleOnce(count: number): Promise<ScaleRun> {
  const server = await startNodeServer(count);
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', String(count)], {
      env: { ...process.env, SCALE_KUBE_URL: server.url, SCALE_KUBE_CA: server.caPem, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`scale child for ${count} nodes exited with ${code}: ${out.slice(-500)}`);
    const line = out.trim().split('\n').pop() ?? '';
    const measured = JSON.parse(line) as { nodes: number; reconcileMs: number; peakRssMb: number; errors: number; ec2Calls: ScaleRun['ec2Calls'] };
    const serverMs = Math.round(server.busyMs());
    return {
      nodes: measured.nodes,
      nodeBytes: Buffer.byteLength(JSON.stringify(node(0))),
      reconcileMs: Math.max(0, measured.reconcileMs - serverMs),
      serverMs,
      peakRssMb: measured.peakRssMb,
      errors: measured.errors,
      ec2Calls: measured.ec2Calls,
    };
  } finally {
    await server.close();
  }
}

export async function benchScale(sizes: readonly number[] = [5_000, 20_000, 100_000]): Promise<{ goal: string; runs: ScaleRun[] }> {
  const runs: ScaleRun[] = [];
  for (const size of sizes) runs.push(await scaleOnce(size));
  return { goal: '20,000 nodes within 512 MB peak RSS', runs };
}

/** The reconcile handler's node source, over the scale test's API server (SCALE_KUBE_URL, SCALE_KUBE_CA). */
async function scaleNodes() {
  const { createKubeConfig } = await import('../lib/kube/kube-config.ts');
  const { KubeNodes } = await import('../lib/kube/kube-nodes.ts');
  const url = process.env.SCALE_KUBE_URL ?? '';
  const caPem = process.env.SCALE_KUBE_CA ?? '';
  const kubeConfig = await createKubeConfig({
    kind: 'options',
    options: {
      clusters: [{ name: 'scale', server: url, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'podroute', token: TOKEN }],
      contexts: [{ name: 'scale', cluster: 'scale', user: 'podroute' }],
      currentContext: 'scale',
    },
  });
  return new KubeNodes(kubeConfig);
}

/** The child: wiring as the reconcile handler's, with the stand-ins above; prints one JSON line. */
async function child(count: number): Promise<void> {
  const { ClaimProtocolStore, MemoryClaimStore, createCidrSet } = await import('../lib/ipam/index.ts');
  const { reconcile } = await import('../lib/usecases/reconcile.ts');
  const { silentLogger } = await import('../lib/log.ts');
  const nodes = await scaleNodes();
  // Every node's block leased in its subnet's set, and its prefix delegated: steady state.
  const sets = new Map<string, Awaited<ReturnType<typeof createCidrSet>>>();
  for (let s = 0; s <= subnetOf(count - 1); s++) {
    sets.set(reservationOf(s), await createCidrSet({ clusterCidr: reservationOf(s), nodeMaskSize: NODE_MASK, store: new ClaimProtocolStore(new MemoryClaimStore(), { clock: () => 0 }) }));
  }
  const index = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    index.set(instanceIdOf(i), i);
    await sets.get(reservationOf(subnetOf(i)))?.occupy(podCidrOf(i), nodeName(i));
  }
  const unused = async (): Promise<never> => {
    throw new Error('prefixes mode touches no route table, and a converged cluster assigns no prefix');
  };
  // EC2 answers from memory (no latency): the figure is podroute's own work; the calls are counted.
  const calls = { DescribeInstances: 0, DescribeSubnets: 0 };
  const { prefixesPlane } = await import('../lib/dataplane/prefixes/prefixes-plane.ts');
  const config = {
    clusterCidrs: [CLUSTER_CIDR],
    nodeSyncMode: 'SyncFromCluster' as const,
    maxDeleteShare: 0.2,
    minDeletesForGuard: 10,
    leaseGraceSeconds: 600,
  };
  const plane = prefixesPlane({
    config,
    nodes,
    log: silentLogger,
    usedReservationSets: async () => [...sets.values()],
    ...scaleEc2(index, calls, unused),
    reservationSets: async (range) => {
      const set = sets.get(range);
      if (!set) throw new Error(`no set for ${range}`);
      return set;
    },
  });
  const started = performance.now();
  const report = await reconcile({
    config,
    plane,
    routeTables: { listRouteTables: unused, createRoute: unused, replaceRoute: unused, deleteRoute: unused, describeRoute: unused, prepareRouteTarget: unused },
    nodes,
    queue: { send: async (messages) => ({ sent: messages.length, duplicates: 0 }) },
    cidrSets: [],
    log: silentLogger,
    now: () => Date.UTC(2026, 11, 1),
  });
  const reconcileMs = Math.round(performance.now() - started);
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(`${JSON.stringify({ nodes: report.nodes, reconcileMs, peakRssMb, errors: report.errors.length, ec2Calls: calls })}\n`);
}

/** The interfaces and subnets of the converged cluster, answered from memory; the calls are counted. */
function scaleEc2(index: ReadonlyMap<string, number>, calls: { DescribeInstances: number; DescribeSubnets: number }, unused: () => Promise<never>): { prefixes: EniPrefixes; subnets: Subnets } {
  return {
    prefixes: {
      describeInterfaces: async (ids) => {
        // The adapter asks EC2 for 200 ids a call (lib/aws/ec2-prefixes.ts).
        calls.DescribeInstances += Math.ceil(ids.length / 200);
        return new Map(ids.map((id) => {
          const i = index.get(id) ?? 0;
          return [id, { instanceId: id, networkInterfaceId: `eni-${id.slice(2)}`, subnetId: subnetId(subnetOf(i)), prefixes: [podCidrOf(i)] }];
        }));
      },
      assignPrefix: unused,
      assignAnyPrefix: unused,
    },
    subnets: {
      describeSubnets: async (ids) => {
        calls.DescribeSubnets += 1;
        return new Map(ids.map((id) => {
          const s = Number(id.slice('subnet-0scale'.length));
          return [id, { subnetId: id, availabilityZone: `us-east-1${'abc'[s % 3] ?? 'a'}`, cidrs: [`10.${s}.0.0/16`], reservations: [{ reservationId: `scr-${s}`, cidr: reservationOf(s), type: 'explicit' as const, description: 'podroute' }] }];
        }));
      },
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--child');
  if (at >= 0) await child(Number(process.argv[at + 1]));
  else console.log(JSON.stringify(await scaleOnce(Number(process.argv[2] ?? 5000))));
}
