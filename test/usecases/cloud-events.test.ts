/**
 * The cloud-events decision (lib/usecases/cloud-events.ts) over the fake world: which events queue
 * work, which work, and that forged, stale, own or malformed events queue nothing.
 */
import { describe, expect, it } from 'vitest';
import type { InstanceState } from '../../lib/events/cloud-event.ts';
import { type CloudEventDeps, handleCloudEvent } from '../../lib/usecases/cloud-events.ts';
import { edited, eventFixture } from '../support/event-fixtures.ts';
import { fakeWiring, fakeWorld } from '../support/fake-world.ts';

const OWN = 'arn:aws:iam::123456789012:role/podroute-worker';
const instanceEvent = (instanceId: string, state: string) => edited(eventFixture('instance-state-change.json'), { detail: { 'instance-id': instanceId, state } });
const routeEvent = (routeTableId: string, cidr: string, options: { arn?: string; eventName?: string; errorCode?: string } = {}) =>
  edited(eventFixture('cloudtrail-delete-route.json'), {
    'detail.requestParameters': { routeTableId, destinationCidrBlock: cidr },
    'detail.eventName': options.eventName ?? 'DeleteRoute',
    ...(options.arn ? { 'detail.userIdentity': { type: 'AssumedRole', arn: `${options.arn}/session`, sessionContext: { sessionIssuer: { arn: options.arn } } } } : {}),
    ...(options.errorCode ? { 'detail.errorCode': options.errorCode } : {}),
  });

/**
 * Two nodes, a and b, each leasing its pod CIDR and routed in one tagged table; an untagged table;
 * instance a terminated in EC2 (its route a blackhole), b running.
 */
async function scene() {
  const world = fakeWorld();
  const table = world.addClusterTable();
  const untagged = world.routeTables.addTable({ tags: {} });
  const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
  const b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'] });
  const w = await fakeWiring(world);
  const set = w.cidrSets[0];
  if (!set) throw new Error('no set');
  await set.occupy('100.64.1.0/24', 'node-a');
  await set.occupy('100.64.2.0/24', 'node-b');
  world.routeTables.addRoute(table, '100.64.1.0/24', { instanceId: a.instanceId });
  world.routeTables.addRoute(table, '100.64.2.0/24', { instanceId: b.instanceId });
  world.routeTables.terminateInstance(a.instanceId);
  const states = new Map<string, InstanceState>([[a.instanceId, 'terminated'], [b.instanceId, 'running']]);
  const deps: CloudEventDeps = {
    config: { clusterCidrs: w.config.clusterCidrs, ownPrincipals: [OWN] },
    routeTables: world.routeTables,
    nodes: world.nodes,
    queue: w.queue,
    cidrSets: w.cidrSets,
    instances: { instanceState: async (id) => states.get(id) ?? null },
    log: w.log,
    now: world.clock.now,
  };
  return { world, table, untagged, a, b, states, deps, queue: w.queue, log: w.log };
}
type Scene = Awaited<ReturnType<typeof scene>>;

