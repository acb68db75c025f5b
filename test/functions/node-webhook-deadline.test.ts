/**
 * The CREATE admission's deadline (functions/node-webhook.ts): it answers inside the webhook's
 * timeout, which the API server sends as `?timeout=<n>s`, even when the Kubernetes API throttles
 * with a long Retry-After or answers too late; such a node is still created NetworkUnavailable=True.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createNodeWebhookHandler } from '../../functions/node-webhook.ts';
import { nodeCreateReview } from '../support/admission.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { WEBHOOK_SECRET, testWiring } from '../support/wiring.ts';
import { httpEvent, lambdaContext, startWorld, type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World | undefined;
beforeAll(async () => {
  local = await startDynalite();
});
afterEach(async () => {
  await world?.close();
  world = undefined;
});
afterAll(async () => {
  await local.close();
});

const UNAVAILABLE = {
  op: 'add',
  path: '/status/conditions/-',
  value: { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'Node created without a route', lastTransitionTime: '2026-01-01T00:00:00Z' },
};

type Answer = { allowed: boolean; patch: unknown; warnings: string[]; failures: Array<Record<string, unknown>> };

async function admitThrough(w: World, query: Record<string, string>): Promise<Answer> {
  const wiring = await testWiring(w, local);
  const handler = createNodeWebhookHandler(async () => wiring.wiring);
  const instance = w.ec2.state.addInstance();
  const body = JSON.stringify(nodeCreateReview(w.nodeObject('node-a', instance.id)));
  const result = (await handler(httpEvent({ body, token: WEBHOOK_SECRET, query }), lambdaContext('node-webhook'))) as APIGatewayProxyStructuredResultV2;
  const parsed = JSON.parse(result.body ?? '{}') as { response: { allowed: boolean; patch?: string; warnings?: string[] } };
  const patch = parsed.response.patch === undefined ? null : (JSON.parse(Buffer.from(parsed.response.patch, 'base64').toString('utf8')) as unknown);
  const failures = wiring.log.lines.filter((line) => line.event === 'webhook.failed' || line.event === 'webhook.deadline');
  return { allowed: parsed.response.allowed, patch, warnings: parsed.response.warnings ?? [], failures };
}

it('a 429 with a long Retry-After is not waited out during an admission: one read, then allowed with NetworkUnavailable=True', async () => {
  world = await startWorld();
  world.addClusterTable();
  world.kube.state.setFailure({ kind: 'error', code: 429, retryAfterSeconds: 5, times: 10, match: 'GET /api/v1/nodes/{name}' });
  const { failures, ...answer } = await admitThrough(world, { timeout: '5s' });
  expect(answer).toEqual({ allowed: true, patch: [UNAVAILABLE], warnings: [expect.stringContaining('next reconcile')] });
  // The failure line names the node and carries the review's uid.
  expect(failures).toMatchObject([{ event: 'webhook.failed', node: 'node-a', uid: '22222222-0000-4000-8000-000000000001', correlationId: '22222222-0000-4000-8000-000000000001' }]);
  expect(world.kube.stats.all()['GET /api/v1/nodes/{name}']).toBe(1);
});

it('an API server slower than the webhook timeout: the admission answers allowed with NetworkUnavailable=True before it', async () => {
  // Every answer of this API server comes after 3 s; the webhook's timeout is 1 s.
  world = await startWorld({ kube: { latencyMs: 3_000 } });
  world.addClusterTable();
  const { failures: _failures, ...answer } = await admitThrough(world, { timeout: '1s' });
  expect(answer).toEqual({ allowed: true, patch: [UNAVAILABLE], warnings: [expect.stringContaining('ran out of time')] });
});
