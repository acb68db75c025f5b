/**
 * Backpressure in reconcile's fan-out: while the work queue still holds at least as many messages as
 * the plan asks for, the route messages are an earlier tick's and are not sent again (so a slow
 * worker never faces a growing pile of duplicates); a new node's sync message always goes out.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import { RecordingQueue, type World } from '../support/world.ts';

class BackloggedQueue extends RecordingQueue {
  constructor(private readonly depth: number) {
    super();
  }
  async backlog(): Promise<number> {
    return this.depth;
  }
}

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const kinds = (messages: WorkMessage[]) => messages.map((m) => m.kind).sort();

describe('reconcile backpressure', () => {
  it.each([
    // backlog, route messages sent, deferred
    [0, 2, 0],
    [1, 2, 0],
    [2, 0, 2],
    [50, 0, 2],
  ])('backlog %i: sends %i route messages, defers %i; the new node is synced either way', async (backlog, sent, deferred) => {
    world.addClusterTable();
    world.addClusterTable();
    await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'] }); // needs a route in each table
    await world.addNode('node-new'); // needs a pod CIDR: allocation plus a sync-node message
    const w = await testWiring(world, local);
    const queue = new BackloggedQueue(backlog);
    const report = await reconcile({ ...w.wiring, queue });
    expect(kinds(queue.messages).filter((k) => k !== 'sync-node')).toHaveLength(sent);
    expect(queue.messages.filter((m) => m.kind === 'sync-node')).toEqual([{ v: 1, kind: 'sync-node', node: 'node-new' }]);
    expect(report.messagesDeferred).toBe(deferred);
    expect(report.allocated).toEqual(['node-new']);
  });
});
