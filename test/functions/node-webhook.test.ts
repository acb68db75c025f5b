/**
 * The node webhook handler (functions/node-webhook.ts over lib/usecases/node-webhook.ts) with
 * API Gateway v2 events, against the EC2 and Kubernetes emulators and the DynamoDB CIDR store.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createNodeWebhookHandler } from '../../functions/node-webhook.ts';
import { powertoolsTelemetry } from '../../lib/log.ts';
import { NODE_LEFT_CHECK_DELAY_SECONDS } from '../../lib/usecases/node-left.ts';
import { signEvent } from '../../lib/webhook/events.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { EVENT_SIGNING_KEY, WEBHOOK_SECRET, testWiring, type TestWiring } from '../support/wiring.ts';
import { T0, httpEvent, lambdaContext, startWorld, type World, type WorldNode } from '../support/world.ts';

const NOW_SECONDS = T0 / 1000;

function review(operation: 'CREATE' | 'DELETE', node: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const gvk = { group: '', version: 'v1', kind: 'Node' };
  const gvr = { group: '', version: 'v1', resource: 'nodes' };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'b5a0c1f2-0000-4000-8000-00000000beef',
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: (node.metadata as { name: string }).name,
      operation,
      userInfo: { username: 'system:node:x', groups: ['system:nodes'] },
      object: operation === 'CREATE' ? node : null,
      oldObject: operation === 'DELETE' ? node : null,
      dryRun: false,
      ...extra,
    },
  });
}

const signedEvent = (type: 'NodeJoined' | 'NodeLeft', nodeName: string, secret = EVENT_SIGNING_KEY, at = NOW_SECONDS): APIGatewayProxyEventV2 => {
  const body = JSON.stringify({ type, nodeName });
  return httpEvent({ body, headers: signEvent(body, secret, at) });
};

/** The response body as a plain value (the tests compare it structurally). */
function bodyOf(result: APIGatewayProxyStructuredResultV2): unknown {
  return JSON.parse(result.body ?? 'null') as unknown;
}

/** The JSON Patch of an AdmissionReview answer, decoded. */
function patchOf(result: APIGatewayProxyStructuredResultV2): unknown {
  const parsed = bodyOf(result);
  const patch = typeof parsed === 'object' && parsed !== null && 'response' in parsed ? (parsed.response as { patch?: unknown }).patch : undefined;
  return typeof patch === 'string' ? (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as unknown) : null;
}

let local: LocalDynamo;
beforeAll(async () => {
  local = await startDynalite();
});
afterAll(async () => {
  await local.close();
});

