/**
 * The Kubernetes emulator's UPDATE admission: a node update of the main resource (PATCH or PUT)
 * goes to the UPDATE webhook only when the deployed matchConditions (infra/kubernetes/webhook.yaml,
 * node-provider-id.podroute.io) hold; the webhook's JSON Patch is applied, its status changes are
 * dropped as the node strategy drops them; nodes/status never goes to it; a stale update is admitted
 * and then refused 409, as the registry checks the precondition after admission. An expression outside the
 * supported CEL fails the emulator's start.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { manifestMatchConditions } from '../../infra/local/kube/match-conditions.ts';
import { startAdmissionWebhook, type AdmissionWebhook, type ReviewRequest } from '../support/admission-webhook.ts';

let webhook: AdmissionWebhook;
let reviews: ReviewRequest[];
let emulator: KubeEmulator;
let api: CoreV1Api;

/** The webhook's answer to an UPDATE: a pod CIDR and a status condition (which the server must drop). */
const UPDATE_PATCH = [
  { op: 'add', path: '/spec/podCIDR', value: '10.9.1.0/24' },
  { op: 'add', path: '/status/conditions/-', value: { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated' } },
];

const bare = (name: string): V1Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  spec: { taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] },
  status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'network plugin is not ready' }] },
});

const merge = { ...setHeaderOptions('Content-Type', PatchStrategy.MergePatch) };

beforeAll(async () => {
  webhook = await startAdmissionWebhook((request) => ({
    uid: request.uid,
    allowed: true,
    ...(request.operation === 'UPDATE' ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(UPDATE_PATCH)).toString('base64') } : {}),
  }));
  reviews = webhook.reviews;
  emulator = await startKubeEmulator({ onNodeUpdate: { ...webhook.target, matchConditions: manifestMatchConditions('node-provider-id.podroute.io') } });
  const kc = new KubeConfig();
  kc.loadFromOptions(emulator.kubeConfig());
  api = kc.makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await emulator.close();
  await webhook.close();
});
beforeEach(() => {
  reviews.length = 0;
  emulator.stats.reset();
});

describe('kube emulator: UPDATE admission with the manifest matchConditions', () => {
  it('sends the update that first sets spec.providerID, with both objects, and stores its patch without its status change', async () => {
    await emulator.state.addNode(bare('joining'), { admit: false });
    const updated = await api.patchNode({ name: 'joining', body: { spec: { providerID: 'aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1' } } }, merge);
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({
      operation: 'UPDATE',
      name: 'joining',
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      object: { spec: { providerID: 'aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1' } },
      oldObject: { metadata: { name: 'joining' } },
    });
    expect((reviews[0]?.oldObject as V1Node).spec?.providerID).toBeUndefined();
    expect(updated.spec?.podCIDR).toBe('10.9.1.0/24');
    expect(updated.spec?.podCIDRs).toEqual(['10.9.1.0/24']);
    // An update of the main resource keeps the stored status (node strategy PrepareForUpdate).
    expect(updated.status?.conditions?.map((c) => c.type)).toEqual(['Ready']);
    expect(emulator.stats.get('WEBHOOK UPDATE')).toBe(1);
  });

  it('skips every other update: a label change, the same providerID again, a providerID left empty', async () => {
    await emulator.state.addNode({ ...bare('settled'), spec: { providerID: 'aws:///us-east-1a/i-0bbbbbbbbbbbbbbb2' } }, { admit: false });
    await api.patchNode({ name: 'settled', body: { metadata: { labels: { team: 'a' } } } }, merge);
    const stored = emulator.state.getNode('settled') as V1Node;
    await api.replaceNode({ name: 'settled', body: stored });
    await emulator.state.addNode(bare('still-bare'), { admit: false });
    await api.patchNode({ name: 'still-bare', body: { spec: { providerID: '' } } }, merge);
    await api.patchNode({ name: 'still-bare', body: { metadata: { labels: { team: 'b' } } } }, merge);
    expect(reviews).toEqual([]);
    expect(emulator.stats.get('WEBHOOK UPDATE SKIPPED')).toBe(4);
    expect(emulator.state.getNode('settled')?.spec).not.toHaveProperty('podCIDR');
  });

  it('sends a PUT that sets the providerID; never an update of nodes/status', async () => {
    await emulator.state.addNode(bare('put'), { admit: false });
    await api.patchNodeStatus({ name: 'put', body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }] } } }, merge);
    expect(reviews).toEqual([]);
    const stored = emulator.state.getNode('put') as V1Node;
    const replaced = await api.replaceNode({ name: 'put', body: { ...stored, spec: { ...stored.spec, providerID: 'aws:///us-east-1a/i-0ccccccccccccccc3' } } });
    expect(reviews.map((r) => r.operation)).toEqual(['UPDATE']);
    expect(replaced.spec?.podCIDR).toBe('10.9.1.0/24');
  });

  it('admits a stale PUT before refusing it 409 (the precondition is checked after admission), and stores nothing', async () => {
    await emulator.state.addNode(bare('stale'), { admit: false });
    const read = emulator.state.getNode('stale') as V1Node;
    await api.patchNode({ name: 'stale', body: { metadata: { labels: { moved: 'on' } } } }, merge);
    const error = await api.replaceNode({ name: 'stale', body: { ...read, spec: { ...read.spec, providerID: 'aws:///us-east-1a/i-0ddddddddddddddd4' } } }).then(
      () => null,
      (e: unknown) => e as { code?: number },
    );
    expect(error?.code).toBe(409);
    expect(reviews.map((r) => r.operation)).toEqual(['UPDATE']);
    expect(emulator.state.getNode('stale')?.spec).not.toHaveProperty('providerID');
    expect(emulator.state.getNode('stale')?.spec).not.toHaveProperty('podCIDR');
  });

  it.each([
    ['a function call', "object.spec.providerID.startsWith('aws')"],
    ['a comparison of two fields', 'object.spec.providerID == oldObject.spec.providerID'],
    ['an unknown variable', "params.spec == ''"],
    ['a list literal', "request.operation in ['UPDATE']"],
    ['an escape in a string', "object.spec.providerID != 'a\\'b'"],
    ['a trailing token', "has(object.spec) )"],
  ])('refuses to start with %s in a matchCondition', async (_name, expression) => {
    await expect(startKubeEmulator({ onNodeUpdate: { url: 'https://127.0.0.1:1/', matchConditions: [{ name: 'c', expression }] } })).rejects.toThrow(
      /matchConditions\[0\] \(c\): unsupported CEL/,
    );
  });
});
