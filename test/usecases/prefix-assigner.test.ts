/**
 * Who delegates an admitted node's blocks (lib/dataplane/prefixes/assigner.ts): the pure decider
 * table by table, then reconcile over the prefixes fakes. While the admission's `sync-node` may
 * still be delivered, reconcile assigns nothing for the node (the two would spend EC2 bucket tokens
 * on the same prefix); once the queue is empty or the node is past the lease grace, reconcile does.
 */
import { describe, expect, it } from 'vitest';
import { ADMISSION_STAMP_SLACK_MS, assignerOf, awaitsDelegation } from '../../lib/dataplane/prefixes/assigner.ts';
import type { AssignFacts, Assigner } from '../../lib/dataplane/prefixes/assigner.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { RecordingQueue } from '../support/world.ts';
import { BackloggedQueue, admitAndStore, onePodRangeSubnet } from './prefix-fakes.ts';

const WINDOW = 570_000;
const young: AssignFacts = { nodeSyncMode: 'SyncFromCluster', awaitingDelegation: true, ageMs: 30_000, windowMs: WINDOW, backlog: 4 };

describe('assignerOf (pure)', () => {
  it.each<[string, Partial<AssignFacts>, Assigner]>([
    ['a young admitted node while the queue holds work: the worker', {}, 'worker'],
    ['the queue is empty: no message can still assign it', { backlog: 0 }, 'reconcile'],
    ['the backlog could not be read', { backlog: null }, 'reconcile'],
    ['past the window of its message (its last delivery, or the lease grace)', { ageMs: WINDOW }, 'reconcile'],
    ['just inside the window', { ageMs: WINDOW - 1 }, 'worker'],
    ['no creationTimestamp', { ageMs: null }, 'reconcile'],
    ['nothing awaits delegation', { awaitingDelegation: false }, 'reconcile'],
    ['SyncFromCloud: EC2 picks when node sync runs', { nodeSyncMode: 'SyncFromCloud' }, 'reconcile'],
  ])('%s', (_why, change, want) => {
    expect(assignerOf({ ...young, ...change })).toBe(want);
  });
});

describe('awaitsDelegation (pure)', () => {
  const CLUSTER = ['10.0.0.0/8', '2600:1f18:1234::/48'];
  const CREATED = Date.parse('2026-12-01T12:00:00Z');
  const node = (podCIDRs: string[], creationTimestamp: string | null = '2026-12-01T12:00:00Z') =>
    ({ metadata: { name: 'n', ...(creationTimestamp ? { creationTimestamp } : {}) }, spec: { podCIDRs } }) as Node;
  const BOTH = ['10.0.8.0/28', '2600:1f18:1234::/80'];
  const before = (cidrs: string[], since = CREATED - 50) => cidrs.map((cidr) => ({ cidr, since }));
  it.each<[string, Node, Array<{ cidr: string; since?: number }>, string[], boolean]>([
    ['both families leased before the node was created, none delegated', node(BOTH), before(BOTH), [], true],
    ['one of the two delegated', node(BOTH), before(BOTH), ['10.0.8.0/28'], true],
    ['both delegated', node(BOTH), before(BOTH), ['2600:1f18:1234::/80', '10.0.8.0/28'], false],
    ['leased within the creationTimestamp’s second (and clock slack)', node(BOTH), before(BOTH, CREATED + ADMISSION_STAMP_SLACK_MS), [], true],
    ['leased after the node was created: reconcile adopted it, no message exists', node(BOTH), before(BOTH, CREATED + ADMISSION_STAMP_SLACK_MS + 1), [], false],
    ['a lease of unknown age', node(BOTH), BOTH.map((cidr) => ({ cidr })), [], false],
    ['no creationTimestamp', node(BOTH, null), before(BOTH), [], false],
    ['one not leased to the node (a claim no admission took)', node(BOTH), before(['10.0.8.0/28']), [], false],
    ['a family missing: node sync allocates, nothing is admitted', node(['10.0.8.0/28']), before(['10.0.8.0/28']), [], false],
    ['a pod CIDR that does not parse', node(['10.0.8.0/28', 'nonsense']), before(['10.0.8.0/28']), [], false],
    ['no pod CIDRs', node([]), [], [], false],
  ])('%s', (_why, n, leases, delegated, want) => {
    expect(awaitsDelegation(n, CLUSTER, leases, delegated)).toBe(want);
  });
});

