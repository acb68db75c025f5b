/**
 * The in-memory twin of world.ts + wiring.ts for use-case tests that need no emulator: the shared
 * port fakes (test/fakes), one fake clock, a lease table per cluster CIDR over the claim protocol
 * in memory (its writes counted), and the use cases' deps built from a config as `testWiring`
 * builds them from a handler wiring. The deps shapes live here only, so one edit follows them.
 *
 *   const world = fakeWorld();
 *   const table = world.addClusterTable();
 *   await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
 *   const w = await fakeWiring(world, { LEASE_GRACE_SECONDS: '600' });
 *   await reconcile(w.reconcileDeps());
 */
import { kubeletNode } from '../../infra/local/kube/kubelet-node.ts';
import { tryParseCidr } from '../../lib/cidr/cidr.ts';
import { loadConfig, type Config } from '../../lib/config.ts';
import { ClaimProtocolStore, MemoryClaimStore, createCidrSet, type CidrSet } from '../../lib/ipam/index.ts';
import type { ClaimStore } from '../../lib/ipam/claim-store.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { ReconcileDeps } from '../../lib/usecases/reconcile.ts';
import { MemoryDeletionWindow, MemoryNodeSource, MemoryRouteTables, MemoryWorkQueue } from '../fakes/index.ts';
import { CLUSTER, FakeClock } from './clock.ts';
import type { DataPlane } from '../../lib/dataplane/data-plane.ts';
import { routesWorkerPlane, withRoutesPlane } from './plane.ts';

/** Route-table calls that change EC2 (the world's `ec2Writes`). */
const EC2_WRITES = /^(createRoute|replaceRoute|deleteRoute|prepareRouteTarget|markRouteTableFull|clearRouteTableFull) /;
/** Node-source calls that reach the API server as writes (PATCH, POST of an event). */
const KUBE_WRITES = ['setNetworkUnavailable', 'updatePodCidr', 'warn'];

export interface FakeWorld {
  clock: FakeClock;
  routeTables: MemoryRouteTables;
  nodes: MemoryNodeSource;
  /** A route table tagged for the cluster. */
  addClusterTable(): string;
  /** Launches an instance (unless given) and stores its Node as the kubelet registers it. */
  addNode(name: string, spec?: { podCidrs?: string[]; networkUnavailable?: 'True' | 'False'; instanceId?: string }): Promise<{ name: string; instanceId: string; eniId: string }>;
  /** The Node object to send in an AdmissionReview (not stored). */
  nodeObject(name: string, instanceId: string, podCidrs?: string[]): Record<string, unknown>;
  /** EC2 and Kubernetes writes since the last `resetStats`. */
  ec2Writes(): number;
  kubeWrites(): number;
  resetStats(): void;
}

export function fakeWorld(clock: FakeClock = new FakeClock()): FakeWorld {
  const routeTables = new MemoryRouteTables({ clusterName: CLUSTER });
  const nodes = new MemoryNodeSource(clock.now);
  let nodeIndex = 0;
  let marks = { ec2: 0, kube: 0 };
  const ec2Calls = () => routeTables.calls.filter((call) => EC2_WRITES.test(call)).length;
  const kubeCalls = () => KUBE_WRITES.reduce((sum, method) => sum + nodes.count(method), 0);
  const nodeObject = (name: string, instanceId: string, podCidrs: string[] = [], networkUnavailable?: 'True' | 'False'): Record<string, unknown> => {
    nodeIndex += 1;
    const spec = { name, instanceId, zone: 'us-east-1a', privateIp: `10.0.${(nodeIndex >> 8) & 255}.${nodeIndex & 255}`, podCidrs, index: nodeIndex };
    return kubeletNode(networkUnavailable === undefined ? spec : { ...spec, networkUnavailable });
  };
  return {
    clock,
    routeTables,
    nodes,
    addClusterTable: () => routeTables.addTable(),
    async addNode(name, spec = {}) {
      const instance = spec.instanceId === undefined ? routeTables.addInstance() : { instanceId: spec.instanceId, eniId: '' };
      const object = nodeObject(name, instance.instanceId, spec.podCidrs, spec.networkUnavailable);
      nodes.put(object);
      return { name, instanceId: instance.instanceId, eniId: instance.eniId };
    },
    nodeObject,
    ec2Writes: () => ec2Calls() - marks.ec2,
    kubeWrites: () => kubeCalls() - marks.kube,
    resetStats: () => {
      marks = { ec2: ec2Calls(), kube: kubeCalls() };
    },
  };
}

/** The in-memory claim store, counting the writes the lease table would take. */
function countingClaimStore(counter: { writes: number }): ClaimStore {
  const store = new MemoryClaimStore();
  const counted = <T>(write: Promise<T>): Promise<T> => {
    counter.writes += 1;
    return write;
  };
  return {
    get: (key) => store.get(key),
    list: (from, to, limit) => store.list(from, to, limit),
    count: (from, to) => store.count(from, to),
    putIfAbsent: (key, attrs) => counted(store.putIfAbsent(key, attrs)),
    putIfVersion: (key, attrs, version) => counted(store.putIfVersion(key, attrs, version)),
    deleteIf: (key, version) => counted(store.deleteIf(key, version)),
    increment: (key, attr, by) => counted(store.increment(key, attr, by)),
  };
}

export interface FakeWiring {
  config: Config;
  cidrSets: CidrSet[];
  queue: MemoryWorkQueue;
  deletionWindow: MemoryDeletionWindow;
  log: ReturnType<typeof memoryLogger>;
  /** Lease-table writes since the last `reset`. */
  leases: { writes(): number; reset(): void };
  reconcileDeps(): ReconcileDeps;
  workerDeps(): { clusterCidrs: readonly string[]; routeTables: MemoryRouteTables; routeTargets: MemoryRouteTables; nodes: MemoryNodeSource; cidrSets: CidrSet[]; leaseGraceSeconds: number; now: () => number; plane: DataPlane };
}

/** Deps for the use cases over a fake world, from the same config `testWiring` loads (routes mode). */
export async function fakeWiring(world: FakeWorld, env: Record<string, string> = {}): Promise<FakeWiring> {
  const config = loadConfig({ CLUSTER_NAME: CLUSTER, CLUSTER_CIDRS: '100.64.0.0/16', ...env });
  const counter = { writes: 0 };
  const cidrSets = await Promise.all(
    config.clusterCidrs.map((clusterCidr) => {
      const family = tryParseCidr(clusterCidr)?.family ?? 4;
      return createCidrSet({ clusterCidr, nodeMaskSize: config.nodeMaskSize[family], store: new ClaimProtocolStore(countingClaimStore(counter), { clock: world.clock.now }) });
    }),
  );
  const queue = new MemoryWorkQueue(world.clock.now);
  const deletionWindow = new MemoryDeletionWindow();
  const log = memoryLogger();
  let mark = 0;
  return {
    config,
    cidrSets,
    queue,
    deletionWindow,
    log,
    leases: { writes: () => counter.writes - mark, reset: () => void (mark = counter.writes) },
    reconcileDeps: () => withRoutesPlane({ config, routeTables: world.routeTables, nodes: world.nodes, queue, cidrSets, deletionWindow, log, now: world.clock.now }),
    workerDeps: () => ({ clusterCidrs: config.clusterCidrs, routeTables: world.routeTables, routeTargets: world.routeTables, nodes: world.nodes, cidrSets, leaseGraceSeconds: config.leaseGraceSeconds, now: world.clock.now, plane: routesWorkerPlane(cidrSets) }),
  };
}
