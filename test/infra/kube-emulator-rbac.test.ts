/**
 * The kube emulator authorizes podroute's identity with infra/kubernetes/rbac.yaml's rules
 * (infra/local/kube/rbac.ts): the decision table against a real kube-apiserver's answers for the
 * same identity (test/fixtures/kube-apiserver-1.32/rbac-rights.json), the request attributes
 * of each path, and the 403 a refused request gets over HTTPS.
 */
import { readFileSync } from 'node:fs';
import { AuthorizationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { ADMIN, kubeletUser } from '../../infra/local/kube/identity.ts';
import { loadRbac, PODROUTE_USER, requestAttributes, type RequestAttributes } from '../../infra/local/kube/rbac.ts';
import { KubeNodes } from '../../lib/kube/kube-nodes.ts';

type Recorded = { attrs: { verb: string; resource: string; group?: string; subresource?: string; namespace?: string }; allowed: boolean; why: string };
const recorded = JSON.parse(readFileSync(new URL('../fixtures/kube-apiserver-1.32/rbac-rights.json', import.meta.url), 'utf8')) as Recorded[];

const attributes = (a: Recorded['attrs'], name = ''): RequestAttributes => ({
  verb: a.verb,
  group: a.group ?? '',
  resource: a.resource,
  subresource: a.subresource ?? '',
  namespace: a.namespace ?? '',
  name,
});

const rbac = loadRbac();

/** The Status body of a refused client call. */
function statusBody(error: unknown): unknown {
  const body = (error as { body?: unknown }).body;
  return typeof body === 'string' ? JSON.parse(body) : body;
}

describe('emulated RBAC: podroute under infra/kubernetes/rbac.yaml', () => {
  it('has recorded answers to compare with', () => {
    expect(recorded.length).toBeGreaterThan(10);
  });

  it.each(recorded.map((row) => [row.why, row] as const))('%s: as the real server answered', (_why, row) => {
    expect(rbac.allows(PODROUTE_USER, attributes(row.attrs))).toBe(row.allowed);
  });

  // Not in the recording: the repeat of a warning reads and patches its Event (lib/kube/kube-events.ts).
  it.each([
    ['get', 'default', true],
    ['patch', 'default', true],
    ['patch', 'kube-system', true],
    ['update', 'default', false],
    ['delete', 'default', false],
    ['list', 'default', false],
  ])('%s events in %s: %s', (verb, namespace, allowed) => {
    expect(rbac.allows(PODROUTE_USER, attributes({ verb, resource: 'events', namespace }, 'n.0123456789abcdef'))).toBe(allowed);
  });

  it('lets system:masters do anything and names podroute by the group its binding names', () => {
    expect(rbac.allows(ADMIN, attributes({ verb: 'delete', resource: 'nodes' }, 'a'))).toBe(true);
    expect(PODROUTE_USER.groups).toContain('podroute');
    expect(rbac.allows({ ...PODROUTE_USER, groups: ['system:authenticated'] }, attributes({ verb: 'list', resource: 'nodes' }))).toBe(false);
    expect(rbac.allows(kubeletUser('a'), attributes({ verb: 'list', resource: 'pods' }))).toBe(false);
  });
});

describe('emulated RBAC: request attributes (k8s.io/apiserver endpoints/request/requestinfo.go)', () => {
  it.each([
    ['GET', '/api/v1/nodes', '', { verb: 'list', group: '', resource: 'nodes', subresource: '', namespace: '', name: '' }],
    ['GET', '/api/v1/nodes', 'watch=true', { verb: 'watch', group: '', resource: 'nodes', subresource: '', namespace: '', name: '' }],
    ['GET', '/api/v1/nodes/a', '', { verb: 'get', group: '', resource: 'nodes', subresource: '', namespace: '', name: 'a' }],
    ['PATCH', '/api/v1/nodes/a/status', '', { verb: 'patch', group: '', resource: 'nodes', subresource: 'status', namespace: '', name: 'a' }],
    ['PUT', '/api/v1/nodes/a', '', { verb: 'update', group: '', resource: 'nodes', subresource: '', namespace: '', name: 'a' }],
    ['DELETE', '/api/v1/nodes/a', '', { verb: 'delete', group: '', resource: 'nodes', subresource: '', namespace: '', name: 'a' }],
    ['POST', '/api/v1/namespaces/default/events', '', { verb: 'create', group: '', resource: 'events', subresource: '', namespace: 'default', name: '' }],
    ['PATCH', '/api/v1/namespaces/default/events/e.1', '', { verb: 'patch', group: '', resource: 'events', subresource: '', namespace: 'default', name: 'e.1' }],
    ['POST', '/apis/events.k8s.io/v1/namespaces/default/events', '', { verb: 'create', group: 'events.k8s.io', resource: 'events', subresource: '', namespace: 'default', name: '' }],
    ['GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', '', { verb: 'list', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', subresource: '', namespace: '', name: '' }],
  ])('%s %s?%s', (method, path, query, expected) => {
    expect(requestAttributes(method, path, new URLSearchParams(query))).toEqual(expected);
  });
});

describe('emulated RBAC over HTTPS', () => {
  let emulator: KubeEmulator;
  let core: CoreV1Api;
  beforeAll(async () => {
    emulator = await startKubeEmulator({ nodes: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' }, spec: {} }] });
    const kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeConfig(emulator.podrouteToken));
    core = kc.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('refuses what the rules do not grant with 403 Forbidden in the API server words, and changes nothing', async () => {
    const error: unknown = await core.deleteNode({ name: 'a' }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ code: 403 });
    expect(statusBody(error)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'nodes "a" is forbidden: User "podroute" cannot delete resource "nodes" in API group "" at the cluster scope',
      details: { name: 'a', kind: 'nodes' },
    });
    expect(emulator.state.getNode('a')).toBeDefined();
    const pods: unknown = await core.listNamespacedPod({ namespace: 'default' }).then(() => null, (e: unknown) => e);
    expect(pods).toMatchObject({ code: 403 });
    expect(statusBody(pods)).toMatchObject({
      message: 'pods is forbidden: User "podroute" cannot list resource "pods" in API group "" in the namespace "default"',
    });
  });

  // What `podroute doctor` asks, run with podroute's identity: the answers of the real server.
  it.each(recorded.map((row) => [row.why, row] as const))('SelfSubjectAccessReview as podroute, %s: as the real server answered', async (_why, row) => {
    const kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeConfig(emulator.podrouteToken));
    const review = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { ...row.attrs } } } });
    expect(review.status?.allowed).toBe(row.allowed);
  });

  it('lets podroute repeat a warning: the Event counts two', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions(emulator.kubeConfig(emulator.podrouteToken));
    const errors: unknown[] = [];
    const kube = new KubeNodes(kc, { onEventError: (e) => errors.push(e) });
    expect(await kube.warn('a', 'CloudCIDRAllocatorMismatch', 'one')).toBe(true);
    expect(await kube.warn('a', 'CloudCIDRAllocatorMismatch', 'two')).toBe(true);
    expect(errors).toEqual([]);
    expect(emulator.state.events().map((e) => [e.message, e.count])).toEqual([['two', 2]]);
  });
});
