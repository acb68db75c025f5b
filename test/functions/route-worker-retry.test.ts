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
import type { RouteMessage } from '../../lib/messages/route-message.ts';
import { handleRouteMessage } from '../../lib/usecases/route-worker.ts';
import type { NodeSource, RouteTables } from '../../lib/usecases/ports.ts';
import { lambdaContext, sqsEvent, sqsRecord } from '../support/world.ts';

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
    prepareRouteTarget: throttled,
  };
}

const syncNode = JSON.stringify({ v: 1, kind: 'sync-node', node: 'node-new' } satisfies RouteMessage);
const remove = JSON.stringify({ v: 1, kind: 'delete', routeTableId: 'rtb-0123456789abcdef0', destinationCidr: '10.244.1.0/24', reason: 'no-owner' } satisfies RouteMessage);

describe('retries', () => {
  it.each([
    [1, 'retry', 'retry'],
    [2, 'ack', 'stale:node-gone'],
    [3, 'ack', 'stale:node-gone'],
  ] as const)('sync-node for a node not stored yet, delivery %i: %s (%s)', async (receiveCount, outcome, status) => {
    const deps = { clusterCidrs: config.clusterCidrs, routeTables: throttledTables(), nodes: nodesWithout(), cidrSets: [], log: memoryLogger(), now: () => 0 };
    const result = await handleRouteMessage(syncNode, { receiveCount, maxReceiveCount: 3 }, deps);
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

  it('the handler shortens a retryable failure\'s visibility, and not a dead letter\'s', async () => {
    const calls: Array<[string, number]> = [];
    const wiring = {
      config,
      routeTables: throttledTables(),
      nodes: nodesWithout(),
      queue: {
        send: async () => ({ sent: 0, duplicates: 0 }),
        retryAfter: async (handle: string, seconds: number) => {
          calls.push([handle, seconds]);
        },
      },
      log: memoryLogger(),
      now: () => 0,
    } as unknown as Wiring;
    const handler = createRouteWorkerHandler(async () => wiring);
    const response = await handler(
      sqsEvent(sqsRecord('first', remove, 1), sqsRecord('second', remove, 2), sqsRecord('last', remove, 3)),
      lambdaContext(),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'first' }, { itemIdentifier: 'second' }, { itemIdentifier: 'last' }] });
    expect(calls).toEqual([
      ['handle-first', 2],
      ['handle-second', 4],
    ]);
  });
});
