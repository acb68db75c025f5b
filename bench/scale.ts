/**
 * Scale: one reconcile over N nodes as the API server stores kubelet-registered ones (11.7 KB of
 * JSON each: infra/local/kube/kubelet-node.ts, with the server's fields and managedFields):
 * prefixes mode for N = 1,000, 5,000, 20,000 and 100,000, and routes mode for 5,000 (past what
 * route tables hold: it probes the planner). Each run is a child
 * process of its own, so its peak RSS (`peakRssMb`) is that reconcile's: what the reconcile
 * Lambda's memory setting must hold.
 *
 * The nodes come from a small HTTPS server in the parent that answers `GET /api/v1/nodes` in pages
 * (limit / continue, as the API server does), built before the child starts, so the child never
 * holds the cluster as a whole unless reconcile does; the building is reported apart (`serverMs`), and it counts what one reconcile asks of the API server (`api`: requests and
 * response bytes). The child runs the real reconcile use case over the real Kubernetes adapter
 * (KubeNodes, paged listing) against that server, wired as the EKS reconcile Lambda is (a bearer
 * endpoint: functions/wiring.ts, lib/kube/kube-config.ts). Its CIDR sets (claim protocol over the
 * in-memory store, every node's block leased), the ENI prefix port (each node's prefix delegated)
 * and, in routes mode, one route table routing every node are in memory, as at steady state:
 * nothing to write. Those stand-ins for DynamoDB and EC2 are in the child's RSS; `baseRssMb` (the
 * child's RSS once they are built, before the reconcile starts: runtime, code and stand-ins) says
 * how much of the peak is theirs.
 *
 *   node --import tsx bench/scale.ts 5000 [prefixes|routes]     one run, printed as JSON
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { kubeletNode } from '../infra/local/kube/kubelet-node.ts';
import { NODE_LIST_PAGE_SIZE } from '../lib/kube/kube-nodes.ts';
import { SteadyClaimStore } from './steady-claims.ts';
import { recordWrite } from '../infra/local/kube/managed-fields.ts';
import type { JsonObject } from '../infra/local/kube/patch.ts';
import type { CidrSet } from '../lib/ipam/index.ts';
import type { RouteTable } from '../lib/routes/index.ts';
import type { PrefixesPlanePorts } from '../lib/dataplane/prefixes/prefixes-plane.ts';
import type { RoutesPlanePorts } from '../lib/dataplane/routes/routes-plane.ts';
import type { LabelSelector } from '../lib/nodes/label-selector.ts';
import type { EniPrefixes, NodeSource, Subnets } from '../lib/usecases/ports.ts';

type ScaleMode = 'prefixes' | 'routes';

export interface ScaleRun {
  mode: ScaleMode;
  nodes: number;
  /** Bytes of one node's JSON as the server sends it (the first node; they vary by a few bytes). */
  nodeBytes: number;
  /** Wall time of the reconcile, less the time the node server spent building pages (below). */
  reconcileMs: number;
  /** CPU time (user and system) the child spent in the reconcile: less sensitive to a loaded machine than wall time. */
  reconcileCpuMs: number;
  /** Time the parent's node server spent building and serializing pages (the API server's share). */
  serverMs: number;
  peakRssMb: number;
  /** The child's RSS when the reconcile starts (after a GC): runtime, code and the in-memory stand-ins. */
  baseRssMb: number;
  /** What the run asked of the API server: requests (all of them node list pages) and response bytes. */
  api: { requests: number; bytes: number };
  errors: number;
  /** Writes to the lease table stand-in (a converged cluster: 0). */
  leaseWrites: number;
  /** EC2 calls the run made (answered from memory): interfaces 200 ids a call, subnets once, route tables once (routes mode). */
  ec2Calls: { DescribeInstances: number; DescribeSubnets: number; DescribeRouteTables: number };
}

const TLS_DIR = new URL('../infra/local/kube/tls/', import.meta.url);
const TOKEN = 'scale-bench-token';
const CLUSTER_NAME = 'scale';
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

