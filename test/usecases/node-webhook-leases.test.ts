/**
 * The webhook and CIDR leases: a kubelet sends a CREATE for its Node on every start, also when the
 * Node exists (kubernetes pkg/kubelet/kubelet_node_status.go: registerWithAPIServer ->
 * tryRegisterWithAPIServer creates the Node and, on AlreadyExists, reads and reconciles the
 * existing one). Admission runs before the API server finds the name taken, so each restart is a
 * CREATE admission; each must find the node's lease, never take a second one.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../lib/usecases/node-webhook.ts';
import { nodeCreateReview } from '../support/admission.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { type World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const patchOf = (response: unknown): unknown[] | null => {
  const patch = (response as { response?: { patch?: string } }).response?.patch;
  return patch === undefined ? null : (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as unknown[]);
};

describe('kubelet re-registration through the webhook', () => {
  it('a second CREATE admission for the same node answers the same pod CIDR and takes no second lease', async () => {
    world.addClusterTable();
    const w = await testWiring(world, local);
    const instance = world.ec2.state.addInstance();
    await w.wiring.cidrSets[0]?.allocateNext('someone-else');
    const first = await admit(nodeCreateReview(world.nodeObject('node-a', instance.id), '11111111-0000-4000-8000-000000000001'), w.reconcileDeps());
    // The kubelet restarts: it sends its Node again, without the pod CIDR the first admission set.
    const second = await admit(nodeCreateReview(world.nodeObject('node-a', instance.id), '11111111-0000-4000-8000-000000000002'), w.reconcileDeps());
    const patch = [
      { op: 'add', path: '/spec/podCIDR', value: '100.64.1.0/24' },
      { op: 'add', path: '/spec/podCIDRs', value: ['100.64.1.0/24'] },
    ];
    // The pod CIDR ops come first; the NetworkUnavailable condition follows (node-webhook-create.test.ts).
    expect(patchOf(first)?.slice(0, 2)).toEqual(patch);
    expect(patchOf(second)?.slice(0, 2)).toEqual(patch);
    expect((await w.wiring.cidrSets[0]?.leases())?.map((l) => `${l.cidr}=${l.owner}`)).toEqual([
      '100.64.0.0/24=someone-else',
      '100.64.1.0/24=node-a',
    ]);
  });
});