describe('node-webhook handler', () => {
  let world: World;
  let w: TestWiring;
  let handler: ReturnType<typeof createNodeWebhookHandler>;
  let t1: string;
  let t2: string;
  beforeEach(async () => {
    world = await startWorld();
    [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    w = await testWiring(world, local);
    handler = createNodeWebhookHandler(async () => w.wiring);
  });
  afterEach(async () => {
    await world.close();
  });

  const invoke = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const result: unknown = await handler(event, lambdaContext('node-webhook'));
    if (typeof result !== 'object' || result === null || !('statusCode' in result)) throw new Error('not a structured result');
    return result as APIGatewayProxyStructuredResultV2;
  };
  const leases = async () => (await w.wiring.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`) ?? [];

  /** A node with pod CIDR 100.64.3.0/24, leased, routed in both tables. */
  async function routedNode(stored: boolean): Promise<WorldNode & { object: Record<string, unknown> }> {
    const instance = world.ec2.state.addInstance();
    const object = world.nodeObject('node-a', instance.id, ['100.64.3.0/24']);
    if (stored) await world.addNode('node-a', { podCidrs: ['100.64.3.0/24'], instance });
    await w.wiring.cidrSets[0]?.occupy('100.64.3.0/24', 'node-a');
    for (const table of [t1, t2]) world.ec2.state.addRoute({ routeTableId: table, destinationCidr: '100.64.3.0/24', instanceId: instance.id });
    w.dynamo.reset();
    world.resetStats();
    return { name: 'node-a', instanceId: instance.id, eniId: '', object };
  }

  it('answers an admission CREATE (token in the path) with a patch of a leased pod CIDR and queues its routes', async () => {
    const instance = world.ec2.state.addInstance();
    const result = await invoke(httpEvent({ body: review('CREATE', world.nodeObject('node-a', instance.id)), token: WEBHOOK_SECRET }));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'b5a0c1f2-0000-4000-8000-00000000beef', allowed: true, patchType: 'JSONPatch' },
    });
    expect(patchOf(result)).toEqual([
      { op: 'add', path: '/spec/podCIDR', value: '100.64.0.0/24' },
      { op: 'add', path: '/spec/podCIDRs', value: ['100.64.0.0/24'] },
      // Created unschedulable until routed (upstream kubelet's initial condition where routes are needed).
      {
        op: 'add',
        path: '/status/conditions/-',
        value: { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'Node created without a route', lastTransitionTime: '2026-01-01T00:00:00Z' },
      },
    ]);
    expect(await leases()).toEqual(['100.64.0.0/24=node-a']);
    // At once, with what the admission knows: the worker routes the node before it is stored. The
    // review's uid goes with it, the correlation id of the worker's lines.
    expect(w.queue.sends).toEqual([
      { messages: [{ v: 2, kind: 'sync-node', node: 'node-a', admitted: { instanceId: instance.id, podCidrs: ['100.64.0.0/24'] } }], options: { delaySeconds: 0, correlationId: 'b5a0c1f2-0000-4000-8000-00000000beef' } },
    ]);
    // The node is not stored yet: nothing is written to it.
    expect(world.kubeWrites()).toBe(0);
  });

  it('allows a dry-run CREATE without a patch, a lease or a message', async () => {
    const instance = world.ec2.state.addInstance();
    const result = await invoke(httpEvent({ body: review('CREATE', world.nodeObject('node-a', instance.id), { dryRun: true }), token: WEBHOOK_SECRET }));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'b5a0c1f2-0000-4000-8000-00000000beef', allowed: true },
    });
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
    expect(w.dynamo.writes()).toBe(0);
  });

  it('admits a DELETE without releasing or unrouting anything, and queues a delayed node-left check', async () => {
    const node = await routedNode(true);
    const result = await invoke(httpEvent({ body: review('DELETE', node.object), token: WEBHOOK_SECRET }));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({ response: { allowed: true } });
    // The delete is not stored yet and may still be refused: the lease and the routes stay.
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect(w.queue.sends).toEqual([{ messages: [{ v: 2, kind: 'node-left', node: 'node-a' }], options: { delaySeconds: NODE_LEFT_CHECK_DELAY_SECONDS, correlationId: 'b5a0c1f2-0000-4000-8000-00000000beef' } }]);
    expect([w.dynamo.writes(), world.ec2Writes(), world.kubeWrites()]).toEqual([0, 0, 0]);
  });

  it.each([
    ['a wrong token in the path', (body: string) => httpEvent({ body, token: 'wrong-token' })],
    ['no credential at all', (body: string) => httpEvent({ body })],
    ['a wrong bearer token', (body: string) => httpEvent({ body, headers: { authorization: 'Bearer wrong-token' } })],
  ])('answers 401 to %s and changes nothing', async (_name, build) => {
    const node = await routedNode(true);
    for (const body of [review('DELETE', node.object), review('CREATE', world.nodeObject('node-b', node.instanceId))]) {
      const result = await invoke(build(body));
      expect(result.statusCode).toBe(401);
      expect(bodyOf(result)).toEqual({ message: 'unauthorized' });
    }
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect(w.queue.sends).toEqual([]);
    expect([w.dynamo.writes(), world.kubeWrites(), world.ec2Writes()]).toEqual([0, 0, 0]);
  });

  it.each([
    ['an unknown operation', (node: Record<string, unknown>) => review('CREATE', node, { operation: 'UPDATE' })],
    ['a missing uid', (node: Record<string, unknown>) => review('CREATE', node, { uid: undefined })],
    ['a review of another resource', (node: Record<string, unknown>) => review('CREATE', node, { resource: { group: '', version: 'v1', resource: 'pods' } })],
    ['a body that is not JSON', () => '{"apiVersion": "admission.k8s.io/v1", '],
  ])('answers 400 to %s and changes nothing', async (_name, build) => {
    const node = await routedNode(true);
    const result = await invoke(httpEvent({ body: build(world.nodeObject('node-b', node.instanceId)), token: WEBHOOK_SECRET }));
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toEqual({ message: expect.any(String) });
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect(w.queue.sends).toEqual([]);
    expect([w.dynamo.writes(), world.kubeWrites(), world.ec2Writes()]).toEqual([0, 0, 0]);
  });

  it('syncs a stored node on a signed NodeJoined: 202, pod CIDR patched, routes queued', async () => {
    await world.addNode('node-b');
    const context = lambdaContext('node-webhook');
    const result = (await handler(signedEvent('NodeJoined', 'node-b'), context)) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(202);
    expect(world.podCidrs('node-b')).toEqual(['100.64.0.0/24']);
    expect(await leases()).toEqual(['100.64.0.0/24=node-b']);
    // An event has no uid: the invocation's request id correlates its message.
    expect(w.queue.sends).toEqual([{ messages: [{ v: 1, kind: 'sync-node', node: 'node-b' }], options: { delaySeconds: 0, correlationId: context.awsRequestId } }]);
  });

  it('answers 401 to a NodeJoined signed with another secret and changes nothing', async () => {
    await world.addNode('node-b');
    world.resetStats();
    const result = await invoke(signedEvent('NodeJoined', 'node-b', 'another-secret'));
    expect(result.statusCode).toBe(401);
    expect(world.podCidrs('node-b')).toEqual([]);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
    expect(world.kube.stats.all()).toEqual({});
  });

  it('answers 401 to a NodeJoined signed more than MAX_CLOCK_SKEW_SECONDS ago and changes nothing', async () => {
    await world.addNode('node-b');
    const result = await invoke(signedEvent('NodeJoined', 'node-b', EVENT_SIGNING_KEY, NOW_SECONDS - 301));
    expect(result.statusCode).toBe(401);
    expect(world.podCidrs('node-b')).toEqual([]);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
  });

  it('answers 409 to NodeLeft for a node that still exists and keeps its lease', async () => {
    await routedNode(true);
    const result = await invoke(signedEvent('NodeLeft', 'node-a'));
    expect(result.statusCode).toBe(409);
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect(w.queue.sends).toEqual([]);
  });

  it('releases the lease of a deleted node on NodeLeft (202) and leaves its routes to the planner', async () => {
    const node = await routedNode(false);
    // Past the grace period: a 404 frees only a lease older than it (lib/usecases/absence.ts pastGrace).
    const graceMs = w.wiring.config.leaseGraceSeconds * 1000 + 1000;
    world.clock.advance(graceMs);
    const result = await invoke(signedEvent('NodeLeft', 'node-a', EVENT_SIGNING_KEY, NOW_SECONDS + graceMs / 1000));
    expect(result.statusCode).toBe(202);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
    expect(world.ec2Writes()).toBe(0);
    for (const table of [t1, t2]) expect(world.route(table, '100.64.3.0/24')).toMatchObject({ instanceId: node.instanceId });
  });

  it('answers 401 to a NodeLeft signed with the URL token (a separate secret) and keeps the lease', async () => {
    await routedNode(false);
    const result = await invoke(signedEvent('NodeLeft', 'node-a', WEBHOOK_SECRET));
    expect(result.statusCode).toBe(401);
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    expect(w.dynamo.writes()).toBe(0);
  });

  it('answers 503 to a signed event while the signing key cannot be read, and still admits reviews', async () => {
    handler = createNodeWebhookHandler(async () => ({ ...w.wiring, eventSigningKey: async () => Promise.reject(new Error('AccessDenied')) }));
    await routedNode(false);
    expect((await invoke(signedEvent('NodeLeft', 'node-a'))).statusCode).toBe(503);
    expect(await leases()).toEqual(['100.64.3.0/24=node-a']);
    const instance = world.ec2.state.addInstance();
    expect((await invoke(httpEvent({ body: review('CREATE', world.nodeObject('node-b', instance.id)), token: WEBHOOK_SECRET }))).statusCode).toBe(200);
  });

  it('never logs the token or the signing key, even with Powertools\' POWERTOOLS_LOGGER_LOG_EVENT=true', async () => {
    vi.stubEnv('POWERTOOLS_LOGGER_LOG_EVENT', 'true');
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const telemetry = powertoolsTelemetry({ cluster: 'alpha', functionName: 'node-webhook' });
    const logged = createNodeWebhookHandler(async () => ({ ...w.wiring, log: telemetry.log }), telemetry);
    const instance = world.ec2.state.addInstance();
    const body = review('CREATE', world.nodeObject('node-a', instance.id));
    await logged(httpEvent({ body, token: WEBHOOK_SECRET }), lambdaContext('node-webhook'));
    await logged(httpEvent({ body, headers: { authorization: `Bearer ${WEBHOOK_SECRET}` } }), lambdaContext('node-webhook'));
    await logged(signedEvent('NodeJoined', 'node-a'), lambdaContext('node-webhook'));
    vi.mocked(process.stdout.write).mockRestore();
    const out = written.join('');
    expect(out).toContain('webhook.admitted');
    expect(out).not.toContain(WEBHOOK_SECRET);
    expect(out).not.toContain(EVENT_SIGNING_KEY);
    expect(out).not.toContain(signedEvent('NodeJoined', 'node-a').headers['x-podroute-signature']);
  });

  it('answers 404 to NodeJoined for an unknown node and allocates nothing', async () => {
    const result = await invoke(signedEvent('NodeJoined', 'node-unknown'));
    expect(result.statusCode).toBe(404);
    expect(await leases()).toEqual([]);
    expect(w.queue.sends).toEqual([]);
  });
});
