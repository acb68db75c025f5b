/**
 * The kube emulator answers as kube-apiserver 1.32 answered: every expected value here is the
 * `real` answer recorded in test/fixtures/kube-apiserver-1.32 (uids, timestamps and
 * resourceVersions left out), and each case names the Kubernetes source of the rule.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const REFERENCE = new URL('../fixtures/kube-apiserver-1.32/', import.meta.url);
const recorded = (file: string): JsonObject => JSON.parse(readFileSync(new URL(file, REFERENCE), 'utf8')) as JsonObject;

/** The user agent of the client that made the recordings (its managedFields manager). */
const DRIVER_UA = 'kube-real-driver/v0.0.0 (linux/amd64) kubernetes/$Format';

type Request = { method: string; path: string; body?: unknown; contentType?: string; token?: string; userAgent?: string };

function call(emulator: KubeEmulator, request: Request): Promise<{ status: number; body: JsonObject }> {
  const url = new URL(request.path, emulator.url);
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers: Record<string, string | number> = { authorization: `Bearer ${request.token ?? emulator.token}`, accept: 'application/json' };
  if (payload) Object.assign(headers, { 'content-type': request.contentType ?? 'application/json', 'content-length': payload.length });
  if (request.userAgent !== undefined) headers['user-agent'] = request.userAgent;
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: request.method, headers, ca: emulator.caPem }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonObject }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Drops what differs between any two servers: uids, resourceVersions, timestamps of creation and of managedFields. */
function stable(value: Json): Json {
  if (Array.isArray(value)) return value.map(stable);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    if ((key === 'uid' || key === 'resourceVersion' || key === 'creationTimestamp' || key === 'time') && typeof v === 'string') continue;
    out[key] = stable(v);
  }
  return out;
}

const obj = (value: Json | undefined): JsonObject => (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {});