/** The node a name of `nodeName` numbers, or null. */
export function nodeOfName(name: string): number | null {
  const m = /^ip-10-(\d{1,3})-(\d{1,3})-(\d{1,3})\.ec2\.internal$/.exec(name);
  if (!m) return null;
  const i = Number(m[1]) * 65_536 + Number(m[2]) * 256 + Number(m[3]);
  return nodeName(i) === name ? i : null;
}

/** Block indices of node `i`'s pod CIDR: in its subnet's reservation (a /17), and in the cluster CIDR (10.0.0.0/8), and back. */
export const reservationBlockOf = (i: number): number => i % NODES_PER_SUBNET;
const BLOCKS_PER_SUBNET = 2 ** (NODE_MASK - 16);
const RESERVATION_FIRST_BLOCK = BLOCKS_PER_SUBNET / 2;
export const clusterBlockOf = (i: number): number => subnetOf(i) * BLOCKS_PER_SUBNET + RESERVATION_FIRST_BLOCK + (i % NODES_PER_SUBNET);
export function nodeOfClusterBlock(index: number): number | null {
  const k = (index % BLOCKS_PER_SUBNET) - RESERVATION_FIRST_BLOCK;
  return k >= 0 && k < NODES_PER_SUBNET ? Math.floor(index / BLOCKS_PER_SUBNET) * NODES_PER_SUBNET + k : null;
}

/** Node `i` as the kubelet sends it at CREATE (`withPodCidr`: and as podroute then wrote it). */
function kubeletBody(i: number, withPodCidr: boolean): Record<string, unknown> {
  const s = subnetOf(i);
  const k = i % NODES_PER_SUBNET;
  return kubeletNode({
    name: nodeName(i),
    instanceId: instanceIdOf(i),
    zone: `us-east-1${'abc'[s % 3] ?? 'a'}`,
    // In the lower half of its subnet, outside the reservation.
    privateIp: `10.${s}.${Math.floor(k / 250)}.${(k % 250) + 4}`,
    ...(withPodCidr ? { podCidrs: [podCidrOf(i)], networkUnavailable: 'False' as const } : {}),
    index: i,
  });
}

/**
 * The managedFields of a stored node, as the emulator records them (infra/local/kube/managed-fields.ts):
 * the kubelet's CREATE and its status, then podroute's pod CIDR and NetworkUnavailable writes. Every
 * node has the same field set, so node 0's entries serve them all.
 */
const MANAGED_FIELDS = (() => {
  const time = '2026-11-30T08:00:00Z';
  const bare = kubeletBody(0, false);
  const done = kubeletBody(0, true);
  const { status: kubeletStatus, ...created } = bare;
  let stored = recordWrite(created as JsonObject, null, { manager: 'kubelet', time });
  stored = recordWrite({ ...stored, status: kubeletStatus as JsonObject }, stored, { manager: 'kubelet', subresource: 'status', time });
  stored = recordWrite({ ...stored, spec: done.spec as JsonObject }, stored, { manager: 'podroute', time });
  stored = recordWrite({ ...stored, status: done.status as JsonObject }, stored, { manager: 'podroute', subresource: 'status', time });
  return (stored.metadata as JsonObject).managedFields;
})();

/**
 * Node `i` as the API server stores and lists it: the kubelet's body with the fields the server
 * sets (uid, resourceVersion, creationTimestamp, managedFields), with its pod CIDR and
 * NetworkUnavailable=False written: about 11.7 KB of JSON, as a real EKS node's.
 */
function node(i: number): object {
  const body = kubeletBody(i, true);
  const metadata = body.metadata as Record<string, unknown>;
  return {
    ...body,
    metadata: {
      ...metadata,
      uid: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      resourceVersion: String(1_000 + i),
      creationTimestamp: new Date(Date.UTC(2026, 10, 30, 8) + i * 37_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      managedFields: MANAGED_FIELDS,
    },
  };
}


/** One NodeList page of the generated nodes `from` to `to`, as the API server sends it. */
function nodePage(count: number, from: number, to: number): Buffer {
  const items: object[] = [];
  for (let i = from; i < to; i++) items.push(node(i));
  const metadata = to < count ? { resourceVersion: '1', continue: String(to), remainingItemCount: count - to } : { resourceVersion: '1' };
  return Buffer.from(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata, items }));
}

