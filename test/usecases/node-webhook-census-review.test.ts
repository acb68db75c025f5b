/**
 * Review of the claim census (docs/decisions/0030): an UPDATE that gives a stored managed node its
 * pod CIDRs (Kubernetes lets spec.podCIDR be set once from empty) must be recorded as a claim, or
 * the next keyed admission hands out the block the stored node now carries.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';
import { nodeCreateReview, patchedPodCidr as podCidrOf } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

describe('UPDATE that sets a stored node\'s pod CIDRs under a clear census', () => {
  it('is recorded as a claim: the next admission does not hand out that block', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    await reconcile(w.reconcileDeps());
    const instanceId = world.ec2.state.addInstance().id;
    const before = world.nodeObject('late', instanceId);
    const after = world.nodeObject('late', instanceId, ['100.64.0.0/24']);
    const update = admissionReviewSchema().parse({
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: { uid: '33333333-0000-4000-8000-000000000001', kind: { group: '', version: 'v1', kind: 'Node' }, resource: { group: '', version: 'v1', resource: 'nodes' },
        name: 'late', operation: 'UPDATE', userInfo: { username: 'kubernetes-admin' }, object: after, oldObject: before },
    });
    await admit(update, w.reconcileDeps());
    await world.addNode('late', { podCidrs: ['100.64.0.0/24'], unleased: true });
    const next = world.ec2.state.addInstance();
    const answer = await admit(nodeCreateReview(world.nodeObject('node-n', next.id)), w.reconcileDeps());
    expect(podCidrOf(answer)).not.toBe('100.64.0.0/24');
  });

  it('records nothing for podroute\'s own patch of a leased block: the next admission stays keyed', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    const own = await world.addNode('own', { podCidrs: ['100.64.5.0/24'] });
    await reconcile(w.reconcileDeps());
    const update = admissionReviewSchema().parse({
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: { uid: '33333333-0000-4000-8000-000000000002', kind: { group: '', version: 'v1', kind: 'Node' }, resource: { group: '', version: 'v1', resource: 'nodes' },
        name: 'own', operation: 'UPDATE', userInfo: { username: 'podroute' }, object: world.nodeObject('own', own.instanceId, ['100.64.5.0/24']), oldObject: world.nodeObject('own', own.instanceId) },
    });
    await admit(update, w.reconcileDeps());
    const next = world.ec2.state.addInstance();
    await admit(nodeCreateReview(world.nodeObject('node-n', next.id)), w.reconcileDeps());
    const reads = w.log.lines.filter((l) => l.event === 'webhook.admitted' && l.node === 'node-n').map((l) => l.reads);
    expect(reads).toEqual(['keyed']);
  });
});