/** One admitted node stored as admitted (created at the fakes' clock), nothing queued or called yet. */
async function admittedNode() {
  const queue = new BackloggedQueue();
  const { ec2, eni, nodes, fakes, deps } = onePodRangeSubnet(queue);
  const podCidrs = await admitAndStore('joiner', eni.instanceId, nodes, deps);
  expect(podCidrs).toHaveLength(2);
  queue.clear();
  ec2.calls.length = 0;
  return { ec2, eni, nodes, deps, queue, podCidrs, advance: fakes.advance, log: fakes.log };
}

describe('reconcile leaves an admitted node’s delegation to its sync-node while that may still come', () => {
  it('assigns nothing while the queue holds work, then assigns once the queue is empty', async () => {
    const { ec2, eni, nodes, deps, queue, podCidrs } = await admittedNode();
    queue.depth = 3;
    const first = await reconcile(deps);
    expect(first.errors).toEqual([]);
    expect(ec2.count('assign')).toBe(0);
    expect(ec2.interfaces.get(eni.instanceId)?.prefixes).toEqual([]);
    expect(nodes.networkUnavailable('joiner')).not.toBe('False');

    // The dry run decides the same: node sync's delegation is left out of its actions.
    const dry = await reconcile(deps, { dryRun: true });
    expect(dry.planned?.nodeSync.find((p) => p.node === 'joiner')?.actions.filter((a) => a.kind === 'addAlias')).toEqual([]);

    // The queue drained without the node's message assigning (lost): the next run does it.
    queue.depth = 0;
    const dryNow = await reconcile(deps, { dryRun: true });
    expect(dryNow.planned?.nodeSync.find((p) => p.node === 'joiner')?.actions.some((a) => a.kind === 'addAlias')).toBe(true);
    const second = await reconcile(deps);
    expect(second.errors).toEqual([]);
    expect([...(ec2.interfaces.get(eni.instanceId)?.prefixes ?? [])].sort()).toEqual([...podCidrs].sort());
    expect(nodes.networkUnavailable('joiner')).toBe('False');
  });

  it('assigns once the node is past its message’s window, however long the queue stays busy', async () => {
    const { ec2, eni, nodes, deps, queue, podCidrs, advance } = await admittedNode();
    queue.depth = 50;
    await reconcile(deps);
    expect(ec2.count('assign')).toBe(0);

    // MAX_RECEIVE_COUNT 3 deliveries 180 s apart, then a 30 s run: 570 s, shorter than the 600 s grace.
    advance(569_000);
    await reconcile(deps);
    expect(ec2.count('assign')).toBe(0);
    advance(1_000);
    const late = await reconcile(deps);
    expect(late.errors).toEqual([]);
    expect([...(ec2.interfaces.get(eni.instanceId)?.prefixes ?? [])].sort()).toEqual([...podCidrs].sort());
    expect(nodes.networkUnavailable('joiner')).toBe('False');
  });

  it('reads the backlog only when a node awaits delegation, and a failed read leaves the assignment to reconcile', async () => {
    const { ec2, eni, deps, podCidrs, log } = await admittedNode();
    let reads = 0;
    const failing = Object.assign(new RecordingQueue(), {
      backlog: async () => {
        reads += 1;
        throw new Error('GetQueueAttributes: access denied');
      },
    });
    const report = await reconcile({ ...deps, queue: failing });
    // Told in the report (a dry run shows it too), and the node is assigned by reconcile.
    expect(report.errors).toEqual([{ step: 'backlog', message: expect.stringContaining('access denied') }]);
    expect(reads).toBe(1);
    expect([...(ec2.interfaces.get(eni.instanceId)?.prefixes ?? [])].sort()).toEqual([...podCidrs].sort());
    expect(log.lines).toContainEqual(expect.objectContaining({ event: 'reconcile.backlog-unread' }));

    // Settled now: nothing awaits delegation, so the queue is not asked.
    await reconcile({ ...deps, queue: failing });
    expect(reads).toBe(1);
  });
});