/**
 * The NodeList pages of `count` generated nodes over HTTPS, with the sandbox emulator's certificate.
 * The pages of the listing's size are built before the reconcile starts (`buildMs`), so on two cores
 * the stand-in's building does not compete with the reconcile it serves; a page of another size is
 * built when asked (`busyMs`, subtracted from the reconcile's time).
 */
async function startNodeServer(count: number): Promise<{ url: string; caPem: string; buildMs: number; busyMs(): number; api(): ScaleRun['api']; close(): Promise<void> }> {
  const built = performance.now();
  const pages = new Map<number, Buffer>();
  for (let from = 0; from < count; from += NODE_LIST_PAGE_SIZE) pages.set(from, nodePage(count, from, Math.min(count, from + NODE_LIST_PAGE_SIZE)));
  const buildMs = performance.now() - built;
  let busyMs = 0;
  const api = { requests: 0, bytes: 0 };
  const caPem = readFileSync(new URL('ca.crt', TLS_DIR), 'utf8');
  const server = https.createServer({ cert: readFileSync(new URL('server.crt', TLS_DIR), 'utf8'), key: readFileSync(new URL('server.key', TLS_DIR), 'utf8') }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    api.requests += 1;
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
      return;
    }
    if (req.method !== 'GET' || url.pathname !== '/api/v1/nodes') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? '0') || count;
    const from = Number(url.searchParams.get('continue') ?? '0') || 0;
    let body = limit === NODE_LIST_PAGE_SIZE ? pages.get(from) : undefined;
    if (body === undefined) {
      const started = performance.now();
      body = nodePage(count, from, Math.min(count, from + limit));
      busyMs += performance.now() - started;
    }
    api.bytes += body.length;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, caPem, buildMs, busyMs: () => busyMs, api: () => ({ ...api }), close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Runs one size in a child process and answers what it printed. */
