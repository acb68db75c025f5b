import { readFileSync } from 'node:fs';
import { routesText } from '../support/plane.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { kubeletNode } from '../../infra/local/kube/kubelet-node.ts';
import { KubeApiError, KubeNodes, NodeNotFoundError, PodCidrConflictError } from '../../lib/kube/kube-nodes.ts';

type KubeNodesOptions = NonNullable<ConstructorParameters<typeof KubeNodes>[1]>;
type MalformedNode = Parameters<NonNullable<KubeNodesOptions['onMalformedNode']>>[0];
type ListRestart = Parameters<NonNullable<KubeNodesOptions['onListRestart']>>[0];
import { InvalidInputError, type PodrouteError } from '../../lib/errors.ts';
import { MAX_RETRY_AFTER_MS, retryAfterMs } from '../../lib/kube/kube-http.ts';

const NOW = new Date('2026-03-04T05:06:07.890Z');

function wireNode(name: string, extra: { spec?: Record<string, unknown> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { providerID: 'aws:///us-east-1a/i-0123456789abcdef0', ...extra.spec },
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'ok', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    },
  };
}

/** The node with a NetworkUnavailable condition (False, as upstream's route controller writes it) first. */
function withNetworkUnavailable<T extends ReturnType<typeof wireNode>>(node: T): T {
  const networkUnavailable = { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route', lastHeartbeatTime: '2026-01-02T00:00:00Z', lastTransitionTime: '2026-01-02T00:00:00Z' };
  return { ...node, status: { ...node.status, conditions: [networkUnavailable, ...node.status.conditions] } };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('KubeNodes against the emulator with the real client', () => {
  let emulator: KubeEmulator;
  let kc: KubeConfig;
  let malformed: MalformedNode[];
  let eventErrors: PodrouteError[];
  let kube: KubeNodes;
  let restarts: ListRestart[];

  beforeAll(async () => {
    emulator = await startKubeEmulator();
    kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeConfig(emulator.podrouteToken));
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    emulator.state.setFailure(null);
    for (const n of emulator.state.nodes()) await emulator.state.deleteNode((n.metadata as { name: string }).name);
    emulator.stats.reset();
    malformed = [];
    eventErrors = [];
    restarts = [];
    kube = new KubeNodes(kc, {
      clock: () => NOW,
      onMalformedNode: (m) => malformed.push(m),
      onEventError: (e) => eventErrors.push(e),
      onListRestart: (r) => restarts.push(r),
      conflictBackoffMs: 0,
      pageSize: 3,
    });
  });

  it('lists every node across pages', async () => {
    for (let i = 0; i < 8; i++) await emulator.state.addNode(withNetworkUnavailable(wireNode(`node-${i}`)));
    const nodes = await kube.listNodes();
    expect(nodes.map((n) => n.metadata.name)).toEqual(Array.from({ length: 8 }, (_, i) => `node-${i}`));
    expect(emulator.stats.get('GET /api/v1/nodes')).toBe(3);
    // timestamps stay as the server sent them (no Date conversion)
    expect(nodes[0]?.status?.conditions?.[0]?.lastTransitionTime).toBe('2026-01-02T00:00:00Z');
  });

  it('keeps only the fields podroute reads of each listed node, also of a kubelet-sized one', async () => {
    const raw = kubeletNode({ name: 'ip-10-0-1-10.ec2.internal', instanceId: 'i-0123456789abcdef0', zone: 'us-east-1a', privateIp: '10.0.1.10', podCidrs: ['10.244.1.0/24'], networkUnavailable: 'False' });
    await emulator.state.addNode(raw);
    const stored = emulator.state.getNode('ip-10-0-1-10.ec2.internal') as { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> };
    expect(JSON.stringify(stored).length).toBeGreaterThan(8_000); // a real kube-apiserver stored 8.9 KB for such a node
    const expected = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: stored.metadata.name,
        uid: stored.metadata.uid,
        resourceVersion: stored.metadata.resourceVersion,
        labels: stored.metadata.labels,
        creationTimestamp: stored.metadata.creationTimestamp,
      },
      spec: { providerID: stored.spec.providerID, podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
      status: { conditions: stored.status.conditions },
    };
    const conditions = stored.status.conditions as Array<{ type: string; status: string; lastTransitionTime?: string }>;
    expect(conditions.length).toBeGreaterThan(1);
    const [listed] = await kube.listNodes();
    // A NodeList's items carry no apiVersion or kind (as a real kube-apiserver serves them), and a
    // listed node keeps of its conditions only NetworkUnavailable's status and transition time,
    // and no resourceVersion.
    const networkUnavailable = conditions.filter((c) => c.type === 'NetworkUnavailable').map(({ type, status, lastTransitionTime }) => ({ type, status, lastTransitionTime }));
    expect(networkUnavailable).toHaveLength(1);
    expect(networkUnavailable[0]?.lastTransitionTime).toEqual(expect.any(String));
    expect(listed).toEqual({
      metadata: { name: stored.metadata.name, uid: stored.metadata.uid, labels: stored.metadata.labels, creationTimestamp: stored.metadata.creationTimestamp },
      spec: expected.spec,
      status: { conditions: networkUnavailable },
    });
    expect(listed?.status?.conditions).toHaveLength(1);
    expect(await kube.getNode('ip-10-0-1-10.ec2.internal')).toEqual(expected);
    expect(JSON.stringify(listed).length).toBeLessThan(1_500);
  });

  it.each<[string, string[] | undefined, string[]]>([
    ['every label without keepLabels', undefined, ['kubernetes.io/hostname', 'node-role.example/pods', 'topology.kubernetes.io/zone']],
    ['none with an empty keepLabels (no node selector)', [], []],
    ['the selector\'s keys, also one the node lacks', ['node-role.example/pods', 'absent.example/key'], ['node-role.example/pods']],
  ])('keeps of a listed node\'s labels %s; a node read by name keeps them all', async (_case, keepLabels, kept) => {
    const labels = { 'kubernetes.io/hostname': 'labelled', 'node-role.example/pods': 'podroute', 'topology.kubernetes.io/zone': 'us-east-1a' };
    await emulator.state.addNode({ ...wireNode('labelled'), metadata: { name: 'labelled', labels } });
    const trimmed = new KubeNodes(kc, { pageSize: 3, ...(keepLabels ? { keepLabels } : {}) });
    const [listed] = await trimmed.listNodes();
    expect(Object.keys(listed?.metadata.labels ?? {}).sort()).toEqual(kept);
    for (const key of kept) expect(listed?.metadata.labels?.[key]).toBe(labels[key as keyof typeof labels]);
    expect((await trimmed.getNode('labelled')).metadata.labels).toEqual(labels);
  });

  it('keeps deletionTimestamp of a node being deleted', async () => {
    emulator.state.putRawNode({ ...wireNode('leaving'), metadata: { name: 'leaving', uid: 'u-1', deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: ['x'], managedFields: [{ manager: 'kubelet' }] } });
    const [listed] = await kube.listNodes();
    expect(listed?.metadata).toEqual({ name: 'leaving', uid: 'u-1', deletionTimestamp: '2026-01-02T00:00:00Z' });
  });

  it('starts the list over once when a continue token expires part-way (410), with no node twice', async () => {
    for (let i = 0; i < 8; i++) await emulator.state.addNode(wireNode(`node-${i}`));
    emulator.state.setFailure({ kind: 'expireContinue', times: 1 });
    const nodes = await kube.listNodes();
    expect(nodes.map((n) => n.metadata.name)).toEqual(Array.from({ length: 8 }, (_, i) => `node-${i}`));
    // page 1, page 2 answered 410, then pages 1, 2 and 3 again
    expect(emulator.stats.get('GET /api/v1/nodes')).toBe(5);
    expect(restarts).toEqual([{ resource: 'nodes', pagesDiscarded: 1, nodesDiscarded: 3, reason: expect.stringMatching(/HTTP 410: The provided continue parameter is too old/) }]);
  });

  it('fails with a retryable error when the token expires again after the restart', async () => {
    for (let i = 0; i < 8; i++) await emulator.state.addNode(wireNode(`node-${i}`));
    emulator.state.setFailure({ kind: 'expireContinue', times: 2 });
    const error = await rejection(kube.listNodes());
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBe(410);
    expect((error as KubeApiError).retryable).toBe(true);
    expect((error as KubeApiError).message).toMatch(/continue token expired again after a restart/);
    expect(restarts).toHaveLength(1);
    expect(emulator.stats.get('GET /api/v1/nodes')).toBe(4);
  });

  it('skips and reports a malformed node instead of failing the list', async () => {
    await emulator.state.addNode(wireNode('good-1'));
    await emulator.state.addNode(wireNode('good-2'));
    emulator.state.putRawNode({ ...wireNode('bad'), spec: { podCIDRs: 42 }, status: { conditions: [{ type: 'Ready', status: 7 }] } });
    const nodes = await kube.listNodes();
    expect(nodes.map((n) => n.metadata.name)).toEqual(['good-1', 'good-2']);
    expect(malformed).toHaveLength(1);
    expect(malformed[0]?.name).toBe('bad');
  });

  it('still skips a listed node whose NetworkUnavailable condition is malformed, and reports it', async () => {
    await emulator.state.addNode(wireNode('good'));
    emulator.state.putRawNode({ ...wireNode('bad-condition'), status: { conditions: [{ type: 'NetworkUnavailable', status: 7 }] } });
    const nodes = await kube.listNodes();
    expect(nodes.map((n) => n.metadata.name)).toEqual(['good']);
    expect(malformed).toEqual([{ name: 'bad-condition', problem: expect.stringMatching(/^status\.conditions\.0\.status/) }]);
  });

  it('accepts a KubeConfig in the constructor and reads one node', async () => {
    await emulator.state.addNode(wireNode('one'));
    const node = await new KubeNodes(kc).getNode('one');
    expect(node.metadata.name).toBe('one');
    expect(node.metadata.uid).toBe(emulator.state.getNode('one')?.metadata && (emulator.state.getNode('one')?.metadata as { uid: string }).uid);
  });

  it('maps 404 on get to NodeNotFoundError', async () => {
    const error = await rejection(kube.getNode('ghost'));
    expect(error).toBeInstanceOf(NodeNotFoundError);
    expect((error as NodeNotFoundError).retryable).toBe(false);
  });

  it.each([
    { unavailable: true, status: 'True', reason: 'NoRouteCreated', message: 'RouteController failed to create a route' },
    { unavailable: false, status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' },
  ])('sets NetworkUnavailable=$status and touches nothing else', async ({ unavailable, status, reason, message }) => {
    await emulator.state.addNode(wireNode('net'));
    const before = emulator.state.getNode('net');
    expect(await kube.setNetworkUnavailable('net', unavailable, routesText(unavailable))).toBe('patched');
    const after = emulator.state.getNode('net');
    const conditions = (after?.status as { conditions: Record<string, unknown>[] }).conditions;
    expect(conditions.find((c) => c.type === 'NetworkUnavailable')).toEqual({
      type: 'NetworkUnavailable',
      status,
      reason,
      message,
      lastTransitionTime: '2026-03-04T05:06:07Z',
      lastHeartbeatTime: '2026-03-04T05:06:07Z',
    });
    expect(conditions.filter((c) => c.type !== 'NetworkUnavailable')).toEqual((before?.status as { conditions: unknown[] }).conditions);
    expect(after?.spec).toEqual(before?.spec);
    expect(emulator.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(1);
  });

  it('writes the reason and message it is given (a data plane without a route controller)', async () => {
    await emulator.state.addNode(wireNode('worded'));
    expect(await kube.setNetworkUnavailable('worded', false, { reason: 'PrefixDelegated', message: 'delegated' })).toBe('patched');
    const conditions = (emulator.state.getNode('worded')?.status as { conditions: Record<string, unknown>[] }).conditions;
    expect(conditions.find((c) => c.type === 'NetworkUnavailable')).toMatchObject({ status: 'False', reason: 'PrefixDelegated', message: 'delegated' });
  });

  it('flips an existing NetworkUnavailable condition in place', async () => {
    await emulator.state.addNode(wireNode('flip'));
    await kube.setNetworkUnavailable('flip', true, routesText(true));
    await kube.setNetworkUnavailable('flip', false, routesText(false));
    const conditions = (emulator.state.getNode('flip')?.status as { conditions: { type: string; status: string }[] }).conditions;
    expect(conditions.filter((c) => c.type === 'NetworkUnavailable').map((c) => c.status)).toEqual(['False']);
    expect(conditions).toHaveLength(3);
  });

  it('treats 404 on a patch as a node that is gone', async () => {
    expect(await kube.setNetworkUnavailable('ghost', false, routesText(false))).toBe('gone');
    expect(await kube.updatePodCidr({ metadata: { name: 'ghost' } }, '10.1.0.0/24')).toBe('gone');
  });

  it('leaves a conflict on its patches (no resourceVersion) to the API server, which retries it (apiserver handlers `patchResource`)', async () => {
    await emulator.state.addNode(wireNode('busy'));
    emulator.state.setFailure({ kind: 'error', code: 409, times: 2, match: 'PATCH /api/v1/nodes/{name}/status' });
    expect(await kube.setNetworkUnavailable('busy', false, routesText(false))).toBe('patched');
    expect(emulator.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(1);
  });

  it.each([
    { code: 429, retryable: true },
    { code: 500, retryable: true },
    { code: 503, retryable: true },
    { code: 403, retryable: false },
    { code: 400, retryable: false },
  ])('maps HTTP $code to retryable=$retryable', async ({ code, retryable }) => {
    emulator.state.setFailure({ kind: 'error', code });
    const error = await rejection(kube.listNodes());
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBe(code);
    expect((error as KubeApiError).retryable).toBe(retryable);
    expect((error as KubeApiError).cause).toBeDefined();
  });

  it('explains 403 in terms of RBAC verb and resource', async () => {
    await emulator.state.addNode(wireNode('rbac'));
    emulator.state.setFailure({ kind: 'error', code: 403 });
    const error = await rejection(kube.setNetworkUnavailable('rbac', true, routesText(true)));
    expect((error as KubeApiError).message).toMatch(/RBAC.*"patch".*"nodes\/status"/);
  });

  it('maps 401 (bad token) to a non-retryable error', async () => {
    const bad = new KubeConfig();
    const options = emulator.kubeConfig();
    bad.loadFromOptions({ ...options, users: [{ name: 'podroute', token: 'nope' }] });
    const error = await rejection(new KubeNodes(bad).listNodes());
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBe(401);
    expect((error as KubeApiError).retryable).toBe(false);
  });

  it('maps an unreachable server to a retryable error', async () => {
    const down = new KubeConfig();
    const options = emulator.kubeConfig();
    down.loadFromOptions({ ...options, clusters: [{ ...options.clusters[0], name: 'podroute-local', server: 'https://127.0.0.1:1' }] });
    const error = await rejection(new KubeNodes(down).listNodes());
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBeUndefined();
    expect((error as KubeApiError).retryable).toBe(true);
  });

  it('sets pod CIDRs on a node without them', async () => {
    await emulator.state.addNode(wireNode('alloc'));
    const node = await kube.getNode('alloc');
    expect(await kube.updatePodCidr(node, ['10.2.0.0/24', 'fd00:2::/80'])).toBe('patched');
    expect(emulator.state.getNode('alloc')?.spec).toMatchObject({ podCIDR: '10.2.0.0/24', podCIDRs: ['10.2.0.0/24', 'fd00:2::/80'] });
    expect(await kube.updatePodCidr(await kube.getNode('alloc'), ['10.2.0.0/24', 'fd00:2::/80'])).toBe('unchanged');
  });

  it('refuses to overwrite different pod CIDRs, from our copy or from a fresher server state', async () => {
    await emulator.state.addNode(wireNode('taken', { spec: { podCIDR: '10.3.0.0/24', podCIDRs: ['10.3.0.0/24'] } }));
    const node = await kube.getNode('taken');
    const error = await rejection(kube.updatePodCidr(node, '10.4.0.0/24'));
    expect(error).toBeInstanceOf(PodCidrConflictError);
    expect((error as PodCidrConflictError).existing).toEqual(['10.3.0.0/24']);
    expect(emulator.stats.get('PATCH /api/v1/nodes/{name}')).toBe(0);

    // A stale copy without pod CIDRs: the API answers 422 and the adapter reports the conflict.
    const stale = { metadata: { name: 'taken' } };
    const raced = await rejection(kube.updatePodCidr(stale, '10.4.0.0/24'));
    expect(raced).toBeInstanceOf(PodCidrConflictError);
    expect(emulator.state.getNode('taken')?.spec).toMatchObject({ podCIDR: '10.3.0.0/24' });
    // The same CIDRs from a stale copy: a no-op patch the API accepts.
    expect(await kube.updatePodCidr(stale, '10.3.0.0/24')).toBe('patched');
    expect(emulator.state.getNode('taken')?.spec).toMatchObject({ podCIDR: '10.3.0.0/24', podCIDRs: ['10.3.0.0/24'] });
  });

  it('writes a Warning event on the node', async () => {
    await emulator.state.addNode(wireNode('warned'));
    await kube.listNodes();
    expect(await kube.warn('warned', 'CloudCIDRAllocatorMismatch', 'cidr differs')).toBe(true);
    const events = emulator.state.events();
    const event = events[events.length - 1];
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'default' },
      involvedObject: { kind: 'Node', name: 'warned', uid: (emulator.state.getNode('warned')?.metadata as { uid: string }).uid },
      reason: 'CloudCIDRAllocatorMismatch',
      message: 'cidr differs',
      type: 'Warning',
      count: 1,
      source: { component: 'podroute' },
    });
    // metav1.Time is stored and served in whole seconds (recorded: event-as-stored.json).
    expect(new Date(String(event?.firstTimestamp)).getTime()).toBe(Math.floor(NOW.getTime() / 1000) * 1000);
    expect(new Date(String(event?.lastTimestamp)).getTime()).toBe(Math.floor(NOW.getTime() / 1000) * 1000);
    expect((event?.metadata as { name: string }).name).toMatch(/^warned\.[0-9a-f]+$/);
  });

  it('reports, never throws, when an event cannot be written', async () => {
    emulator.state.setFailure({ kind: 'error', code: 500, match: 'POST /api/v1/namespaces/{namespace}/events' });
    expect(await kube.warn('n', 'R', 'm')).toBe(false);
    expect(eventErrors).toHaveLength(1);
    expect(eventErrors[0]?.retryable).toBe(true);
  });
});

