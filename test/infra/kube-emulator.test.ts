import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiException, CoreV1Api, type V1Node, EventsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startKubeEmulator, type KubeEmulator, type WebhookTarget } from '../../infra/local/kube/index.ts';
import { DEFAULT_CONTINUE_TTL_MS } from '../../infra/local/kube/emulator.ts';
import { startAdmissionWebhook, type AdmissionWebhook, type ReviewRequest } from '../support/admission-webhook.ts';

function clientFor(emulator: KubeEmulator, token = emulator.token): CoreV1Api {
  const kc = new KubeConfig();
  const options = emulator.kubeConfig();
  kc.loadFromOptions({ ...options, users: [{ name: 'podroute', token }] });
  return kc.makeApiClient(CoreV1Api);
}

function node(name: string): V1Node {
  const t = new Date('2026-01-01T00:00:00Z');
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { pool: name.startsWith('gpu') ? 'gpu' : 'general' } },
    spec: { providerID: `aws:///us-east-1a/i-0${name.replace(/[^0-9a-f]/g, '').padEnd(16, 'a')}` },
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: t, lastTransitionTime: t },
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'ok', lastHeartbeatTime: t, lastTransitionTime: t },
      ],
    },
  };
}

async function apiError(promise: Promise<unknown>): Promise<ApiException<unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiException) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

function bodyOf(error: ApiException<unknown>): Record<string, unknown> {
  const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
  if (typeof body !== 'object' || body === null) throw new Error('no Status body');
  return body as Record<string, unknown>;
}

