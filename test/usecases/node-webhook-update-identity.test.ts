/**
 * The UPDATE that first sets a node's providerID is a join only when the cloud controller manager
 * sends it: a kubelet may set its own Node's providerID (NodeRestriction does not stop it), and
 * naming another node's instance must not get it a lease or a route to that instance.
 */
import { describe, expect, it } from 'vitest';
import { admissionReview } from '../../infra/local/kube/admission.ts';
import { ADMIN, kubeletUser } from '../../infra/local/kube/identity.ts';
import type { UserInfo } from '../../infra/local/kube/identity.ts';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';
import { fakeWiring, fakeWorld } from '../support/fake-world.ts';

async function providerIdUpdate(user: UserInfo) {
  const world = fakeWorld();
  world.addClusterTable();
  const w = await fakeWiring(world);
  const { instanceId } = world.routeTables.addInstance();
  const joined = world.nodeObject('joiner', instanceId);
  const { providerID: _set, ...spec } = joined.spec as Record<string, unknown>;
  const review = admissionReviewSchema().parse(admissionReview('44444444-0000-4000-8000-000000000001', 'UPDATE', 'joiner', joined, { ...joined, spec }, user));
  const answer = await admit(review, w.reconcileDeps());
  const leases = (await Promise.all(w.reconcileDeps().cidrSets.map((s) => s.leases()))).flat();
  return { answer, leases: leases.map((l) => l.owner), kinds: w.queue.messages.map((m) => m.kind) };
}

describe('who may turn an UPDATE into a join', () => {
  it('the kubelet of the node: allowed untouched, no lease, nothing queued', async () => {
    const { answer, leases, kinds } = await providerIdUpdate(kubeletUser('joiner'));
    expect([answer.response.allowed, answer.response.patch, leases, kinds]).toEqual([true, undefined, [], []]);
  });

  it('a cluster-admin or controller identity (the cloud controller manager): the join, a lease and a sync-node', async () => {
    const { answer, leases, kinds } = await providerIdUpdate(ADMIN);
    expect([answer.response.allowed, leases, kinds]).toEqual([true, ['joiner'], ['sync-node']]);
  });
});
