/** The one decider of a failed message's fate (lib/usecases/delivery-outcome.ts, `outcomeOf`). */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, PodrouteError } from '../../lib/errors.ts';
import { DeadlineExceededError, NodeNotStoredError, NodeStillDeletingError, awaitsStoredNode, outcomeOf } from '../../lib/usecases/delivery-outcome.ts';
import { RouteTableFullError } from '../../lib/usecases/port-errors.ts';
import { MessageRefusedError } from '../../lib/usecases/route-worker-claims.ts';
import { outcomeOf as workerOutcomeOf } from '../../lib/usecases/route-worker.ts';

/** Every kind of failure a route-worker use case (or the handler's deadline) rejects with. */
const errors = {
  throttled: () => new PodrouteError('RequestLimitExceeded', { retryable: true }),
  deadline: () => new DeadlineExceededError(25_000),
  notStored: () => new NodeNotStoredError('node-a'),
  stillDeleting: () => new NodeStillDeletingError('node-a'),
  refused: () => new MessageRefusedError('not-leased', 'refused'),
  invalid: () => new InvalidInputError('bad'),
  tableFull: () => new RouteTableFullError('full', { operation: 'CreateRoute', routeTableId: 'rtb-1', code: 'RouteLimitExceeded', cause: undefined }),
  bug: () => new TypeError('x is undefined'),
  thrownString: () => 'boom',
} as const;

describe('outcomeOf: every failure at every receive of 5 (maxReceiveCount 5)', () => {
  // Receives 1..5. The last but one (4) hands back; the last (5) is reached only after a crash.
  it.each([
    ['throttled', ['retry', 'retry', 'retry', 'handed-back', 'handed-back']],
    ['deadline', ['retry', 'retry', 'retry', 'handed-back', 'handed-back']],
    ['notStored', ['retry', 'gone', 'gone', 'gone', 'gone']],
    ['stillDeleting', ['retry', 'retry', 'retry', 'deferred', 'deferred']],
    ['refused', ['refused', 'refused', 'refused', 'refused', 'refused']],
    ['invalid', ['failed', 'failed', 'failed', 'failed', 'failed']],
    ['tableFull', ['failed', 'failed', 'failed', 'failed', 'failed']],
    ['bug', ['failed', 'failed', 'failed', 'failed', 'failed']],
    ['thrownString', ['failed', 'failed', 'failed', 'failed', 'failed']],
  ] as const)('%s -> %j', (kind, outcomes) => {
    const seen = [1, 2, 3, 4, 5].map((receiveCount) => outcomeOf(errors[kind](), { receiveCount, maxReceiveCount: 5 }));
    expect(seen).toEqual(outcomes);
  });
});

describe('outcomeOf: small redrive limits', () => {
  it.each([
    // maxReceiveCount 3 (the default): one retry, then handed back.
    ['throttled', 1, 3, 'retry'],
    ['throttled', 2, 3, 'handed-back'],
    ['stillDeleting', 2, 3, 'deferred'],
    ['notStored', 1, 3, 'retry'],
    // maxReceiveCount 2 or 1: no receive is left to retry on; the first is already the hand-back.
    ['throttled', 1, 2, 'handed-back'],
    ['deadline', 1, 1, 'handed-back'],
    ['stillDeleting', 1, 2, 'deferred'],
    ['notStored', 1, 2, 'handed-back'],
    ['notStored', 2, 2, 'gone'],
    ['refused', 1, 1, 'refused'],
    ['invalid', 1, 1, 'failed'],
  ] as const)('%s, receive %i of %i -> %s', (kind, receiveCount, maxReceiveCount, outcome) => {
    expect(outcomeOf(errors[kind](), { receiveCount, maxReceiveCount })).toBe(outcome);
  });
});

describe('one decider', () => {
  it('the route worker answers with the same function', () => {
    expect(workerOutcomeOf).toBe(outcomeOf);
  });
});

describe('awaitsStoredNode: whether a node not stored yet is still waited for (and its admission routed)', () => {
  it.each([
    ['no delivery (a direct call)', undefined, true],
    ['the first receive', { receiveCount: 1, maxReceiveCount: 5 }, true],
    ['the second receive', { receiveCount: 2, maxReceiveCount: 5 }, false],
    ['the last receive', { receiveCount: 5, maxReceiveCount: 5 }, false],
  ] as const)('%s: %s', (_, delivery, waited) => {
    expect(awaitsStoredNode(delivery)).toBe(waited);
    // One rule: outcomeOf calls the same node gone exactly when it is no longer waited for.
    if (delivery !== undefined) expect(outcomeOf(new NodeNotStoredError('node-a'), delivery) === 'gone').toBe(!waited);
  });
});
