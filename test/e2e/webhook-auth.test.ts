import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { signEvent } from '../../lib/webhook/events.ts';
import { leaseLines, queueIdle, routeLines } from './helpers.ts';

/** What every node looks like: name, pod CIDRs, conditions, resourceVersion. */
const nodeLines = (sandbox: Sandbox) => sandbox.kube.state.nodes().map((node) => JSON.stringify([node.metadata, node.spec, node.status]));

describe('the webhook refuses bad credentials and bad bodies, and changes nothing then', () => {
  let sandbox: Sandbox;
  let before: { leases: string[]; routes: string[]; nodes: string[]; rv: number };

  const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${sandbox.webhook.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, body: await response.text() };
  };
  const now = () => Math.floor(Date.now() / 1000);
  const leftEvent = JSON.stringify({ type: 'NodeLeft', nodeName: 'hook-1' });
  const review = (operation: 'CREATE' | 'DELETE', extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'c0ffee00-0000-4000-8000-000000000001',
        kind: { group: '', version: 'v1', kind: 'Node' },
        resource: { group: '', version: 'v1', resource: 'nodes' },
        operation,
        name: 'hook-1',
        oldObject: operation === 'DELETE' ? sandbox.kube.state.getNode('hook-1') : null,
        object: operation === 'CREATE' ? { metadata: { name: 'hook-new' } } : null,
        ...extra,
      },
    });

  beforeAll(async () => {
    sandbox = await startSandbox({ tickMs: 0 });
    await sandbox.joinNode('hook-1');
    await sandbox.joinNode('hook-2');
    await sandbox.settle({ timeoutMs: 25_000 });
    before = { leases: await leaseLines(sandbox), routes: routeLines(sandbox), nodes: nodeLines(sandbox), rv: sandbox.kube.state.resourceVersion() };
  });
  afterAll(() => sandbox?.stop());

  it.each([
    ['no credentials at all', () => post('/webhook', leftEvent)],
    ['a signature made with another secret', () => post('/webhook', leftEvent, signEvent(leftEvent, 'not-the-secret', now()))],
    ['a signature of another body', () => post('/webhook', leftEvent, signEvent(JSON.stringify({ type: 'NodeLeft', nodeName: 'hook-2' }), sandbox.webhook.signingKey, now()))],
    ['a signature an hour old', () => post('/webhook', leftEvent, signEvent(leftEvent, sandbox.webhook.signingKey, now() - 3600))],
    ['a malformed signature header', () => post('/webhook', leftEvent, { 'x-podroute-signature': 'sha256=zz', 'x-podroute-timestamp': String(now()) })],
    ['an admission review with a wrong path token', () => post('/webhook/not-the-secret', review('DELETE'))],
    ['an admission review with a wrong bearer token', () => post('/webhook', review('DELETE'), { authorization: 'Bearer not-the-secret' })],
    ['an admission review signed instead of carrying the token', () => post('/webhook', review('DELETE'), signEvent(review('DELETE'), sandbox.webhook.signingKey, now()))],
    ['a NodeLeft signed with the URL token (the signing key is another secret)', () => post('/webhook', leftEvent, signEvent(leftEvent, sandbox.webhook.secret, now()))],
    ['an admission review with the token in the query string', () => post(`/webhook?token=${sandbox.webhook.secret}`, review('DELETE'))],
  ])('401 for %s', async (_case, send) => {
    const response = await send();
    expect(response.status).toBe(401);
    expect(response.body).not.toContain(sandbox.webhook.secret);
  });

  it.each([
    ['a signed body that is not JSON', () => { const body = '{"type": "NodeLeft",'; return post('/webhook', body, signEvent(body, sandbox.webhook.signingKey, now())); }],
    ['a signed event of an unknown type', () => { const body = JSON.stringify({ type: 'NodeExploded', nodeName: 'hook-1' }); return post('/webhook', body, signEvent(body, sandbox.webhook.signingKey, now())); }],
    ['a signed event with an invalid node name', () => { const body = JSON.stringify({ type: 'NodeLeft', nodeName: 'Not_A/Name' }); return post('/webhook', body, signEvent(body, sandbox.webhook.signingKey, now())); }],
    ['a signed event with extra fields', () => { const body = JSON.stringify({ type: 'NodeLeft', nodeName: 'hook-1', force: true }); return post('/webhook', body, signEvent(body, sandbox.webhook.signingKey, now())); }],
    ['an admission review without a uid', () => post(`/webhook/${sandbox.webhook.secret}`, review('DELETE', { uid: undefined }))],
    ['an admission review of another resource', () => post(`/webhook/${sandbox.webhook.secret}`, review('DELETE', { resource: { group: 'apps', version: 'v1', resource: 'deployments' } }))],
    ['an admission review of an unknown operation', () => post(`/webhook/${sandbox.webhook.secret}`, review('DELETE', { operation: 'CONNECT' }))],
  ])('400 for %s', async (_case, send) => {
    expect((await send()).status).toBe(400);
  });

  it('answers 409 to a well-signed NodeLeft for a node that still exists', async () => {
    const response = await post('/webhook', leftEvent, signEvent(leftEvent, sandbox.webhook.signingKey, now()));
    expect(response.status).toBe(409);
  });

  it('changed nothing: same leases, same routes, same nodes, nothing queued', async () => {
    await queueIdle(sandbox);
    expect(await leaseLines(sandbox)).toEqual(before.leases);
    expect(routeLines(sandbox)).toEqual(before.routes);
    expect(nodeLines(sandbox)).toEqual(before.nodes);
    expect(sandbox.kube.state.resourceVersion()).toBe(before.rv);
    expect(sandbox.webhook.api.responses[202] ?? 0).toBe(0);
  });

  it('accepts the same kind of event when it is signed right (the 401s were the signatures)', async () => {
    const joined = JSON.stringify({ type: 'NodeJoined', nodeName: 'hook-2' });
    const response = await post('/webhook', joined, signEvent(joined, sandbox.webhook.signingKey, now()));
    expect(response.status).toBe(202);
  });
});
