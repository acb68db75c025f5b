/**
 * The reconcile use case (lib/usecases/reconcile.ts) and its handler (functions/reconcile.ts) over
 * the EC2 and Kubernetes emulators and the DynamoDB CIDR store (dynalite), wired by buildWiring.
 */
import type { ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createReconcileHandler } from '../../functions/reconcile.ts';
import { containsCidr, tryParseCidr } from '../../lib/cidr/cidr.ts';
import { messageKey, type WorkMessage } from '../../lib/messages/work-message.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring, type TestWiring } from '../support/wiring.ts';
import { TimedMemoryCidrStore, drainQueue, lambdaContext, type World } from '../support/world.ts';
import { withRoutesPlane } from '../support/plane.ts';

const SCHEDULE: ScheduledEvent = {
  version: '0',
  id: 'tick-1',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  time: '2026-01-01T00:00:00Z',
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:000000000000:rule/podroute-reconcile'],
  detail: {},
};

const inside = (cluster: string, cidr: string, prefix: number): boolean => {
  const outer = tryParseCidr(cluster);
  const inner = tryParseCidr(cidr);
  return outer !== null && inner !== null && inner.prefix === prefix && containsCidr(outer, inner);
};

const sortedMessages = (messages: WorkMessage[]): WorkMessage[] => [...messages].sort((x, y) => messageKey(x).localeCompare(messageKey(y)));

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