describe('handleCloudEvent: what each event queues', () => {
  it.each<[string, (s: Scene) => unknown, string, (s: Scene) => unknown[]]>([
    ['a termination EC2 confirms: the blackhole delete of its node\'s route', (s) => instanceEvent(s.a.instanceId, 'terminated'), 'queued:delete-blackholes',
      (s) => [{ v: 1, kind: 'delete', routeTableId: s.table, destinationCidr: '100.64.1.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } }]],
    ['shutting-down, EC2 already says terminated: the same delete', (s) => instanceEvent(s.a.instanceId, 'shutting-down'), 'queued:delete-blackholes',
      (s) => [{ v: 1, kind: 'delete', routeTableId: s.table, destinationCidr: '100.64.1.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } }]],
    ['a forged termination of a running instance: nothing', (s) => instanceEvent(s.b.instanceId, 'terminated'), 'kept:running', () => []],
    ['a stopped instance keeps its interface and routes: nothing', (s) => { s.states.set(s.b.instanceId, 'stopped'); return instanceEvent(s.b.instanceId, 'stopped'); }, 'kept:stopped', () => []],
    ['an instance EC2 does not know: nothing', () => instanceEvent('i-0fffffffffffffff0', 'terminated'), 'kept:not-found', () => []],
    ['a stale termination of an instance no node names any more: nothing', (s) => { s.states.set('i-0aaaaaaaaaaaaaaa0', 'terminated'); return instanceEvent('i-0aaaaaaaaaaaaaaa0', 'terminated'); }, 'done:no-node', () => []],
    ['a route of node b deleted by an operator: a sync-node for b', (s) => routeEvent(s.table, '100.64.2.0/24'), 'queued:sync-node', () => [{ v: 1, kind: 'sync-node', node: 'node-b' }]],
    ['a route of node b re-pointed by an operator: a sync-node for b', (s) => routeEvent(s.table, '100.64.2.0/24', { eventName: 'ReplaceRoute' }), 'queued:sync-node', () => [{ v: 1, kind: 'sync-node', node: 'node-b' }]],
    ['podroute\'s own write: nothing', (s) => routeEvent(s.table, '100.64.2.0/24', { arn: OWN }), 'ignored:own-write', () => []],
    ['a write outside the cluster CIDRs: nothing', (s) => routeEvent(s.table, '10.9.0.0/16'), 'ignored:outside-cluster-cidrs', () => []],
    ['a write on an untagged table: nothing', (s) => routeEvent(s.untagged, '100.64.2.0/24'), 'ignored:untagged-table', () => []],
    ['a write of a destination no node leases: left to reconcile', (s) => routeEvent(s.table, '100.64.9.0/24', { eventName: 'CreateRoute' }), 'left-to-reconcile:not-a-leased-block', () => []],
    ['a write of half a leased block: left to reconcile', (s) => routeEvent(s.table, '100.64.2.0/25', { eventName: 'CreateRoute' }), 'left-to-reconcile:not-a-leased-block', () => []],
    ['a write for a lease holder whose Node is gone: left to reconcile', (s) => { s.world.nodes.delete('node-b'); return routeEvent(s.table, '100.64.2.0/24'); }, 'left-to-reconcile:holder-gone', () => []],
    ['a malformed event: rejected, nothing', () => ({ 'detail-type': 'EC2 Instance State-change Notification', source: 'aws.ec2', detail: {} }), 'rejected', () => []],
  ])('%s', async (_name, makeEvent, status, want) => {
    const s = await scene();
    const result = await handleCloudEvent(makeEvent(s), s.deps);
    expect(result.status).toBe(status);
    expect(s.queue.sent).toEqual(want(s));
    expect(result.messages).toBe(want(s).length);
    expect(s.world.ec2Writes()).toBe(0);
  });

  it('a failed call (errorCode) queues nothing and counts no rejection', async () => {
    const s = await scene();
    const event = routeEvent(s.table, '100.64.2.0/24', { errorCode: 'Client.UnauthorizedOperation' });
    expect(await handleCloudEvent(event, s.deps)).toEqual({ status: 'ignored:failed-call', messages: 0 });
    expect(s.queue.sent).toEqual([]);
  });

  it('a termination whose blackholed destination a live node now leases: no delete (the planner replaces it for that node)', async () => {
    const s = await scene();
    const set = s.deps.cidrSets[0];
    if (!set) throw new Error('no set');
    // node-a still names the terminated instance; its block has gone to node-d, on a running instance.
    await set.release('100.64.1.0/24');
    const d = await s.world.addNode('node-d', { podCidrs: ['100.64.1.0/24'] });
    s.states.set(d.instanceId, 'running');
    await set.occupy('100.64.1.0/24', 'node-d');
    const result = await handleCloudEvent(instanceEvent(s.a.instanceId, 'terminated'), s.deps);
    expect(result).toEqual({ status: 'done:nothing-to-delete', messages: 0 });
    expect(s.queue.sent).toEqual([]);
  });

  it('logs the reason of a rejection, never the event', async () => {
    const s = await scene();
    await handleCloudEvent({ 'detail-type': 'AWS API Call via CloudTrail', source: 'aws.ec2', secret: 'do-not-log' }, s.deps);
    const lines = JSON.stringify(s.log.lines);
    expect(lines).toContain('cloud-event.rejected');
    expect(lines).not.toContain('do-not-log');
  });
});
