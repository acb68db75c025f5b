/**
 * A hostile review of assignerOf (lib/dataplane/prefixes/assigner.ts): sequences in which reconcile
 * would leave a node's prefixes to a `sync-node` that does not exist or no longer runs, or that the
 * dry run would misreport. Each failed on the decider's first version.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { RecordingQueue } from '../support/world.ts';
import { BackloggedQueue, onePodRangeSubnet, admitAndStore } from './prefix-fakes.ts';
import type { FakeEc2 } from './prefix-fakes.ts';

/** A queue busy with other work (other joins, node-left checks): its backlog never reaches 0. */
const world = (env: Record<string, string> = {}) => {
  const queue = new BackloggedQueue(7);
  return { queue, ...onePodRangeSubnet(queue, env) };
};

/** EC2's AssignPrivateIpAddresses bucket is empty for the next `n` calls (the SDK's retries exhausted). */
function throttleNext(ec2: FakeEc2, n: number): void {
  const real = ec2.assignPrefix.bind(ec2);
  let left = n;
  ec2.assignPrefix = async (id, cidr) => {
    if (left-- > 0) throw Object.assign(new Error('RequestLimitExceeded: Request limit exceeded.'), { name: 'RequestLimitExceeded' });
    return real(id, cidr);
  };
}

describe('reconcile waits on a sync-node that was never queued', () => {
  it('a claimed pod CIDR reconcile adopted itself (no admission, no message): its first in-line assign throttled, the next run must not leave it to "the worker"', async () => {
    const { ec2, eni, nodes, fakes, queue, deps, delegated } = world();
    const claim = ['10.0.8.48/28', '2600:1f18:1234:0:8003::/80'];
    // Stored with its own pod CIDRs (written by a kubelet / provisioning tool, not by podroute's patch).
    nodes.add('joiner', eni.instanceId, claim);
    const stored = nodes.stored.get('joiner');
    if (stored) stored.metadata.creationTimestamp = new Date(deps.now()).toISOString();

    // The next reconcile runs seconds later (within ADMISSION_STAMP_SLACK_MS its adoption would pass
    // for an admission's lease, and wait at most the message window).
    fakes.advance(10_000);
    throttleNext(ec2, 1);
    const first = await reconcile(deps);
    // Run 1 adopted the claim (the node now leases it) and tried to assign it: throttled.
    expect(first.errors.map((e) => e.message)).toEqual([expect.stringContaining('RequestLimitExceeded')]);
    expect(delegated()).toEqual([]);
    // Nothing was ever queued for this node: no admission handled it and prefixes-mode reconcile queues no sync-node.
    expect(queue.messages.filter((m) => 'node' in m && m.node === 'joiner')).toEqual([]);

    fakes.advance(60_000);
    await reconcile(deps);
    // The first version failed here: the adopted lease now looks like an admission's, so run 2 answers
    // 'left-to-worker' and the node stays NetworkUnavailable for the whole lease grace.
    expect(fakes.log.lines.filter((l) => l.event === 'node-sync.left-to-worker')).toEqual([]);
    expect(delegated()).toEqual([...claim].sort());
    expect(nodes.networkUnavailable('joiner')).toBe('False');
  });
});

describe("readiness is bound to LEASE_GRACE_SECONDS (300..604800), not to the message's lifetime", () => {
  it('an admitted node whose message is gone (DLQ / left-to-reconcile) is still not ready an hour later with a 1-day grace and a busy queue', async () => {
    const { eni, nodes, fakes, deps, delegated } = world({ LEASE_GRACE_SECONDS: '86400' });
    const podCidrs = await admitAndStore('joiner', eni.instanceId, nodes, deps);
    // The message's last delivery is at most MAX_RECEIVE_COUNT (3) x visibility (180 s) = 540 s after
    // the join (decision 0033); the worker never assigned (e.g. it ended left-to-reconcile:instance-unlisted).
    for (let minute = 1; minute <= 60; minute++) {
      fakes.advance(60_000);
      await reconcile(deps);
    }
    // The first version failed here: an hour (and up to a week, LEASE_GRACE_SECONDS' max) of NetworkUnavailable=True.
    expect(delegated()).toEqual([...podCidrs].sort());
    expect(nodes.networkUnavailable('joiner')).toBe('False');
  });
});

describe('the dry run is silent when it cannot read the backlog the deployed run reads', () => {
  it('prefixes mode: an unreadable backlog makes the dry run plan an in-line assignment and report no error', async () => {
    const { eni, nodes, deps } = world();
    await admitAndStore('joiner', eni.instanceId, nodes, deps);

    // The deployed run (its role may read the queue) leaves the node to its message.
    const real = await reconcile(deps, { dryRun: true });
    expect(real.planned?.nodeSync.map((p) => p.outcome)).toEqual(['left-to-worker']);

    // The operator's credentials lack sqs:GetQueueAttributes (lib/cli/dry-run.ts logs to silentLogger).
    const denied = Object.assign(new RecordingQueue(), {
      backlog: async () => {
        throw Object.assign(new Error('User is not authorized to perform: sqs:getqueueattributes'), { name: 'AccessDenied' });
      },
    });
    const dry = await reconcile({ ...deps, queue: denied }, { dryRun: true });
    expect(dry.planned?.nodeSync.map((p) => p.outcome)).toEqual(['sync']);
    // The first version failed here: the dry run says it would assign, and nothing in its output says why it differs.
    expect(dry.errors.map((e) => e.step)).toContain('backlog');
  });
});