/** A webhook that allows everything and keeps what it was sent. */
async function recordingWebhook(): Promise<{ url: string; reviews: JsonObject[]; paths: string[]; close: () => Promise<void> }> {
  const reviews: JsonObject[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonObject;
      reviews.push(review);
      paths.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: obj(review.request).uid, allowed: true } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhook/token`, reviews, paths, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** What a kubelet sent for a recorded object: the object without what the server and admission added. */
function kubeletBody(object: JsonObject): JsonObject {
  const { managedFields: _m, creationTimestamp: _c, uid: _u, resourceVersion: _r, ...metadata } = obj(object.metadata);
  const { taints: _t, ...spec } = obj(object.spec);
  return { apiVersion: 'v1', kind: 'Node', metadata, spec, status: object.status ?? {} };
}

describe('kube emulator: Node CREATE as kube-apiserver 1.32', () => {
  let emulator: KubeEmulator;
  let webhook: Awaited<ReturnType<typeof recordingWebhook>>;

  beforeAll(async () => {
    webhook = await recordingWebhook();
    emulator = await startKubeEmulator({ onNodeCreate: { url: webhook.url, timeoutMs: 5000 } });
  });
  afterAll(async () => {
    await emulator.close();
    await webhook.close();
  });
  beforeEach(async () => {
    for (const n of emulator.state.nodes()) await emulator.state.deleteNode(String(obj(n.metadata).name), { admit: false });
    webhook.reviews.splice(0);
    webhook.paths.splice(0);
  });

  const sandboxBody = recorded('nodes-sandbox-body.json');
  // The sandbox's old kubelet-shaped body: server-set fields and the cloud controller's label.
  it.each([
    // k8s.io/apiserver storage/etcd3 store `Create`: a set resourceVersion is refused (500, no reason).
    ['as admin', false, sandboxBody.realAsAdmin],
    // k8s plugin/pkg/admission/noderestriction `admitNode`: restricted labels (403).
    ['as its kubelet', true, sandboxBody.realAsKubelet],
  ])('refuses the old sandbox body %s', async (_who, asKubelet, real) => {
    const body = obj(sandboxBody.emulator);
    const name = String(obj(body.metadata).name);
    const answer = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body, ...(asKubelet ? { token: emulator.state.kubeletToken(name) } : {}) });
    expect(answer.body).toEqual(real);
    expect(answer.status).toBe(obj(real).code);
    expect(emulator.state.getNode(name)).toBeUndefined();
  });

  it('sets uid and creationTimestamp itself (apimachinery `FillObjectMetaSystemFields`)', async () => {
    const body = { metadata: { name: 'n-1', uid: 'chosen-by-client', creationTimestamp: '2001-01-01T00:00:00Z' }, spec: {} };
    const answer = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body });
    expect(answer.status).toBe(201);
    expect(obj(answer.body.metadata).uid).not.toBe('chosen-by-client');
    expect(obj(answer.body.metadata).creationTimestamp).not.toBe('2001-01-01T00:00:00Z');
  });

  it('gives the webhook the object the real server gave it: not-ready taint, managedFields, creationTimestamp null, the kubelet as user', async () => {
    const real = obj(obj(recorded('admission-review-create-real.json').review).request);
    const body = kubeletBody(obj(real.object));
    const name = String(real.name);
    const answer = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body, token: emulator.state.kubeletToken(name), userAgent: DRIVER_UA });
    expect(answer.status).toBe(201);
    const sent = obj(webhook.reviews[0]?.request);
    // k8s plugin/pkg/admission/nodetaint (TaintNodesByCondition) and the handlers' fieldmanager run before the webhooks.
    expect(stable(sent.object ?? null)).toEqual(stable(real.object ?? null));
    expect(obj(obj(sent.object).metadata).creationTimestamp).toBeNull();
    expect({ ...obj(sent.userInfo), uid: null }).toEqual({ ...obj(real.userInfo), uid: null });
  });

  it('stores what the real server stored after a kubelet CREATE', async () => {
    const real = recorded('node-as-stored-after-kubelet-create.json');
    const name = String(obj(real.metadata).name);
    const answer = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: kubeletBody(real), token: emulator.state.kubeletToken(name), userAgent: DRIVER_UA });
    expect(answer.status).toBe(201);
    expect(stable(emulator.state.getNode(name) ?? null)).toEqual(stable(real));
  });

  it('calls the webhook URL with ?timeout=<n>s (k8s.io/apiserver webhook request; recorded: ?timeout=5s)', async () => {
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-2' } } });
    const recordedPaths = (recorded('webhook-exchanges.json') as unknown as Array<{ path: string }>).map((e) => e.path.replace('<token>', 'token'));
    expect(webhook.paths).toEqual([recordedPaths[0]]);
  });

  it('runs admission before it answers 409 AlreadyExists for a node that exists (etcd3 store `Create`)', async () => {
    const token = emulator.state.kubeletToken('n-3');
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-3' } }, token });
    const again = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-3' } }, token });
    expect(again).toEqual({
      status: 409,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'nodes "n-3" already exists', reason: 'AlreadyExists', details: { name: 'n-3', kind: 'nodes' }, code: 409 },
    });
    expect(webhook.reviews.map((r) => obj(r.request).operation)).toEqual(['CREATE', 'CREATE']);
  });

  const forbidden = (name: string, message: string) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `nodes "${name}" is forbidden: ${message}`,
    reason: 'Forbidden',
    details: { name, kind: 'nodes' },
    code: 403,
  });

  it.each<[string, Request & { as: string }, number, unknown]>([
    // noderestriction `admitNode`: a kubelet modifies only its own Node.
    ['create another node', { as: 'n-a', method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-b' } } }, 403, forbidden('n-b', 'node "n-a" is not allowed to modify node "n-b"')],
    // noderestriction: labels outside the kubelet's set (kubeletapis `IsKubeletLabel`).
    [
      'set node-role and node-restriction labels',
      { as: 'n-a', method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-a', labels: { 'node-role.kubernetes.io/master': '', 'node-restriction.kubernetes.io/x': 'y', 'kubernetes.io/hostname': 'n-a', 'node.kubernetes.io/instance-type': 'm5.large' } } } },
      403,
      forbidden('n-a', 'node "n-a" is not allowed to set the following labels: node-restriction.kubernetes.io/x, node-role.kubernetes.io/master'),
    ],
  ])('a kubelet may not %s', async (_what, request, code, status) => {
    const answer = await call(emulator, { ...request, token: emulator.state.kubeletToken(request.as) });
    expect(answer).toEqual({ status: code, body: status });
    expect(webhook.reviews).toHaveLength(0);
  });

  // noderestriction `admitNode` at UPDATE: own Node only, taints unchanged; spec.podCIDR(s) are not checked.
  it.each<[string, string, JsonObject, number, unknown]>([
    ['patch another node', 'n-7', { spec: { podCIDR: '10.244.8.0/24' } }, 403, forbidden('n-7', 'node "n-6" is not allowed to modify node "n-7"')],
    ['change its taints', 'n-6', { spec: { taints: [] } }, 403, forbidden('n-6', 'node "n-6" is not allowed to modify taints')],
    ['set its own pod CIDR', 'n-6', { spec: { podCIDR: '10.244.9.0/24' } }, 200, undefined],
  ])('a kubelet patching its Node: %s', async (_what, target, body, code, status) => {
    const token = emulator.state.kubeletToken('n-6');
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-6' } }, token });
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-7' } } });
    const answer = await call(emulator, { method: 'PATCH', path: `/api/v1/nodes/${target}`, body, contentType: 'application/strategic-merge-patch+json', token });
    expect(answer.status).toBe(code);
    if (status !== undefined) expect(answer.body).toEqual(status);
    else expect(answer.body.spec).toMatchObject({ podCIDR: '10.244.9.0/24', podCIDRs: ['10.244.9.0/24'] });
  });

  it('a kubelet may not delete its Node (Node authorizer / RBAC: 403)', async () => {
    const token = emulator.state.kubeletToken('n-4');
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-4' } }, token });
    const answer = await call(emulator, { method: 'DELETE', path: '/api/v1/nodes/n-4', token });
    expect(answer).toEqual({ status: 403, body: forbidden('n-4', 'User "system:node:n-4" cannot delete resource "nodes" in API group "" at the cluster scope') });
    expect(emulator.state.getNode('n-4')).toBeDefined();
  });

  it('a kubelet may set its own spec.podCIDR(s) and spec.providerID (NodeRestriction does not check them)', async () => {
    const spec = { podCIDR: '10.244.7.0/24', podCIDRs: ['10.244.7.0/24'], providerID: 'aws:///us-east-1a/i-0aaaaaaaaaaaaaaaa' };
    const answer = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'n-5' }, spec }, token: emulator.state.kubeletToken('n-5') });
    expect(answer.status).toBe(201);
    expect(answer.body.spec).toEqual({ ...spec, taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
  });
});

describe('kube emulator: pod CIDR writes as kube-apiserver 1.32', () => {
  let emulator: KubeEmulator;
  beforeAll(async () => {
    emulator = await startKubeEmulator();
  });
  afterAll(async () => {
    await emulator.close();
  });

  // k8s pkg/apis/core/v1/conversion.go (podCIDR wins, fills podCIDRs) and pkg/apis/core/validation
  // `ValidateNode` / `ValidateNodeUpdate` (one CIDR per family; a set list never changes).
  it.each(['diff.probe-dual.json', 'diff.probe-dual6.json', 'diff.probe-two4.json', 'diff.probe-noncanon.json', 'diff.probe-mismatch.json', 'diff.probe-single.json', 'diff.pod-cidr-change.json'])(
    '%s',
    async (file) => {
      const { request, real } = recorded(file) as { request: JsonObject; real: JsonObject };
      const name = String(request.path).split('/').pop() ?? '';
      const before: JsonObject = file === 'diff.pod-cidr-change.json' ? { podCIDR: '10.244.250.0/24', podCIDRs: ['10.244.250.0/24'] } : {};
      const created = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name }, spec: { ...before, providerID: 'aws:///us-east-1a/i-0aaaaaaaaaaaaaaaa' } }, userAgent: DRIVER_UA });
      expect(created.status).toBe(201);
      const answer = await call(emulator, { method: 'PATCH', path: String(request.path), body: request.body, contentType: String(request.contentType), userAgent: DRIVER_UA });
      if (real.kind === 'Status') {
        expect(answer.body).toEqual(real);
      } else {
        expect(answer.status).toBe(200);
        expect(stable(answer.body.spec ?? null)).toEqual(stable(real.spec ?? null));
        expect(stable(obj(answer.body.metadata).managedFields ?? null)).toEqual(stable(obj(real.metadata).managedFields ?? null));
      }
    },
  );
});

describe('kube emulator: other answers as kube-apiserver 1.32', () => {
  let emulator: KubeEmulator;
  beforeAll(async () => {
    emulator = await startKubeEmulator();
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    emulator.state.setFailure(null);
    for (const n of emulator.state.nodes()) await emulator.state.deleteNode(String(obj(n.metadata).name), { admit: false });
  });

  it('lists nodes whose items carry no apiVersion or kind (the NodeList says what they are)', async () => {
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'l-1' } } });
    const list = await call(emulator, { method: 'GET', path: '/api/v1/nodes' });
    expect(list.body).toMatchObject({ kind: 'NodeList', apiVersion: 'v1' });
    const [item] = list.body.items as JsonObject[];
    expect(item).not.toHaveProperty('apiVersion');
    expect(item).not.toHaveProperty('kind');
    expect(obj(item?.metadata).name).toBe('l-1');
  });

  // k8s pkg/apis/core/validation/events.go `legacyValidateEvent`; the NamespaceLifecycle plugin (404).
  it.each(['diff.event-namespace-kube-system.json', 'diff.event-namespace-podroute.json', 'diff.event-eventtime-no-instance.json', 'diff.event-no-involved.json', 'diff.event-bad-type.json'])(
    '%s',
    async (file) => {
      const { request, real } = recorded(file) as { request: JsonObject; real: JsonObject };
      const answer = await call(emulator, { method: String(request.method), path: String(request.path), body: request.body, userAgent: DRIVER_UA });
      expect(stable(answer.body)).toEqual(stable(real));
      expect(answer.status).toBe(real.kind === 'Status' ? real.code : 201);
    },
  );

  it('answers 409 AlreadyExists to a second Event of the same name (apimachinery `NewAlreadyExists`)', async () => {
    const body = { metadata: { name: 'same.1' }, involvedObject: { kind: 'Node', name: 'n' }, reason: 'R', message: 'm', type: 'Warning' };
    expect((await call(emulator, { method: 'POST', path: '/api/v1/namespaces/default/events', body })).status).toBe(201);
    const again = await call(emulator, { method: 'POST', path: '/api/v1/namespaces/default/events', body });
    expect(again).toEqual({
      status: 409,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'events "same.1" already exists', reason: 'AlreadyExists', details: { name: 'same.1', kind: 'events' }, code: 409 },
    });
  });

  it('records the writer as manager from fieldManager, else the User-Agent, else unknown (apiserver handlers `prefixFromUserAgent`)', async () => {
    const stored = recorded('event-as-stored.json');
    const core = obj(stored.coreV1);
    const body = { apiVersion: 'v1', kind: 'Event', ...core, metadata: { name: obj(core.metadata).name, namespace: 'default' } };
    const answer = await call(emulator, { method: 'POST', path: '/api/v1/namespaces/default/events', body });
    expect(stable(answer.body)).toEqual(stable({ kind: 'Event', apiVersion: 'v1', ...core }));
    const managers = async (request: Request) => {
      const node = await call(emulator, request);
      return (obj(node.body.metadata).managedFields as JsonObject[]).map((e) => e.manager);
    };
    const create = { method: 'POST', body: { metadata: { name: 'm-1' }, spec: { providerID: 'aws:///us-east-1a/i-0bbbbbbbbbbbbbbbb' } } };
    expect(await managers({ ...create, path: '/api/v1/nodes?fieldManager=podroute', userAgent: 'podroute/0.1.0' })).toEqual(['podroute']);
    const patch = { method: 'PATCH', path: '/api/v1/nodes/m-1', body: { metadata: { labels: { a: 'b' } } }, contentType: 'application/merge-patch+json' };
    expect(await managers({ ...patch, userAgent: 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc' })).toEqual(['podroute', 'kubectl']);
  });

  it.each<[string, { code?: number; reason?: string; message?: string }]>([
    ['delete-refused-later-code403.json', { code: 403, message: 'node deletion refused by policy (kube-real deny webhook)' }],
    ['delete-refused-later-nocode.json', { message: 'node deletion refused by policy (kube-real deny webhook)' }],
    ['delete-refused-later-reason.json', { code: 403, reason: 'Forbidden', message: 'node deletion refused by policy (kube-real deny webhook)' }],
  ])('a later webhook refusing a DELETE answers its own code and reason, no details (%s; apiserver webhook errors `ToStatusErr`)', async (file, denyDeleteStatus) => {
    const refusing = await startKubeEmulator({ denyDeletes: 1, denyDeleteStatus });
    try {
      await call(refusing, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'ip-10-0-1-23.ec2.internal' } } });
      const answer = await call(refusing, { method: 'DELETE', path: '/api/v1/nodes/ip-10-0-1-23.ec2.internal' });
      const real = obj(recorded(file).real);
      expect(answer).toEqual({ status: real.code, body: real });
      expect(refusing.state.getNode('ip-10-0-1-23.ec2.internal')).toBeDefined();
    } finally {
      await refusing.close();
    }
  });

  // apiserver endpoints/handlers `patchResource`: a conflict is retried against the latest object
  // unless the patch carries a resourceVersion, a precondition the server keeps.
  it.each<[string, JsonObject, number]>([
    ['without a resourceVersion goes through', { metadata: { labels: { x: '1' } } }, 200],
    ['with a stale resourceVersion is 409', { metadata: { resourceVersion: '1', labels: { x: '2' } } }, 409],
  ])('a patch %s when the server meets a conflict', async (_what, body, code) => {
    await call(emulator, { method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'p-1' } } });
    emulator.state.setFailure({ kind: 'error', code: 409, times: 1, match: 'PATCH /api/v1/nodes/{name}' });
    const answer = await call(emulator, { method: 'PATCH', path: '/api/v1/nodes/p-1', body, contentType: 'application/merge-patch+json' });
    expect(answer.status).toBe(code);
  });
});

describe('kube emulator: the sandbox kubelet-shaped node passes the real rules', () => {
  it('carries no server-set fields nor restricted labels, and its own kubelet may create it', async () => {
    const { kubeletNode } = await import('../../infra/local/kube/kubelet-node.ts');
    const emulator = await startKubeEmulator();
    try {
      const name = 'ip-10-0-1-40.ec2.internal';
      const body = kubeletNode({ name, instanceId: 'i-0abc0000000000040', zone: 'us-east-1a', privateIp: '10.0.1.40', index: 40 });
      const meta = obj(body.metadata);
      for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields']) expect(meta).not.toHaveProperty(field);
      const answer = await call(emulator, { method: 'POST', path: '/api/v1/nodes', body, token: emulator.state.kubeletToken(name), userAgent: 'kubelet/v1.31.7 (linux/amd64) kubernetes/473151a' });
      expect(answer.status).toBe(201);
      expect((obj(answer.body.metadata).managedFields as JsonObject[]).map((e) => e.manager)).toEqual(['kubelet']);
    } finally {
      await emulator.close();
    }
  });
});