describe('KubeNodes speaks to the API server as the real one expects', () => {
  let emulator: KubeEmulator;
  let kc: KubeConfig;
  let waits: number[];
  let clock: Date;
  let eventErrors: PodrouteError[];
  const kubeWith = (options: KubeNodesOptions = {}) =>
    new KubeNodes(kc, { clock: () => clock, sleep: async (ms) => void waits.push(ms), onEventError: (e) => eventErrors.push(e), conflictBackoffMs: 0, ...options });

  beforeAll(async () => {
    emulator = await startKubeEmulator();
    kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeConfig(emulator.podrouteToken));
  });
  afterAll(async () => {
    await emulator.close();
  });
  beforeEach(async () => {
    emulator.state.setFailure(null);
    for (const n of emulator.state.nodes()) await emulator.state.deleteNode((n.metadata as { name: string }).name, { admit: false });
    emulator.stats.reset();
    waits = [];
    eventErrors = [];
    clock = NOW;
  });

  it('sends User-Agent podroute/<package.json version> on every call and fieldManager=podroute on every write', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    await emulator.state.addNode(wireNode('ua'));
    const kube = kubeWith();
    await kube.listNodes();
    await kube.updatePodCidr(await kube.getNode('ua'), '10.9.0.0/24');
    await kube.setNetworkUnavailable('ua', false, routesText(false));
    await kube.warn('ua', 'CloudCIDRAllocatorMismatch', 'm');
    await kube.warn('ua', 'CloudCIDRAllocatorMismatch', 'm');
    const requests = emulator.state.requests();
    expect(requests.length).toBeGreaterThanOrEqual(7);
    for (const request of requests) {
      expect(request.userAgent).toBe(`podroute/${version}`);
      expect(request.fieldManager).toBe(request.key.startsWith('GET ') ? null : 'podroute');
    }
    // The server records podroute's writes as podroute's (managedFields), not as `unknown`.
    const managers = ((emulator.state.getNode('ua')?.metadata as { managedFields: Array<{ manager: string; subresource?: string }> }).managedFields).map((e) => `${e.manager}${e.subresource ? `/${e.subresource}` : ''}`);
    expect(managers).toEqual(['kubelet', 'podroute', 'podroute/status']);
  });

  it.each<[string, string[], boolean]>([
    ['one IPv4', ['10.5.0.0/24'], true],
    ['dual stack, IPv4 first', ['10.5.0.0/24', 'fd00:5::/64'], true],
    ['dual stack, IPv6 first', ['fd00:5::/64', '10.5.0.0/24'], true],
    ['two IPv4 (one per family only: ValidateNode)', ['10.5.0.0/24', '10.6.0.0/24'], false],
    ['two IPv6', ['fd00:5::/64', 'fd00:6::/64'], false],
  ])('updatePodCidr with %s', async (_name, cidrs, ok) => {
    await emulator.state.addNode(wireNode('pc'));
    const kube = kubeWith();
    const node = await kube.getNode('pc');
    if (ok) {
      expect(await kube.updatePodCidr(node, cidrs)).toBe('patched');
      // podCIDR is podCIDRs[0], so the v1 conversion keeps the list as sent.
      expect(emulator.state.getNode('pc')?.spec).toMatchObject({ podCIDR: cidrs[0], podCIDRs: cidrs });
    } else {
      await expect(kube.updatePodCidr(node, cidrs)).rejects.toThrow(InvalidInputError);
      expect(emulator.stats.get('PATCH /api/v1/nodes/{name}')).toBe(0);
    }
  });

  it('aggregates a recurring warning into one Event per node and reason: count and lastTimestamp move', async () => {
    await emulator.state.addNode(wireNode('ev'));
    const kube = kubeWith();
    expect(await kube.warn('ev', 'CloudCIDRAllocatorMismatch', 'first')).toBe(true);
    clock = new Date(NOW.getTime() + 60_000);
    expect(await kube.warn('ev', 'CloudCIDRAllocatorMismatch', 'second')).toBe(true);
    expect(await kube.warn('ev', 'CloudCIDRAllocatorInvalidPodCIDR', 'other')).toBe(true);
    const events = emulator.state.events().filter((e) => (e.involvedObject as { name?: string }).name === 'ev');
    expect(events.map((e) => [e.reason, e.count, e.message])).toEqual([
      ['CloudCIDRAllocatorMismatch', 2, 'second'],
      ['CloudCIDRAllocatorInvalidPodCIDR', 1, 'other'],
    ]);
    expect(events[0]).toMatchObject({ firstTimestamp: '2026-03-04T05:06:07Z', lastTimestamp: '2026-03-04T05:07:07Z', metadata: { namespace: 'default' } });
    expect(eventErrors).toEqual([]);
  });

  it('loses no occurrence when two writers create the same Event at once (409 AlreadyExists becomes an update)', async () => {
    await emulator.state.addNode(wireNode('race'));
    const [a, b] = [kubeWith(), kubeWith()];
    expect(await Promise.all([a.warn('race', 'R', 'm'), b.warn('race', 'R', 'm'), a.warn('race', 'R', 'm')])).toEqual([true, true, true]);
    const events = emulator.state.events().filter((e) => (e.involvedObject as { name?: string }).name === 'race');
    expect(events.map((e) => e.count)).toEqual([3]);
  });

  it.each(['kube-system', 'podroute', ''])('refuses the event namespace %j: a Node\'s Events go to default (legacyValidateEvent)', (namespace) => {
    expect(() => kubeWith({ eventNamespace: namespace })).toThrow(InvalidInputError);
    expect(() => kubeWith({ eventNamespace: 'default' })).not.toThrow();
  });

  it.each<[string, number | undefined, number, number[], boolean]>([
    ['a 429 with Retry-After: 2 is retried after 2 s', 2, 1, [2000], true],
    ['a Retry-After beyond the bound waits the bound', 120, 1, [5000], true],
    ['a 429 without Retry-After is not retried here', undefined, 1, [], false],
    ['retries are bounded (3), then the 429 is a retryable error', 1, 10, [1000, 1000, 1000], false],
  ])('%s', async (_name, retryAfterSeconds, times, expectedWaits, ok) => {
    await emulator.state.addNode(wireNode('busy'));
    emulator.state.setFailure({ kind: 'error', code: 429, times, match: 'GET /api/v1/nodes/{name}', ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) });
    const read = kubeWith().getNode('busy');
    if (ok) expect((await read).metadata.name).toBe('busy');
    else await expect(read).rejects.toMatchObject({ status: 429, retryable: true });
    expect(waits).toEqual(expectedWaits);
    expect(emulator.stats.get('GET /api/v1/nodes/{name}')).toBe(expectedWaits.length + 1);
  });
});

describe('retryAfterMs', () => {
  const now = new Date('2026-03-04T05:06:07Z');
  it.each<[string | undefined, number | null]>([
    ['3', 3000],
    ['0', 0],
    ['3600', MAX_RETRY_AFTER_MS],
    ['Wed, 04 Mar 2026 05:06:09 GMT', 2000],
    ['Wed, 04 Mar 2026 05:00:00 GMT', 0],
    ['soon', null],
    ['-1', null],
    [undefined, null],
  ])('%j -> %j', (header, ms) => {
    expect(retryAfterMs(header, now)).toBe(ms);
  });
});