describe('kube emulator with the real @kubernetes/client-node', () => {
  let emulator: KubeEmulator;
  let api: CoreV1Api;

  beforeAll(async () => {
    emulator = await startKubeEmulator({ token: 'test-token' });
    api = clientFor(emulator);
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    emulator.state.setFailure(null);
    for (const n of emulator.state.nodes()) await emulator.state.deleteNode((n.metadata as { name: string }).name);
  });

  it('lists nodes page by page with continue tokens and a resourceVersion', async () => {
    for (const name of ['n-05', 'n-01', 'n-03', 'n-02', 'n-04']) await api.createNode({ body: node(name) });
    const names: string[] = [];
    let pages = 0;
    let next: string | undefined;
    do {
      const page = await api.listNode({ limit: 2, _continue: next });
      pages += 1;
      expect(page.metadata?.resourceVersion).toMatch(/^\d+$/);
      names.push(...page.items.map((n) => n.metadata?.name ?? ''));
      next = page.metadata?._continue || undefined;
    } while (next);
    expect(pages).toBe(3);
    expect(names).toEqual(['n-01', 'n-02', 'n-03', 'n-04', 'n-05']);
    expect(emulator.stats.get('GET /api/v1/nodes')).toBeGreaterThanOrEqual(3);
  });

  it('filters by labelSelector', async () => {
    await api.createNode({ body: node('gpu-1') });
    await api.createNode({ body: node('cpu-1') });
    const list = await api.listNode({ labelSelector: 'pool=gpu' });
    expect(list.items.map((n) => n.metadata?.name)).toEqual(['gpu-1']);
  });

  it('reads one node and answers 404 with a NotFound Status', async () => {
    await api.createNode({ body: node('a1') });
    const got = await api.readNode({ name: 'a1' });
    expect(got.metadata?.uid).toBeTruthy();
    expect(got.spec?.providerID).toContain('i-0');
    const error = await apiError(api.readNode({ name: 'missing' }));
    expect(error.code).toBe(404);
    expect(bodyOf(error)).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  });

  it('rejects a request without the right bearer token with 401', async () => {
    const error = await apiError(clientFor(emulator, 'wrong').listNode());
    expect(error.code).toBe(401);
  });

  it('merges conditions by type on a strategic merge patch of nodes/status', async () => {
    const created = await api.createNode({ body: node('smp') });
    const patched = await api.patchNodeStatus(
      {
        name: 'smp',
        body: { status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'm', lastTransitionTime: '2026-02-01T00:00:00Z' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const types = (patched.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`);
    // A condition new to the list comes first (strategicpatch `mergeSortedSlice`; recorded:
    // node-after-network-unavailable.json).
    expect(types).toEqual(['NetworkUnavailable=False', 'Ready=True', 'MemoryPressure=False']);
    expect(Number(patched.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));

    const again = await api.patchNodeStatus(
      { name: 'smp', body: { status: { conditions: [{ type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const condition = again.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
    expect(condition?.status).toBe('True');
    expect(condition?.message).toBe('m'); // merged into the existing item, not replaced
    expect(again.status?.conditions).toHaveLength(3);
  });

  it('replaces lists on a merge patch and ignores spec changes through nodes/status', async () => {
    await api.createNode({ body: node('mp') });
    const patched = await api.patchNodeStatus(
      { name: 'mp', body: { spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'False' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.status?.conditions?.map((c) => c.type)).toEqual(['Ready']);
    expect(patched.spec?.unschedulable).toBeUndefined();
  });

  it('applies a JSON patch (add, replace, remove, test) to the node', async () => {
    await api.createNode({ body: node('jp') });
    const patched = await api.patchNode(
      {
        name: 'jp',
        body: [
          { op: 'test', path: '/metadata/labels/pool', value: 'general' },
          { op: 'add', path: '/spec/podCIDR', value: '10.0.1.0/24' },
          { op: 'add', path: '/spec/podCIDRs', value: ['10.0.1.0/24'] },
          { op: 'replace', path: '/metadata/labels/pool', value: 'edge' },
          { op: 'add', path: '/metadata/labels/a~1b', value: 'x' },
          { op: 'remove', path: '/metadata/labels/a~1b' },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect(patched.spec?.podCIDR).toBe('10.0.1.0/24');
    expect(patched.metadata?.labels).toEqual({ pool: 'edge' });

    const failed = await apiError(
      api.patchNode({ name: 'jp', body: [{ op: 'test', path: '/metadata/labels/pool', value: 'nope' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)),
    );
    expect(failed.code).toBe(422);
  });

  it('forbids changing spec.podCIDR once set with 422 Invalid', async () => {
    await api.createNode({ body: node('cidr') });
    const smp = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
    await api.patchNode({ name: 'cidr', body: { spec: { podCIDR: '10.0.2.0/24', podCIDRs: ['10.0.2.0/24'] } } }, smp);
    const error = await apiError(api.patchNode({ name: 'cidr', body: { spec: { podCIDR: '10.0.3.0/24' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    expect(error.code).toBe(422);
    expect(bodyOf(error)).toMatchObject({ reason: 'Invalid', code: 422 });
    expect(emulator.state.getNode('cidr')?.spec).toMatchObject({ podCIDR: '10.0.2.0/24' });
  });

  // k8s pkg/apis/core/validation `ValidateNode` parses each pod CIDR with k8s.io/utils/net
  // ParseCIDRSloppy (leading zeros allowed, read as decimal) in 1.32; strict parsing is KEP-4858.
  it.each([
    ['010.244.1.0/24', true],
    ['10.244.001.0/24', true],
    ['0010.244.1.0/24', true],
    ['10.244.1.0/24', true],
    ['10.244.1.7/24', true],
    ['256.244.1.0/24', false],
    ['10.244.1.0/33', false],
    ['10.244.1/24', false],
    ['0x0a.244.1.0/24', false],
    ['10.244.1.0/024', true],
  ])('pod CIDR %s at create: accepted %s, stored as written', async (cidr, accepted) => {
    const name = `sloppy-${cidr.replace(/[^0-9a-z]/g, '-')}`;
    const created = api.createNode({ body: { ...node(name), spec: { ...node(name).spec, podCIDR: cidr, podCIDRs: [cidr] } } });
    if (accepted) {
      await created;
      expect(emulator.state.getNode(name)?.spec).toMatchObject({ podCIDR: cidr, podCIDRs: [cidr] });
    } else {
      const error = await apiError(created);
      expect(bodyOf(error)).toMatchObject({ reason: 'Invalid', code: 422 });
      expect(emulator.state.getNode(name)).toBeUndefined();
    }
  });

  it('answers 415 for an unsupported patch type and 400 for a bad body', async () => {
    await api.createNode({ body: node('types') });
    const unsupported = await apiError(api.patchNode({ name: 'types', body: { spec: {} } }, setHeaderOptions('Content-Type', 'application/apply-patch+yaml')));
    expect(unsupported.code).toBe(415);
    const bad = await apiError(api.patchNode({ name: 'types', body: { spec: {} } }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)));
    expect(bad.code).toBe(400);
  });

  it('answers 409 Conflict on a stale resourceVersion (PUT status and patch precondition)', async () => {
    const created = await api.createNode({ body: node('rv') });
    const stale = created.metadata?.resourceVersion ?? '';
    await api.patchNodeStatus({ name: 'rv', body: { status: { phase: 'Running' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const put = await apiError(api.replaceNodeStatus({ name: 'rv', body: { ...created, metadata: { ...created.metadata, resourceVersion: stale } } }));
    expect(put.code).toBe(409);
    expect(bodyOf(put)).toMatchObject({ reason: 'Conflict' });
    const viaPatch = await apiError(
      api.patchNode({ name: 'rv', body: { metadata: { resourceVersion: stale, labels: { x: 'y' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
    );
    expect(viaPatch.code).toBe(409);

    const fresh = await api.readNode({ name: 'rv' });
    const ok = await api.replaceNodeStatus({ name: 'rv', body: fresh });
    expect(Number(ok.metadata?.resourceVersion)).toBeGreaterThan(Number(fresh.metadata?.resourceVersion));
  });

  it('stores core and events.k8s.io events', async () => {
    await api.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'n.1', namespace: 'default' },
        involvedObject: { kind: 'Node', name: 'n', uid: 'u' },
        reason: 'Test',
        message: 'hello',
        type: 'Warning',
        source: { component: 'podroute' },
      },
    });
    const kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeConfig());
    await kc.makeApiClient(EventsV1Api).createNamespacedEvent({
      namespace: 'kube-system',
      body: { metadata: { generateName: 'ev-' }, eventTime: new Date('2026-01-01T00:00:00Z'), reason: 'Other', action: 'Act', reportingController: 'podroute', reportingInstance: 'x', type: 'Normal' },
    });
    const events = emulator.state.events();
    expect(events.map((e) => [e.apiVersion, (e.metadata as { namespace: string }).namespace, e.reason])).toEqual([
      ['v1', 'default', 'Test'],
      ['events.k8s.io/v1', 'kube-system', 'Other'],
    ]);
    const listed = await api.listNamespacedEvent({ namespace: 'default' });
    expect(listed.items.map((e) => e.message)).toEqual(['hello']);
  });

  it('fails the next requests on demand (500 and an empty list)', async () => {
    await api.createNode({ body: node('f1') });
    emulator.state.setFailure({ kind: 'error', code: 500, times: 1 });
    expect((await apiError(api.listNode())).code).toBe(500);
    expect((await api.listNode()).items).toHaveLength(1);
    emulator.state.setFailure({ kind: 'emptyList', times: 1 });
    expect((await api.listNode()).items).toHaveLength(0);
    expect((await api.listNode()).items).toHaveLength(1);
  });
});

describe('kube emulator: continue tokens expire', () => {
  // The API server's answer (apiserver storage/etcd3 handleCompactedErrorForPaging + apimachinery
  // NewResourceExpired): 410, reason Expired, a new inconsistent continue token in the metadata.
  const EXPIRED = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: { continue: expect.any(String) },
    status: 'Failure',
    message:
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
      'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
      'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    reason: 'Expired',
    code: 410,
  };
  let now = 0;
  let emulator: KubeEmulator;
  let api: CoreV1Api;
  afterAll(async () => {
    await emulator?.close();
  });

  it('answers a token older than continueTtlMs with 410 and the API server’s Status, whose token goes on (inconsistently)', async () => {
    emulator = await startKubeEmulator({ now: () => now, continueTtlMs: 1000 });
    api = clientFor(emulator);
    for (const name of ['n1', 'n2', 'n3', 'n4']) await emulator.state.addNode(node(name));
    const first = await api.listNode({ limit: 2 });
    const token = first.metadata?._continue;
    expect(token).toEqual(expect.any(String));
    now += 1000;
    // Still alive at exactly the TTL.
    expect((await api.listNode({ limit: 2, _continue: token })).items.map((n) => n.metadata?.name)).toEqual(['n3', 'n4']);
    now += 1;
    await emulator.state.addNode(node('n5'));
    const error = await apiError(api.listNode({ limit: 2, _continue: token }));
    expect(error.code).toBe(410);
    const body = bodyOf(error);
    expect(body).toEqual(EXPIRED);
    // The inconsistent token resumes after n2 at the latest version: n5, created since, shows up.
    const resumed = await api.listNode({ _continue: (body.metadata as { continue: string }).continue });
    expect(resumed.items.map((n) => n.metadata?.name)).toEqual(['n3', 'n4', 'n5']);
  });

  it('keeps a token 5 minutes by default (the kube-apiserver compaction interval)', async () => {
    expect(DEFAULT_CONTINUE_TTL_MS).toBe(5 * 60_000);
    const local = await startKubeEmulator({ now: () => now });
    try {
      const client = clientFor(local);
      for (const name of ['a1', 'a2', 'a3']) await local.state.addNode(node(name));
      const token = (await client.listNode({ limit: 1 })).metadata?._continue;
      now += 5 * 60_000 - 1;
      expect((await client.listNode({ limit: 1, _continue: token })).items).toHaveLength(1);
      now += 2;
      expect((await apiError(client.listNode({ limit: 1, _continue: token }))).code).toBe(410);
      // A fresh list is never expired.
      expect((await client.listNode()).items).toHaveLength(3);
    } finally {
      await local.close();
    }
  });

  it('expires the next continue requests on demand (failure kind expireContinue)', async () => {
    const local = await startKubeEmulator();
    try {
      const client = clientFor(local);
      for (const name of ['b1', 'b2', 'b3']) await local.state.addNode(node(name));
      local.state.setFailure({ kind: 'expireContinue', times: 1 });
      // A request without a token is not affected and does not use the failure up.
      const token = (await client.listNode({ limit: 1 })).metadata?._continue;
      expect(bodyOf(await apiError(client.listNode({ limit: 1, _continue: token })))).toEqual(EXPIRED);
      expect((await client.listNode({ limit: 5, _continue: token })).items.map((n) => n.metadata?.name)).toEqual(['b2', 'b3']);
    } finally {
      await local.close();
    }
  });
});

describe('kube emulator admission webhooks', () => {
  let webhook: AdmissionWebhook;
  let reviews: ReviewRequest[];
  let emulator: KubeEmulator;
  let api: CoreV1Api;
  let hook: WebhookTarget;

  beforeAll(async () => {
    webhook = await startAdmissionWebhook(({ uid, name, operation }) => {
      if (name === 'denied') return { uid, allowed: false, status: { code: 403, message: 'not welcome' } };
      if (name === 'broken') return { uid: 'wrong-uid', allowed: false };
      if (name === 'busy' && operation === 'DELETE') {
        // A controller writes the node while its DELETE is being admitted.
        emulator.state.putRawNode({ ...node('busy'), status: { conditions: [{ type: 'NetworkUnavailable', status: 'False' }] } });
      } else if (operation === 'CREATE') {
        const patch = [{ op: 'add', path: '/spec/podCIDR', value: '10.9.0.0/24' }];
        return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
      }
      return { uid, allowed: true };
    });
    reviews = webhook.reviews;
    hook = webhook.target;
    emulator = await startKubeEmulator({ onNodeCreate: hook, onNodeDelete: hook });
    api = clientFor(emulator);
  });
  afterAll(async () => {
    await emulator.close();
    await webhook.close();
  });

  it('sends an AdmissionReview on CREATE and applies the returned JSONPatch', async () => {
    const created = await api.createNode({ body: node('hooked') });
    expect(created.spec?.podCIDR).toBe('10.9.0.0/24');
    const review = reviews.find((r) => r.name === 'hooked' && r.operation === 'CREATE');
    expect(review).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'Node' },
      resource: { group: '', version: 'v1', resource: 'nodes' },
      operation: 'CREATE',
      object: { metadata: { name: 'hooked' } },
    });
    expect(typeof review?.uid).toBe('string');
  });

  it('rejects a create the webhook denies, and ignores a broken webhook', async () => {
    const error = await apiError(api.createNode({ body: node('denied') }));
    expect(error.code).toBe(403);
    expect(emulator.state.getNode('denied')).toBeUndefined();
    await api.createNode({ body: node('broken') });
    expect(emulator.state.getNode('broken')).toBeDefined();
    expect(emulator.state.webhookCalls().find((c) => c.name === 'broken')).toMatchObject({ ok: false });
  });

  it('sends DELETE with the old object, also through the control API', async () => {
    await emulator.state.addNode(node('bye'));
    await api.deleteNode({ name: 'bye' });
    const review = reviews.find((r) => r.name === 'bye' && r.operation === 'DELETE');
    expect(review).toMatchObject({ operation: 'DELETE', object: null, oldObject: { metadata: { name: 'bye' }, spec: { podCIDR: '10.9.0.0/24' } } });
    expect(emulator.state.getNode('bye')).toBeUndefined();
    expect(emulator.stats.get('WEBHOOK DELETE')).toBe(1);
  });

  it('denyDeletes 1: refuses an admitted DELETE as a later validating webhook does (its Status, 400 without a code) and keeps the node', async () => {
    const denying = await startKubeEmulator({ onNodeCreate: hook, onNodeDelete: hook, denyDeletes: 1 });
    try {
      await denying.state.addNode(node('kept'), { admit: false });
      const error = await apiError(clientFor(denying).deleteNode({ name: 'kept' }));
      expect(error.code).toBe(400);
      // apiserver admission/plugin/webhook/errors ToStatusErr (recorded: delete-refused-later-nocode.json)
      expect(bodyOf(error)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'admission webhook "deny-deletes.podroute.test" denied the request: node deletion refused by policy (emulator denyDeletes)',
        code: 400,
      });
      // podroute's webhook saw and allowed the DELETE first; the node is still there.
      expect(denying.state.webhookCalls()).toEqual([{ operation: 'DELETE', name: 'kept', ok: true, allowed: true }]);
      expect(denying.state.getNode('kept')).toBeDefined();
      expect(denying.state.refusedDeletes()).toEqual(['kept']);
    } finally {
      await denying.close();
    }
  });

  it('denyDeletes share: a seeded draw, the same deletes refused on every run, some kept and some deleted', async () => {
    const run = async (seed: number) => {
      const local = await startKubeEmulator({ onNodeDelete: hook, denyDeletes: 0.5, seed });
      try {
        const names = Array.from({ length: 20 }, (_, i) => `d${i}`);
        for (const name of names) await local.state.addNode(node(name), { admit: false });
        for (const name of names) await clientFor(local).deleteNode({ name }).catch(() => undefined);
        return { refused: local.state.refusedDeletes(), left: local.state.nodes().map((n) => (n.metadata as { name: string }).name).sort() };
      } finally {
        await local.close();
      }
    };
    const a = await run(7);
    const b = await run(7);
    expect(a).toEqual(b);
    expect(a.refused.length).toBeGreaterThan(0);
    expect(a.refused.length).toBeLessThan(20);
    expect(a.left).toEqual([...a.refused].sort());
  });

  it('deletes the latest version of a node written while its DELETE was admitted', async () => {
    await emulator.state.addNode(node('busy'), { admit: false });
    const status = await api.deleteNode({ name: 'busy' });
    expect(status).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(emulator.state.getNode('busy')).toBeUndefined();
  });
});