describe('reconcile: route fan-out', () => {
  it('sends exactly the plan as messages (deletes with expect) and leaves EC2 to the worker', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const c = world.ec2.state.addInstance();
    const d = world.ec2.state.addInstance();
    const igw = world.ec2.state.addGateway();
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const b = await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'], networkUnavailable: 'False' });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.2.0/24', instanceId: c.id }); // moved
    world.ec2.state.addRoute({ routeTableId: t2, destinationCidr: '100.64.2.0/24', instanceId: b.instanceId });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.9.0/24', instanceId: c.id }); // no owner
    world.ec2.state.addRoute({ routeTableId: t2, destinationCidr: '100.64.8.0/24', instanceId: d.id });
    world.ec2.state.terminateInstance(d.id); // blackhole
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.7.0/24', gatewayId: igw }); // not ours to touch
    const w = await testWiring(world, local);
    world.resetStats();

    const summary = await createReconcileHandler(async () => w.wiring)(SCHEDULE, lambdaContext());
    expect(summary).toEqual({
      nodes: 2,
      routeTables: 2,
      create: 2,
      replace: 1,
      delete: 2,
      unsafe: null,
      messagesSent: 5,
      messagesDeferred: 0,
      conditionsPatched: 1, // node-a: no condition and not routed yet -> NetworkUnavailable=True
      allocated: 0,
      reclaimed: 0,
      errors: 0,
    });
    expect(w.queue.messages).toEqual([
      { v: 1, kind: 'create', routeTableId: t1, destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: a.instanceId },
      { v: 1, kind: 'create', routeTableId: t2, destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: a.instanceId },
      { v: 2, kind: 'replace', routeTableId: t1, destinationCidr: '100.64.2.0/24', node: 'node-b', instanceId: b.instanceId, reason: 'moved', expect: { instanceId: c.id } },
      { v: 1, kind: 'delete', routeTableId: t1, destinationCidr: '100.64.9.0/24', reason: 'no-owner', expect: { instanceId: c.id, blackhole: false } },
      { v: 1, kind: 'delete', routeTableId: t2, destinationCidr: '100.64.8.0/24', reason: 'blackhole', expect: { instanceId: null, blackhole: true } },
    ]);
    expect(w.queue.sends).toHaveLength(1);
    expect(world.ec2Writes()).toBe(0);
    // Both nodes are pending: the worker settles their conditions; node-a, which had none, is
    // NetworkUnavailable=True until then.
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(1);
    expect(world.networkUnavailable('node-a')).toBe('True');
    // In the words for a node not routed yet, not those of a route that failed.
    const marked = (world.kube.state.getNode('node-a')?.status as { conditions: Array<Record<string, unknown>> }).conditions.find((c) => c.type === 'NetworkUnavailable');
    expect(marked).toMatchObject({ reason: 'NoRouteCreated', message: 'Node created without a route' });

    expect(await drainQueue(w.queue, w.workerDeps())).toEqual([
      'create:ack:created',
      'create:ack:created',
      'replace:ack:replaced',
      'delete:ack:deleted',
      'delete:ack:deleted',
    ]);
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`, `100.64.2.0/24 -> ${b.instanceId}`, `100.64.7.0/24 -> ${igw}`]);
    expect(world.routeSummary(t2)).toEqual([`100.64.1.0/24 -> ${a.instanceId}`, `100.64.2.0/24 -> ${b.instanceId}`]);
    expect([world.networkUnavailable('node-a'), world.networkUnavailable('node-b')]).toEqual(['False', 'False']);
  });

  it('withholds every deletion when the node list is empty and says so', async () => {
    const t1 = world.addClusterTable();
    const [x, y] = [world.ec2.state.addInstance(), world.ec2.state.addInstance()];
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.1.0/24', instanceId: x.id });
    world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: '100.64.2.0/24', instanceId: y.id });
    const w = await testWiring(world, local);

    const report = await reconcile(w.reconcileDeps());
    expect(report.plan.delete.map((op) => op.destinationCidr)).toEqual(['100.64.1.0/24', '100.64.2.0/24']);
    expect(report.plan.unsafe).toMatch(/node list is empty/);
    expect(report.deletionsWithheld).toBe(2);
    expect(report.messagesSent).toBe(0);
    expect(w.queue.messages).toEqual([]);
    const unsafe = w.log.lines.filter((l) => l.event === 'reconcile.unsafe');
    expect(unsafe).toHaveLength(1);
    expect(unsafe[0]).toMatchObject({ level: 'warn', withheld: 2 });
    expect(world.routeSummary(t1)).toEqual([`100.64.1.0/24 -> ${x.id}`, `100.64.2.0/24 -> ${y.id}`]);
  });

  it('still sends creates but withholds deletions when the share guard trips', async () => {
    const t1 = world.addClusterTable();
    const stray = world.ec2.state.addInstance();
    for (let i = 10; i < 16; i++) world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: `100.64.${i}.0/24`, instanceId: stray.id });
    const a = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    const w = await testWiring(world, local);

    const report = await reconcile(w.reconcileDeps());
    expect(report.plan.unsafe).toMatch(/deletes 6 of 6 live routes/);
    expect(w.queue.messages).toEqual([{ v: 1, kind: 'create', routeTableId: t1, destinationCidr: '100.64.1.0/24', node: 'node-a', instanceId: a.instanceId }]);
    expect(w.log.lines.filter((l) => l.event === 'reconcile.unsafe')).toHaveLength(1);
  });
});

describe('reconcile: a route table marked full', () => {
  it('withholds creates to a full table while the mark is young, probes once after the interval, and clears an outgrown mark', async () => {
    const full = world.addClusterTable();
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] });
    await world.addNode('node-b', { podCidrs: ['100.64.2.0/24'] });
    const routeCount = world.ec2.state.routes(full).length;
    const markedAt = world.clock.now();
    world.ec2.state.table(full).tags.push({ key: 'podroute.io/route-table-full', value: `${routeCount}@${new Date(markedAt).toISOString()}` });
    const w = await testWiring(world, local);

    await reconcile(w.reconcileDeps());
    const creates = (messages: WorkMessage[]) => messages.filter((m) => m.kind === 'create').map((m) => `${m.routeTableId === full ? 'full' : 'open'} ${m.node}`).sort();
    expect(creates(w.queue.messages)).toEqual(['open node-a', 'open node-b']);
    expect(w.log.lines.filter((l) => l.event === 'reconcile.route-table-full')).toEqual([expect.objectContaining({ routeTableId: full, withheld: 2 })]);
    expect(w.log.lines.filter((l) => 'RouteWritesWithheld' in l)).toEqual([expect.objectContaining({ RouteWritesWithheld: 2, RouteTableId: full })]);

    // Ten minutes on: one probe to the full table, the other create still waits.
    let before = w.queue.messages.length;
    world.clock.advance(10 * 60_000);
    await reconcile(w.reconcileDeps());
    expect(creates(w.queue.messages.slice(before)).filter((m) => m.startsWith('full'))).toHaveLength(1);

    // A route gone from the table: room again, the mark goes and every create is sent.
    world.ec2.state.table(full).routes.splice(world.ec2.state.table(full).routes.findIndex((r) => r.origin !== 'CreateRouteTable'), 1);
    before = w.queue.messages.length;
    await reconcile(w.reconcileDeps());
    expect(creates(w.queue.messages.slice(before))).toEqual(['full node-a', 'full node-b', 'open node-a', 'open node-b']);
    expect(world.ec2.state.table(full).tags.map((t) => t.key)).not.toContain('podroute.io/route-table-full');
  });
});

describe('reconcile: pod CIDR allocation and conditions', () => {
  it('allocates distinct pod CIDRs inside the cluster CIDR for nodes without them and queues sync-node for each', async () => {
    const t1 = world.addClusterTable();
    await world.addNode('node-a');
    await world.addNode('node-b');
    const c = await world.addNode('node-c', { podCidrs: ['100.64.0.0/24'] });
    const w = await testWiring(world, local);
    // node-c's block is leased already (an unleased one is in known-bugs.test.ts).
    await w.wiring.cidrSets[0]?.occupy('100.64.0.0/24', 'node-c');

    const report = await reconcile(w.reconcileDeps());
    expect([...report.allocated].sort()).toEqual(['node-a', 'node-b']);
    const a = world.podCidrs('node-a');
    const b = world.podCidrs('node-b');
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(new Set([...a, ...b, '100.64.0.0/24']).size).toBe(3);
    for (const cidr of [...a, ...b]) expect(inside('100.64.0.0/16', cidr, 24)).toBe(true);
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}')).toBe(2);
    // Leases: the allocated blocks are owned by their nodes; node-c's block was adopted.
    const leases = await w.wiring.cidrSets[0]?.leases();
    expect(leases?.map((l) => `${l.cidr}=${l.owner}`).sort()).toEqual(
      [`${a[0]}=node-a`, `${b[0]}=node-b`, '100.64.0.0/24=node-c'].sort(),
    );
    expect(report.occupied).toBe(0);
    expect(sortedMessages(w.queue.messages)).toEqual(
      sortedMessages([
        { v: 1, kind: 'create', routeTableId: t1, destinationCidr: '100.64.0.0/24', node: 'node-c', instanceId: c.instanceId },
        { v: 1, kind: 'sync-node', node: 'node-a' },
        { v: 1, kind: 'sync-node', node: 'node-b' },
      ]),
    );
    // Routes mode: the allocation does not mark them reachable (the worker does, once routed); until
    // then they are NetworkUnavailable=True, never schedulable before routed.
    expect([world.networkUnavailable('node-a'), world.networkUnavailable('node-b'), world.networkUnavailable('node-c')]).toEqual(['True', 'True', 'True']);

    await drainQueue(w.queue, w.workerDeps());
    expect(world.routeSummary(t1)).toHaveLength(3);
    expect([world.networkUnavailable('node-a'), world.networkUnavailable('node-b'), world.networkUnavailable('node-c')]).toEqual(['False', 'False', 'False']);
  });

  it('patches NetworkUnavailable exactly where the plan says', async () => {
    const t1 = world.addClusterTable();
    const routed = async (name: string, cidr: string, networkUnavailable?: 'True' | 'False') => {
      const node = await world.addNode(name, { podCidrs: [cidr], ...(networkUnavailable ? { networkUnavailable } : {}) });
      world.ec2.state.addRoute({ routeTableId: t1, destinationCidr: cidr, instanceId: node.instanceId });
    };
    await routed('node-complete-unset', '100.64.1.0/24');
    await routed('node-complete-false', '100.64.2.0/24', 'False');
    await routed('node-complete-true', '100.64.3.0/24', 'True');
    await world.addNode('node-pending', { podCidrs: ['100.64.4.0/24'], networkUnavailable: 'True' });
    await world.addNode('node-outside', { podCidrs: ['10.200.0.0/24'] });
    const w = await testWiring(world, local);

    const report = await reconcile(w.reconcileDeps());
    expect(report.conditionsPatched).toBe(3);
    expect(world.kube.stats.get('PATCH /api/v1/nodes/{name}/status')).toBe(3);
    expect(
      ['node-complete-unset', 'node-complete-false', 'node-complete-true', 'node-pending', 'node-outside'].map((n) => `${n}=${world.networkUnavailable(n)}`),
    ).toEqual(['node-complete-unset=False', 'node-complete-false=False', 'node-complete-true=False', 'node-pending=True', 'node-outside=True']);
    expect(w.queue.messages.map((m) => m.kind)).toEqual(['create']);
  });

  it('allocates one block per family on a dual-stack cluster', async () => {
    const t1 = world.addClusterTable();
    const node = await world.addNode('node-a');
    const w = await testWiring(world, local, { CLUSTER_CIDRS: '100.64.0.0/16,fd00:10::/56' });

    const report = await reconcile(w.reconcileDeps());
    expect(report.allocated).toEqual(['node-a']);
    expect(world.podCidrs('node-a')).toEqual(['100.64.0.0/24', 'fd00:10::/64']);
    expect((await w.wiring.cidrSets[0]?.leases())?.map((l) => [l.cidr, l.owner])).toEqual([['100.64.0.0/24', 'node-a']]);
    expect((await w.wiring.cidrSets[1]?.leases())?.map((l) => [l.cidr, l.owner])).toEqual([['fd00:10::/64', 'node-a']]);
    expect(w.queue.messages).toEqual([{ v: 1, kind: 'sync-node', node: 'node-a' }]);

    expect(await drainQueue(w.queue, w.workerDeps())).toEqual(['sync-node:ack:created,created']);
    expect(world.routeSummary(t1)).toEqual([`100.64.0.0/24 -> ${node.instanceId}`, `fd00:10::/64 -> ${node.instanceId}`]);
    expect(world.networkUnavailable('node-a')).toBe('False');
  });

  it('assigns the allocated prefixes to the primary ENI in prefixes mode (masks 28/80)', async () => {
    // Prefixes come from the node subnet's reservations (lib/dataplane/prefixes/pod-ranges.ts).
    const vpc = world.ec2.state.addVpc({ cidrBlock: '10.0.0.0/16', ipv6CidrBlock: '2600:1f18:1234:5600::/56' });
    const subnet = world.ec2.state.addSubnet({ vpcId: vpc.id, cidrBlock: '10.0.0.0/20', ipv6CidrBlock: '2600:1f18:1234:5600::/64', availabilityZone: 'us-east-1a' });
    world.ec2.state.createReservation({ subnetId: subnet.id, cidr: '10.0.8.0/24', type: 'explicit', description: 'podroute' });
    world.ec2.state.createReservation({ subnetId: subnet.id, cidr: '2600:1f18:1234:5600::/65', type: 'explicit', description: 'podroute' });
    const node = await world.addNode('node-a', { instance: world.ec2.state.addInstance({ subnetId: subnet.id }) });
    const w = await testWiring(world, local, {
      MODE: 'prefixes',
      CLUSTER_CIDRS: '10.0.8.0/24,2600:1f18:1234:5600::/64',
      NODE_MASK_SIZE_IPV4: '28',
      NODE_MASK_SIZE_IPV6: '80',
    });

    const report = await reconcile(w.reconcileDeps());
    expect(report.allocated).toEqual(['node-a']);
    expect(report.errors).toEqual([]);
    const eni = world.ec2.state.primaryInterface(node.instanceId);
    expect(eni?.ipv4Prefixes).toEqual(['10.0.8.0/28']);
    expect(eni?.ipv6Prefixes).toEqual(['2600:1f18:1234:5600::/80']);
    expect(world.podCidrs('node-a')).toEqual(['10.0.8.0/28', '2600:1f18:1234:5600::/80']);
    expect(world.networkUnavailable('node-a')).toBe('False');
    expect(w.queue.messages).toEqual([]);
    expect(world.ec2.stats.count('CreateRoute')).toBe(0);

    // Converged: the next run writes nothing but its claim census record.
    world.resetStats();
    w.dynamo.reset();
    const again = await reconcile(w.reconcileDeps());
    expect(again.allocated).toEqual([]);
    expect([world.kubeWrites(), world.ec2Writes(), w.dynamo.writes()]).toEqual([0, 0, 1]);
  });
});

describe('reconcile: steady state', () => {
  it('makes no writes but its claim census record and sends no messages once everything converged', async () => {
    const [t1, t2] = [world.addClusterTable(), world.addClusterTable()];
    const stray = world.ec2.state.addInstance();
    world.ec2.state.addRoute({ routeTableId: t2, destinationCidr: '100.64.200.0/24', instanceId: stray.id });
    await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
    await world.addNode('node-b');
    await world.addNode('node-c', { podCidrs: ['100.64.3.0/24'] });
    const w = await testWiring(world, local);

    const first = await reconcile(w.reconcileDeps());
    expect(first.allocated).toEqual(['node-b']);
    expect(first.occupied).toBe(2);
    await drainQueue(w.queue, w.workerDeps());
    expect(world.routeSummary(t1)).toHaveLength(3);
    expect(world.routeSummary(t2)).toHaveLength(3);

    world.resetStats();
    w.dynamo.reset();
    w.queue.clear();
    const second = await reconcile(w.reconcileDeps());
    expect(second.plan).toMatchObject({ create: [], replace: [], delete: [] });
    expect(second.plan.nodes.every((n) => n.networkUnavailable === false && !n.patch)).toBe(true);
    expect({ messages: w.queue.sends.length, kube: world.kubeWrites(), ec2: world.ec2Writes(), dynamo: w.dynamo.writes() }).toEqual({
      messages: 0,
      kube: 0,
      ec2: 0,
      dynamo: 1,
    });
    // Reads: one listing each of tables, nodes and leases; the one write is the run's claim census
    // record (lib/usecases/claim-census.ts), which keeps a clear census fresh.
    expect(world.ec2.stats.calls).toEqual({ DescribeRouteTables: 1 });
    expect(world.kube.stats.all()).toEqual({ 'GET /api/v1/nodes': 1 });
    expect(Object.fromEntries(w.dynamo.counts)).toEqual({ QueryCommand: expect.any(Number), UpdateItemCommand: 1 });
    expect(await w.wiring.claimCensus?.read()).toEqual({ run: { at: world.clock.now(), clear: true } });
  });
});

describe('reconcile: leases', () => {
  it('occupies a node pod CIDR that has no lease, once', async () => {
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.5.0/24'] });
    const w = await testWiring(world, local);
    expect((await reconcile(w.reconcileDeps())).occupied).toBe(1);
    expect((await w.wiring.cidrSets[0]?.leases())?.map((l) => [l.cidr, l.owner])).toEqual([['100.64.5.0/24', 'node-a']]);
    w.dynamo.reset();
    expect((await reconcile(w.reconcileDeps())).occupied).toBe(0);
    // The run's claim census record only.
    expect(Object.fromEntries([...w.dynamo.counts].filter(([name]) => name !== 'QueryCommand' && name !== 'GetItemCommand'))).toEqual({ UpdateItemCommand: 1 });
  });

  // The grace logic over a store that records `since` (see known-bugs.test.ts for the DynamoDB store).
  async function timedDeps(w: TestWiring) {
    const set = await createCidrSet({ clusterCidr: '100.64.0.0/16', nodeMaskSize: 24, store: new TimedMemoryCidrStore(world.clock.now) });
    return { set, deps: withRoutesPlane({ ...w.reconcileDeps(), cidrSets: [set] }) };
  }

  it('reclaims a lease whose node is gone only after LEASE_GRACE_SECONDS', async () => {
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.0.0/24'] });
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '600' });
    const { set, deps } = await timedDeps(w);
    await set.occupy('100.64.0.0/24', 'node-a');
    expect(await set.allocateNext('node-gone')).toBe('100.64.1.0/24');

    world.clock.advance(600_000 - 1);
    const early = await reconcile(deps);
    expect(early.reclaimed).toEqual([]);
    expect((await set.leases()).map((l) => l.owner)).toEqual(['node-a', 'node-gone']);

    world.clock.advance(2);
    const late = await reconcile(deps);
    expect(late.reclaimed).toEqual([{ cidr: '100.64.1.0/24', owner: 'node-gone' }]);
    expect((await set.leases()).map((l) => l.owner)).toEqual(['node-a']);
    expect(w.log.lines.filter((l) => l.event === 'action' && l.action === 'release-cidr')).toHaveLength(1);
  });

  // Empty means stop: an empty node listing while leases exist, and the keyed reads find their
  // nodes (the listing is wrong), frees nothing and writes nothing.
  it('refuses the run, retryably, when the node list is empty while leases of existing nodes exist', async () => {
    world.addClusterTable();
    for (let i = 0; i < 6; i++) await world.addNode(`node-${i}`);
    const w = await testWiring(world, local, { LEASE_GRACE_SECONDS: '300' });
    const timed = await timedDeps(w);
    const { set } = timed;
    const source = timed.deps.nodes;
    const nodes = Object.assign(Object.create(source) as typeof source, { listNodes: async () => [] });
    const deps = { ...timed.deps, nodes };
    for (let i = 0; i < 6; i++) await set.allocateNext(`node-${i}`);
    world.clock.advance(3_600_000);
    await expect(reconcile(deps)).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/node listing is empty while 6 CIDR leases exist and a keyed read found 6 of their owners/) });
    expect((await set.leases()).length).toBe(6);
    expect(w.log.lines.filter((l) => l.event === 'reconcile.refused')).toHaveLength(1);
  });
});
