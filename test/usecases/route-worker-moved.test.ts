/**
 * The route worker and a route to another instance (`moved`): the worker does not know the
 * unmanaged nodes, so it replaces such a route only when the message names the instance found there
 * (a replace's `expect`, from reconcile's plan) and a fresh read confirms it; a create, a replace
 * without `expect` and a sync-node leave it to reconcile. Against the EC2 and Kubernetes emulators.
 */
import { describe, expect, it } from 'vitest';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { parseLabelSelector } from '../../lib/nodes/label-selector.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import type { World, WorldNode } from '../support/world.ts';
import { useWorldWithTable } from '../support/use-world.ts';
import { worldWorkerDeps } from '../support/worker-deps.ts';

const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const CIDR = '100.64.1.0/24';

describe('handleWorkMessage: a route to another instance', () => {
  let world: World;
  let table: string;
  let a: WorldNode;
  let u: WorldNode;
  let deps: RouteWorkerDeps;

  useWorldWithTable(async (parts) => {
    ({ world, table } = parts);
    a = await world.addNode('node-a', { podCidrs: [CIDR] });
    // node-u is not podroute's (outside the selector); the table routes node-a's block to its instance.
    u = await world.addNode('node-u', { unleased: true });
    world.ec2.state.addRoute({ routeTableId: table, destinationCidr: CIDR, instanceId: u.instanceId });
    deps = worldWorkerDeps(world, { nodeSelector: parseLabelSelector('kubernetes.io/hostname!=node-u') });
  });

  const routedTo = () => world.ec2.state.routes(table).find((r) => r.destinationCidrBlock === CIDR)?.instanceId;
  const send = (message: WorkMessage) => handleWorkMessage(JSON.stringify(message), FIRST, deps);
  const replace = (expectFound?: string): WorkMessage =>
    expectFound === undefined
      ? { v: 1, kind: 'replace', routeTableId: table, destinationCidr: CIDR, node: a.name, instanceId: a.instanceId, reason: 'moved' }
      : { v: 2, kind: 'replace', routeTableId: table, destinationCidr: CIDR, node: a.name, instanceId: a.instanceId, reason: 'moved', expect: { instanceId: expectFound } };

  it.each<[string, () => WorkMessage]>([
    ['a sync-node', () => ({ v: 1, kind: 'sync-node', node: a.name })],
    ['a create', () => ({ v: 1, kind: 'create', routeTableId: table, destinationCidr: CIDR, node: a.name, instanceId: a.instanceId })],
    ['a replace without expect', () => replace()],
    ['a replace expecting another instance', () => replace(a.instanceId)],
  ])('%s leaves it alone (stale:moved)', async (_, message) => {
    const result = await send(message());
    expect(result.outcome).toBe('ack');
    expect(result.status).toBe('stale:moved');
    expect(routedTo()).toBe(u.instanceId);
  });

  it('a replace expecting the instance found there replaces it', async () => {
    expect(await send(replace(u.instanceId))).toEqual({ outcome: 'ack', status: 'replaced' });
    expect(routedTo()).toBe(a.instanceId);
  });
});
