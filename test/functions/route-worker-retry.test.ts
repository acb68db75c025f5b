/**
 * Retries come back soon: a retryable failure sets the message's visibility to a short backoff
 * (instead of the queue's 180 s), and a sync-node for a node the API server has not stored yet is
 * retried once rather than dropped.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import type { Wiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { PodrouteError } from '../../lib/errors.ts';
import { NodeNotFoundError } from '../../lib/kube/kube-errors.ts';
import { memoryLogger } from '../../lib/log.ts';
import { retryBackoffSeconds } from '../../lib/messages/work-queue.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage } from '../../lib/usecases/route-worker.ts';
import type { NodeSource, RouteTables, RouteTargets } from '../../lib/usecases/ports.ts';
import { parseRouteTables } from '../../lib/routes/index.ts';
import { lambdaContext as localLambdaContext } from '../../infra/local/lambda-context.ts';
import { lambdaContext, sqsEvent, sqsRecord } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const config = loadConfig({ CLUSTER_NAME: 'c', CLUSTER_CIDRS: '10.244.0.0/16' });

function nodesWithout(): NodeSource {
  const gone = async (name: string): Promise<never> => {
    throw new NodeNotFoundError(name);
  };
  return {
    listNodes: async () => [],
    getNode: gone,
    setNetworkUnavailable: async () => 'gone',
    updatePodCidr: async () => 'gone',
    warn: async () => false,
  };
}

function throttledTables(): RouteTables {
  const throttled = async (): Promise<never> => {
    throw new PodrouteError('RequestLimitExceeded', { retryable: true });
  };
  return {
    listRouteTables: throttled,
    createRoute: throttled,
    replaceRoute: throttled,
    deleteRoute: throttled,
    describeRoute: throttled,
  };
}

function throttledTargets(): RouteTargets {
  return {
    prepareRouteTarget: async () => {
      throw new PodrouteError('RequestLimitExceeded', { retryable: true });
    },
  };
}

const syncNode = JSON.stringify({ v: 1, kind: 'sync-node', node: 'node-new' } satisfies WorkMessage);
const EXPECT = { instanceId: null, blackhole: false };
const remove = JSON.stringify({ v: 1, kind: 'delete', routeTableId: 'rtb-0123456789abcdef0', destinationCidr: '10.244.1.0/24', reason: 'no-owner', expect: EXPECT } satisfies WorkMessage);

describe('retries', () => {
  it.each([
    [1, 'retry', 'retry'],
    [2, 'ack', 'stale:node-gone'],
    [3, 'ack', 'stale:node-gone'],
  ] as const)('sync-node for a node not stored yet, delivery %i: %s (%s)', async (receiveCount, outcome, status) => {
    const deps = { clusterCidrs: config.clusterCidrs, routeTables: throttledTables(), routeTargets: throttledTargets(), nodes: nodesWithout(), cidrSets: [], plane: routesWorkerPlane([]), leaseGraceSeconds: 600, log: memoryLogger(), now: () => 0 };
    const result = await handleWorkMessage(syncNode, { receiveCount, maxReceiveCount: 3 }, deps);
    expect(result).toEqual({ outcome, status });
  });

  it.each([
    [1, 2],
    [2, 4],
    [5, 32],
    [9, 60],
  ])('backoff after delivery %i is %i s', (receiveCount, seconds) => {
    expect(retryBackoffSeconds(receiveCount)).toBe(seconds);
  });

  function wiringWith(routeTables: RouteTables, calls: Array<[string, number]>, timeScale?: number) {
    const log = memoryLogger();
    const wiring = {
      config,
      routeTables,
      routeTargets: throttledTargets(),
      plane: routesWorkerPlane(),
      nodes: nodesWithout(),
      queue: {
        send: async () => ({ sent: 0, duplicates: 0 }),
        retryAfter: async (handle: string, seconds: number) => {
          calls.push([handle, seconds]);
        },
      },
      log,
      now: () => 0,
      ...(timeScale === undefined ? {} : { timeScale }),
    } as unknown as Wiring;
    return { wiring, log };
  }

  it('the handler shortens a retryable failure\'s visibility, and hands the last receives back instead of failing them', async () => {
    const calls: Array<[string, number]> = [];
    const { wiring, log } = wiringWith(throttledTables(), calls);
    const handler = createRouteWorkerHandler(async () => wiring);
    const response = await handler(
      sqsEvent(sqsRecord('first', remove, 1), sqsRecord('second', remove, 2), sqsRecord('last', remove, 3)),
      lambdaContext(),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'first' }] });
    expect(calls).toEqual([['handle-first', 2]]);
    // One line per failed message, saying what becomes of it.
    expect(log.lines.filter((l) => l.event === 'message.failed').map((l) => [l.receiveCount, l.outcome])).toEqual([
      [1, 'retry'],
      [2, 'handed-back'],
      [3, 'handed-back'],
    ]);
    expect(log.lines.filter((l) => l.event === 'record.retry')).toEqual([]);
  });

  it.each([
    ['a plain error, first receive', new Error('bug'), 1, false, 'failed'],
    ['a retryable error, first receive', new PodrouteError('throttled', { retryable: true }), 1, true, 'retry'],
    ['a retryable error, last receive but one', new PodrouteError('throttled', { retryable: true }), 2, false, 'handed-back'],
  ] as const)('answers a throw out of handleWorkMessage as outcomeOf decides it: %s', async (_what, thrown, receiveCount, retried, outcome) => {
    const calls: Array<[string, number]> = [];
    const { wiring, log } = wiringWith(throttledTables(), calls);
    // handleWorkMessage reads the clock before its own try: a clock that throws escapes it.
    const handler = createRouteWorkerHandler(async () => ({ ...wiring, now: () => { throw thrown; } }));
    const response = await handler(sqsEvent(sqsRecord('crash', remove, receiveCount)), lambdaContext());
    expect(response).toEqual({ batchItemFailures: retried ? [{ itemIdentifier: 'crash' }] : [] });
    expect(log.lines.filter((l) => l.event === 'message.failed').map((l) => [l.messageId, l.outcome])).toEqual([['crash', outcome]]);
  });

  it('scales the visibility backoff by the wiring\'s time scale', async () => {
    const calls: Array<[string, number]> = [];
    const { wiring } = wiringWith(throttledTables(), calls, 2);
    const config5 = loadConfig({ CLUSTER_NAME: 'c', CLUSTER_CIDRS: '10.244.0.0/16', MAX_RECEIVE_COUNT: '5' });
    const handler = createRouteWorkerHandler(async () => ({ ...wiring, config: config5 }));
    await handler(sqsEvent(sqsRecord('second', remove, 2)), lambdaContext());
    expect(calls).toEqual([['handle-second', 2]]);
  });

  it('answers a mixed batch record by record: done, malformed, retryable, last receive, and one still running at the deadline', async () => {
    const calls: Array<[string, number]> = [];
    const hang = 'rtb-0000000000000000f';
    const good = 'rtb-0000000000000000a';
    const routeTables: RouteTables = {
      ...throttledTables(),
      // The three tables carry the cluster tag (they are listed).
      listRouteTables: async () => parseRouteTables({ RouteTables: [good, hang, 'rtb-0123456789abcdef0'].map((RouteTableId) => ({ RouteTableId, Routes: [] })) }),
      // The good record's route is already gone; the hanging one never answers.
      describeRoute: async (routeTableId: string) => {
        if (routeTableId === good) return null;
        if (routeTableId === hang) return new Promise<never>(() => undefined);
        throw new PodrouteError('RequestLimitExceeded', { retryable: true });
      },
    };
    const { wiring, log } = wiringWith(routeTables, calls);
    const handler = createRouteWorkerHandler(async () => wiring);
    const del = (routeTableId: string) => JSON.stringify({ v: 1, kind: 'delete', routeTableId, destinationCidr: '10.244.1.0/24', reason: 'no-owner', expect: EXPECT } satisfies WorkMessage);
    const response = await handler(
      sqsEvent(
        sqsRecord('done', del(good), 1),
        sqsRecord('malformed', '{"v":1,"kind":"create"', 1),
        sqsRecord('retryable', remove, 1),
        sqsRecord('last-receive', remove, 2),
        sqsRecord('hanging', del(hang), 1),
        sqsRecord('hanging-last', del(hang), 2),
      ),
      // 300 ms left: the handler answers after 200 ms, keeping a third back.
      localLambdaContext('podroute-route-worker', { timeoutSeconds: 0.3 }),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'retryable' }, { itemIdentifier: 'hanging' }] });
    expect(calls).toEqual([['handle-retryable', 2]]);
    const failed = log.lines.filter((l) => l.event === 'message.failed' || l.event === 'message.rejected');
    expect(failed.map((l) => l.outcome).sort()).toEqual(['failed', 'handed-back', 'handed-back', 'retry', 'retry']);
    expect(failed.filter((l) => (l.error as { name?: string } | undefined)?.name === 'DeadlineExceededError').map((l) => [l.messageId, l.outcome])).toEqual([
      ['hanging', 'retry'],
      ['hanging-last', 'handed-back'],
    ]);
  });
});
