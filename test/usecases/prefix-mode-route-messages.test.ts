/**
 * Prefixes mode and a route message (a create, replace or delete left in the queue after MODE
 * changed): the prefixes plane answers it itself, acknowledged as `stale:no-route-plane` with an
 * info line, and no route call is made. Wired by buildWiring over the EC2 emulator and dynalite.
 */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import type { LocalDynamo } from '../support/dynalite.ts';
import { useWorldAndDynamo } from '../support/world-and-dynamo.ts';
import { testWiring } from '../support/wiring.ts';
import type { World } from '../support/world.ts';

let local: LocalDynamo;
let world: World;
useWorldAndDynamo((parts) => ({ world, local } = parts));

const FIRST = { receiveCount: 1, maxReceiveCount: 3 };
const TABLE = 'rtb-0123456789abcdef0';
const INSTANCE = 'i-0123456789abcdef0';

describe('prefixes mode: route messages', () => {
  it.each<[string, WorkMessage]>([
    ['create', { v: 1, kind: 'create', routeTableId: TABLE, destinationCidr: '10.0.8.0/28', node: 'node-a', instanceId: INSTANCE }],
    ['replace', { v: 1, kind: 'replace', routeTableId: TABLE, destinationCidr: '10.0.8.0/28', node: 'node-a', instanceId: INSTANCE, reason: 'blackhole' }],
    ['delete', { v: 1, kind: 'delete', routeTableId: TABLE, destinationCidr: '10.0.8.0/28', reason: 'no-owner', expect: { instanceId: INSTANCE, blackhole: false } }],
  ])('a %s is acknowledged as stale:no-route-plane, with no EC2 call and no error', async (_, message) => {
    const w = await testWiring(world, local, { MODE: 'prefixes', CLUSTER_CIDRS: '10.0.0.0/16' });
    const log = memoryLogger();
    world.resetStats();

    expect(await handleWorkMessage(JSON.stringify(message), FIRST, { ...w.workerDeps(), log })).toEqual({ outcome: 'ack', status: 'stale:no-route-plane' });
    expect(world.ec2.stats.calls).toEqual({});
    expect(log.lines.filter((line) => line.level !== 'info')).toEqual([]);
    expect(log.lines.filter((line) => line.event === 'message.done').map((line) => line.status)).toEqual(['stale:no-route-plane']);
  });
});
