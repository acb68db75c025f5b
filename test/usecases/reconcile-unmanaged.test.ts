/**
 * Nodes that are not podroute's (lib/nodes/managed-node.ts) through the reconcile use case, the
 * webhook and the worker, over the port fakes: an EKS Fargate node and a node outside
 * NODE_SELECTOR are never given a pod CIDR, never routed, and their condition is never written.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import { memoryLogger } from '../../lib/log.ts';
import { fakeWiring, fakeWorld, type FakeWorld } from '../support/fake-world.ts';

const FARGATE = 'fargate-ip-192-168-1-5.ec2.internal';
// As EKS registers a Fargate node (kubernetes/autoscaler#2737): zone, task id, then the node name.
const FARGATE_PROVIDER_ID = `aws:///us-east-1a/120328e333-369fe1b7ba8b4416ab87216be91dc4f1/${FARGATE}`;

const fargateNode = (conditions: Array<Record<string, string>> = []) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: FARGATE, labels: { 'eks.amazonaws.com/compute-type': 'fargate', 'kubernetes.io/hostname': FARGATE } },
  spec: {
    providerID: FARGATE_PROVIDER_ID,
    taints: [{ key: 'eks.amazonaws.com/compute-type', value: 'fargate', effect: 'NoSchedule' }],
  },
  status: { conditions },
});

let world: FakeWorld;
beforeEach(() => {
  world = fakeWorld();
});

describe('reconcile: nodes that are not podroute s', () => {
  it('never gives a Fargate node a pod CIDR and never patches its condition, tick after tick', async () => {
    const table = world.addClusterTable();
    world.nodes.put(fargateNode());
    const ec2 = await world.addNode('node-a');
    const w = await fakeWiring(world);

    for (let tick = 0; tick < 2; tick++) {
      const report = await reconcile(w.reconcileDeps());
      expect(report.allocated).toEqual(tick === 0 ? ['node-a'] : []);
      expect(report.plan.nodes.find((n) => n.node === FARGATE)).toEqual({ node: FARGATE, networkUnavailable: false, patch: false, unmanaged: 'not-an-ec2-instance' });
    }
    expect(world.nodes.podCidrs(FARGATE)).toEqual([]);
    expect(world.nodes.networkUnavailable(FARGATE)).toBeNull();
    expect(world.nodes.podCidrs('node-a')).toHaveLength(1);
    expect(w.queue.messages.filter((m) => 'node' in m && m.node === FARGATE)).toEqual([]);
    expect(world.routeTables.routeSummary(table)).toEqual([]);
    void ec2;
  });

  it('leaves a node outside NODE_SELECTOR alone, and a Fargate node with a condition keeps it', async () => {
    world.addClusterTable();
    world.nodes.put(fargateNode([{ type: 'NetworkUnavailable', status: 'False', reason: 'Fargate' }]));
    await world.addNode('cni-node');
    const w = await fakeWiring(world, { NODE_SELECTOR: 'podroute.example.com/managed=true' });

    const report = await reconcile(w.reconcileDeps());
    expect(report.allocated).toEqual([]);
    expect(report.conditionsPatched).toBe(0);
    expect(report.plan.nodes).toEqual([
      { node: 'cni-node', networkUnavailable: false, patch: false, unmanaged: 'outside-node-selector' },
      { node: FARGATE, networkUnavailable: false, patch: false, unmanaged: 'outside-node-selector' },
    ]);
    expect(world.nodes.podCidrs('cni-node')).toEqual([]);
    expect(world.nodes.networkUnavailable('cni-node')).toBeNull();
    expect(world.nodes.networkUnavailable(FARGATE)).toBe('False');
  });
});

describe('webhook and worker: nodes that are not podroute s', () => {
  it('admits a Fargate node without allocating, and the worker acks its sync-node as stale', async () => {
    world.addClusterTable();
    const w = await fakeWiring(world);
    const deps = w.reconcileDeps();
    const response = await admit(
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1', operation: 'CREATE', object: fargateNode() } } as never,
      deps,
    );
    expect(response.response.allowed).toBe(true);
    expect(response.response.patch).toBeUndefined();
    expect((await Promise.all(deps.cidrSets.map((s) => s.leases()))).flat()).toEqual([]);

    world.nodes.put(fargateNode());
    const result = await handleWorkMessage(
      JSON.stringify({ v: 1, kind: 'sync-node', node: FARGATE }),
      { receiveCount: 1, maxReceiveCount: 3 },
      { ...w.workerDeps(), log: memoryLogger() },
    );
    expect(result).toEqual({ outcome: 'ack', status: 'stale:unmanaged not-an-ec2-instance' });
    expect(world.nodes.networkUnavailable(FARGATE)).toBeNull();
  });
});
