/**
 * The Kubernetes emulator's SelfSubjectAccessReview, SubjectAccessReview and MutatingWebhookConfiguration list
 * (infra/local/kube/authz.ts), through the real client and over raw HTTPS for invalid input.
 */
import https from 'node:https';
import { AdmissionregistrationV1Api, AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';

let kube: KubeEmulator;
let config: KubeConfig;
beforeAll(async () => {
  kube = await startKubeEmulator();
  config = new KubeConfig();
  config.loadFromOptions(kube.kubeConfig());
});
afterAll(async () => {
  await kube.close();
});

function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = https.request(`${kube.url}${path}`, {
      method: 'POST',
      ca: kube.caPem,
      headers: { authorization: `Bearer ${kube.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

describe('kube emulator: SelfSubjectAccessReview', () => {
  it('allows by default and refuses what a test denied, with the real API shape', async () => {
    const api = config.makeApiClient(AuthorizationV1Api);
    const ask = (verb: string, subresource?: string) =>
      api.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb, group: '', resource: 'nodes', ...(subresource ? { subresource } : {}) } } } });
    expect((await ask('patch', 'status')).status).toEqual({ allowed: true, reason: 'allowed by the emulator' });
    kube.state.access.deny({ verb: 'patch', resource: 'nodes', subresource: 'status' });
    expect((await ask('patch', 'status')).status).toEqual({ allowed: false, denied: true, reason: 'denied by the emulator' });
    expect((await ask('patch')).status?.allowed).toBe(true);
    kube.state.access.allowAll();
    expect((await ask('patch', 'status')).status?.allowed).toBe(true);
  });

  it.each([
    ['neither attributes', { spec: {} }],
    ['both attributes', { spec: { resourceAttributes: { verb: 'get', resource: 'nodes' }, nonResourceAttributes: { verb: 'get', path: '/healthz' } } }],
  ])('422 Invalid with %s', async (_label, body) => {
    const { status, json } = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', ...body });
    expect(status).toBe(422);
    expect(json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
  });

  it('answers 201 Created', async () => {
    const { status, json } = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: { resourceAttributes: { verb: 'list', resource: 'nodes' } } });
    expect(status).toBe(201);
    expect(json).toMatchObject({ kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', status: { allowed: true } });
  });
});

describe('kube emulator: SubjectAccessReview', () => {
  const review = (user: string, groups: string[], verb: string, resource: string, subresource?: string) =>
    config.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
      body: { spec: { user, groups, resourceAttributes: { verb, group: '', resource, ...(subresource ? { subresource } : {}) } } },
    });

  it.each([
    ['podroute', ['podroute'], 'patch', 'nodes', 'status', true],
    ['podroute', ['podroute'], 'create', 'events', undefined, true],
    ['podroute', ['podroute'], 'delete', 'nodes', undefined, false],
    ['podroute', ['podroute'], 'update', 'nodes', 'status', false],
    // The binding names the group: a user of that name outside the group has no rights.
    ['podroute', [], 'list', 'nodes', undefined, false],
    ['someone', ['podroute'], 'list', 'nodes', undefined, true],
    ['someone', ['system:masters'], 'delete', 'nodes', undefined, true],
  ])('%s in %j: %s %s/%s is allowed: %s (infra/kubernetes/rbac.yaml)', async (user, groups, verb, resource, subresource, allowed) => {
    const answer = await review(user, groups, verb, resource, subresource);
    expect(answer.kind).toBe('SubjectAccessReview');
    expect(answer.status?.allowed).toBe(allowed);
  });

  it("answers for the subject, not the caller: the admin asks, podroute's binding deleted => not allowed", async () => {
    const local = await startKubeEmulator();
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions(local.kubeConfig());
      const ask = () =>
        kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({ body: { spec: { user: 'podroute', groups: ['podroute'], resourceAttributes: { verb: 'list', resource: 'nodes' } } } });
      expect((await ask()).status?.allowed).toBe(true);
      expect(local.state.access.removeBinding('podroute')).toBe(true);
      expect((await ask()).status).toEqual({ allowed: false });
      expect(local.state.access.removeBinding('podroute')).toBe(false);
    } finally {
      await local.close();
    }
  });

  it.each([
    ['no user and no groups', { spec: { resourceAttributes: { verb: 'get', resource: 'nodes' } } }, /at least one of user or group must be specified/],
    ['no attributes', { spec: { user: 'podroute' } }, /exactly one of nonResourceAttributes or resourceAttributes/],
  ])('422 Invalid with %s', async (_label, body, message) => {
    const { status, json } = await post('/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', ...body });
    expect(status).toBe(422);
    expect(json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(String(json.message)).toMatch(message);
  });

  it("is refused to podroute's own token: its rules do not grant create on subjectaccessreviews", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions(kube.kubeConfig(kube.podrouteToken));
    await expect(
      kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({ body: { spec: { user: 'podroute', resourceAttributes: { verb: 'list', resource: 'nodes' } } } }),
    ).rejects.toMatchObject({ code: 403 });
  });
});

describe('kube emulator: MutatingWebhookConfigurations', () => {
  it('lists what was registered, as a MutatingWebhookConfigurationList', async () => {
    const api = config.makeApiClient(AdmissionregistrationV1Api);
    expect((await api.listMutatingWebhookConfiguration()).items).toEqual([]);
    kube.state.webhookConfigurations.put({
      metadata: { name: 'podroute' },
      webhooks: [{ name: 'node-join.podroute.io', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: 'https://example.com/webhook/x' }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['nodes'] }] }],
    });
    const list = await api.listMutatingWebhookConfiguration();
    expect(list.kind).toBe('MutatingWebhookConfigurationList');
    expect(list.items.map((item) => [item.metadata?.name, item.webhooks?.map((w) => w.name)])).toEqual([['podroute', ['node-join.podroute.io']]]);
    expect(kube.state.webhookConfigurations.remove('podroute')).toBe(true);
    expect((await api.listMutatingWebhookConfiguration()).items).toEqual([]);
  });
});