export async function scaleOnce(count: number, mode: ScaleMode = 'prefixes'): Promise<ScaleRun> {
  const server = await startNodeServer(count);
  try {
    // SCALE_PROF=1: a CPU profile of the child in /tmp/prof. --expose-gc: the child collects once before the reconcile starts, so `baseRssMb` holds no garbage of the setup.
    // SCALE_NODE_FLAGS: more flags for the child's node (e.g. --trace-gc). The child runs with Node's
    // own heap defaults: the heap flags the nodejs22.x runtime passes for a 512 MB function could not
    // be established. Copies of the node20.x and node24.x runtimes' bootstrap (a gist of node20.x's,
    // gist.github.com/davidjb/432ea4e1c89f399ec412270539fe126f; dev.to "Deep Dive into AWS Lambda
    // (3)" for node24.x) derive --max-semi-space-size and --max-old-space-size from
    // AWS_LAMBDA_FUNCTION_MEMORY_SIZE, unless NODE_OPTIONS sets either, but what was found of them
    // stops before the arithmetic, and no copy of nodejs22.x's was found; AWS documents none.
    const extra = (process.env.SCALE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...(process.env.SCALE_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), ...extra, '--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', String(count), mode], {
      env: { ...process.env, SCALE_KUBE_URL: server.url, SCALE_KUBE_CA: server.caPem, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`scale child for ${count} nodes (${mode}) exited with ${code}: ${out.slice(-500)}`);
    const line = out.trim().split('\n').pop() ?? '';
    const measured = JSON.parse(line) as { nodes: number; reconcileMs: number; reconcileCpuMs: number; peakRssMb: number; baseRssMb: number; errors: number; leaseWrites: number; ec2Calls: ScaleRun['ec2Calls'] };
    const busyMs = server.busyMs();
    const serverMs = Math.round(server.buildMs + busyMs);
    return {
      mode,
      nodes: measured.nodes,
      nodeBytes: Buffer.byteLength(JSON.stringify(node(0))),
      reconcileMs: Math.max(0, Math.round(measured.reconcileMs - busyMs)),
      reconcileCpuMs: measured.reconcileCpuMs,
      serverMs,
      peakRssMb: measured.peakRssMb,
      baseRssMb: measured.baseRssMb,
      api: server.api(),
      errors: measured.errors,
      leaseWrites: measured.leaseWrites,
      ec2Calls: measured.ec2Calls,
    };
  } finally {
    await server.close();
  }
}

/** The goals of issue 19 section 1, each judged on the run it names. */
export const SCALE_GOALS = { prefixesNodes: 100_000, routesNodes: 5_000, peakRssMb: 512, reconcileMs: 30_000 } as const;

export interface ScaleGoal {
  goal: string;
  mode: ScaleMode;
  nodes: number;
  peakRssMb: number;
  reconcileMs: number;
  met: boolean;
}

/** Each goal as measured, met or not; a goal whose run was not made this time is left out. */
export function judgeScale(runs: readonly ScaleRun[]): ScaleGoal[] {
  const goals: ScaleGoal[] = [];
  for (const [mode, nodes] of [['prefixes', SCALE_GOALS.prefixesNodes], ['routes', SCALE_GOALS.routesNodes]] as const) {
    const run = runs.find((r) => r.mode === mode && r.nodes === nodes);
    if (!run) continue;
    goals.push({
      goal: `${mode} mode at ${nodes.toLocaleString('en-US')} nodes: peak RSS <= ${SCALE_GOALS.peakRssMb} MB and reconcile <= ${SCALE_GOALS.reconcileMs / 1000} s`,
      mode,
      nodes,
      peakRssMb: run.peakRssMb,
      reconcileMs: run.reconcileMs,
      met: run.errors === 0 && run.leaseWrites === 0 && run.peakRssMb <= SCALE_GOALS.peakRssMb && run.reconcileMs <= SCALE_GOALS.reconcileMs,
    });
  }
  return goals;
}

export async function benchScale(
  sizes: readonly number[] = [1_000, 5_000, 20_000, SCALE_GOALS.prefixesNodes],
  routesSizes: readonly number[] = [SCALE_GOALS.routesNodes],
): Promise<{ goal: string; runs: ScaleRun[]; goals: ScaleGoal[] }> {
  const runs: ScaleRun[] = [];
  for (const size of sizes) runs.push(await scaleOnce(size, 'prefixes'));
  for (const size of routesSizes) runs.push(await scaleOnce(size, 'routes'));
  return { goal: 'prefixes mode at 100,000 nodes and routes mode at 5,000: peak RSS <= 512 MB, reconcile <= 30 s', runs, goals: judgeScale(runs) };
}

/** The child's Kubernetes adapter, wired as the EKS reconcile Lambda's (functions/wiring.ts). */
async function scaleNodes(nodeSelector: LabelSelector) {
  const { createKubeConfig } = await import('../lib/kube/kube-config.ts');
  const { KubeNodes } = await import('../lib/kube/kube-nodes.ts');
  const { selectorKeys } = await import('../lib/nodes/label-selector.ts');
  const url = process.env.SCALE_KUBE_URL ?? '';
  const caPem = process.env.SCALE_KUBE_CA ?? '';
  // Endpoint and CA as DescribeCluster gives them, a bearer token per request.
  const kubeConfig = await createKubeConfig({
    kind: 'eks',
    clusterName: CLUSTER_NAME,
    describeCluster: async () => ({ endpoint: url, certificateAuthority: { data: Buffer.from(caPem).toString('base64') } }),
    tokens: { token: async () => TOKEN },
  });
  // Listed nodes keep the labels the node selector reads (none here).
  return new KubeNodes(kubeConfig, { keepLabels: selectorKeys(nodeSelector) });
}

/**
 * Every node's block leased at steady state (prefixes: in its subnet's set; routes: in the cluster
 * CIDR's set): the lease table stand-in computes its items (./steady-claims.ts), the claim protocol
 * over it is the real one.
 */
async function scaleLeases(count: number, mode: ScaleMode): Promise<{ sets: Map<string, CidrSet>; stores: SteadyClaimStore[] }> {
  const { ClaimProtocolStore, createCidrSet } = await import('../lib/ipam/index.ts');
  const stores: SteadyClaimStore[] = [];
  const sets = new Map<string, CidrSet>();
  const add = async (range: string, store: SteadyClaimStore) => {
    stores.push(store);
    sets.set(range, await createCidrSet({ clusterCidr: range, nodeMaskSize: NODE_MASK, store: new ClaimProtocolStore(store, { clock: () => 0 }) }));
  };
  if (mode === 'routes') {
    await add(CLUSTER_CIDR, new SteadyClaimStore({ first: 0, end: count }, { blockOf: clusterBlockOf, nodeOfBlock: nodeOfClusterBlock, nameOf: nodeName, nodeOfName }));
    return { sets, stores };
  }
  for (let s = 0; s <= subnetOf(count - 1); s++) {
    const first = s * NODES_PER_SUBNET;
    const nodeOfBlock = (index: number) => (index < NODES_PER_SUBNET ? first + index : null);
    await add(reservationOf(s), new SteadyClaimStore({ first, end: Math.min(count, first + NODES_PER_SUBNET) }, { blockOf: reservationBlockOf, nodeOfBlock, nameOf: nodeName, nodeOfName }));
  }
  return { sets, stores };
}

type Ec2Calls = ScaleRun['ec2Calls'];

/** Routes mode's one tagged table: every node's pod CIDR routed to its instance, as the worker made them. */
function scaleTable(count: number, calls: Ec2Calls): () => Promise<RouteTable[]> {
  const routeTableId = 'rtb-0scale00000000000';
  const routes = Array.from({ length: count }, (_, i) => ({ routeTableId, destinationCidr: podCidrOf(i), family: 4 as const, instanceId: instanceIdOf(i), networkInterfaceId: null, target: 'instance' as const, blackhole: false }));
  const table: RouteTable = { routeTableId, vpcId: 'vpc-0scale00000000000', tags: { [`kubernetes.io/cluster/${CLUSTER_NAME}`]: 'owned' }, routes, skippedRoutes: 0 };
  return async () => {
    calls.DescribeRouteTables += 1;
    return [table];
  };
}

/** Prefixes mode's interfaces and subnets of the converged cluster, answered from memory; the calls are counted. */
function scaleEc2(calls: Ec2Calls, unused: () => Promise<never>): { prefixes: EniPrefixes; subnets: Subnets } {
  return {
    prefixes: {
      describeInterfaces: async (ids) => {
        // The adapter asks EC2 for 200 ids a call (lib/aws/ec2-prefixes.ts).
        calls.DescribeInstances += Math.ceil(ids.length / 200);
        return new Map(ids.map((id) => {
          const i = Number.parseInt(id.slice(2), 16);
          return [id, { instanceId: id, networkInterfaceId: `eni-${id.slice(2)}`, subnetId: subnetId(subnetOf(i)), prefixes: [podCidrOf(i)] }];
        }));
      },
      assignPrefix: unused,
      assignAnyPrefix: unused,
      prefixDelegation: unused,
      unassignPrefix: unused,
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

/** The child: wiring as the reconcile handler's, the data plane chosen once, with the stand-ins above; prints one JSON line. */
async function child(count: number, mode: ScaleMode): Promise<void> {
  const { reconcile } = await import('../lib/usecases/reconcile.ts');
  const { silentLogger } = await import('../lib/log.ts');
  const { parseLabelSelector } = await import('../lib/nodes/label-selector.ts');
  const nodeSelector = parseLabelSelector('');
  const nodes = await scaleNodes(nodeSelector);
  const { sets, stores } = await scaleLeases(count, mode);
  const unused = async (): Promise<never> => {
    throw new Error('a converged cluster writes no route and assigns no prefix');
  };
  // EC2 answers from memory (no latency): the figure is podroute's own work; the calls are counted.
  const calls: Ec2Calls = { DescribeInstances: 0, DescribeSubnets: 0, DescribeRouteTables: 0 };
  const config = { clusterCidrs: [CLUSTER_CIDR], nodeSyncMode: 'SyncFromCluster' as const, maxDeleteShare: 0.2, minDeletesForGuard: 10, leaseGraceSeconds: 600, clusterName: CLUSTER_NAME, nodeSelector };
  const routeTables = { listRouteTables: scaleTable(mode === 'routes' ? count : 0, calls), createRoute: unused, replaceRoute: unused, deleteRoute: unused, describeRoute: unused };
  const plane = await scalePlane(mode, { config, nodes, sets, routeTables, ec2: scaleEc2(calls, unused) });
  (globalThis as { gc?: () => void }).gc?.();
  const baseRssMb = Math.round(process.memoryUsage().rss / 1048576);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const report = await reconcile({
    config,
    plane,
    routeTables,
    nodes,
    queue: { send: async (messages) => ({ sent: messages.length, duplicates: 0 }) },
    cidrSets: mode === 'routes' ? [...sets.values()] : [],
    log: silentLogger,
    now: () => Date.UTC(2026, 11, 1),
  });
  const reconcileMs = Math.round(performance.now() - started);
  const cpu = process.cpuUsage(cpuBefore);
  const reconcileCpuMs = Math.round((cpu.user + cpu.system) / 1000);
  const peakRssMb = peakRssOfThisProcessMb();
  const leaseWrites = stores.reduce((sum, store) => sum + store.writes, 0);
  process.stdout.write(`${JSON.stringify({ nodes: report.nodes, reconcileMs, reconcileCpuMs, peakRssMb, baseRssMb, errors: report.errors.length, leaseWrites, ec2Calls: calls })}\n`);
}

/**
 * This process's peak RSS in MB: VmHWM of /proc/self/status, the high-water mark of the process's
 * own address space (proc(5), "VmHWM: Peak resident set size"). Not `resourceUsage().maxRSS`
 * (getrusage(2) ru_maxrss): Linux carries the peak of the image before exec into it (fs/exec.c,
 * exec_mmap), and before exec the child was a fork of this bench's parent, whose RSS holds the
 * stand-in's pages. maxRSS only where /proc is not there.
 */
function peakRssOfThisProcessMb(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm?.[1] !== undefined) return Math.round(Number(hwm[1]) / 1024);
  } catch {
    // Not Linux: below.
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** The run's data plane, chosen once (as functions/wiring.ts does from the config). */
async function scalePlane(
  mode: ScaleMode,
  parts: {
    config: RoutesPlanePorts['config'] & PrefixesPlanePorts['config'];
    nodes: NodeSource;
    sets: Map<string, CidrSet>;
    routeTables: { listRouteTables: () => Promise<RouteTable[]> };
    ec2: { prefixes: EniPrefixes; subnets: Subnets };
  },
) {
  const { config, nodes, sets, routeTables, ec2 } = parts;
  if (mode === 'routes') {
    const { routesPlane } = await import('../lib/dataplane/routes/routes-plane.ts');
    return routesPlane({ config, routeTables, cidrSets: [...sets.values()], interfaces: null });
  }
  const { prefixesPlane } = await import('../lib/dataplane/prefixes/prefixes-plane.ts');
  const { silentLogger } = await import('../lib/log.ts');
  return prefixesPlane({
    config,
    nodes,
    log: silentLogger,
    usedReservationSets: async () => [...sets.values()],
    ...ec2,
    reservationSets: async (range) => {
      const set = sets.get(range);
      if (!set) throw new Error(`no set for ${range}`);
      return set;
    },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--child');
  const modeOf = (text: string | undefined): ScaleMode => (text === 'routes' ? 'routes' : 'prefixes');
  if (at >= 0) await child(Number(process.argv[at + 1]), modeOf(process.argv[at + 2]));
  else console.log(JSON.stringify(await scaleOnce(Number(process.argv[2] ?? 5000), modeOf(process.argv[3]))));
}
