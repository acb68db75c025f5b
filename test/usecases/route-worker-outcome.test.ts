/** The one decider of a failed message's fate (lib/usecases/route-worker.ts, `outcomeOf`). */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, PodrouteError } from '../../lib/errors.ts';
import { outcomeOf } from '../../lib/usecases/route-worker.ts';
import { MessageRefusedError } from '../../lib/usecases/route-worker-claims.ts';
import { NodeNotStoredError } from '../../lib/usecases/route-worker-deps.ts';

const notStored = () => new NodeNotStoredError('node-a');
const throttled = () => new PodrouteError('RequestLimitExceeded', { retryable: true });

describe('outcomeOf', () => {
  it.each([
    ['a retryable failure, first of 5 receives', throttled(), 1, 5, 'retry'],
    ['a retryable failure, third of 5', throttled(), 3, 5, 'retry'],
    ['a retryable failure, last but one of 5: handed back to reconcile', throttled(), 4, 5, 'handed-back'],
    ['a retryable failure, last of 5', throttled(), 5, 5, 'handed-back'],
    ['a permanent failure, first receive', new InvalidInputError('bad'), 1, 5, 'failed'],
    ['a refused message, first receive: never retried', new MessageRefusedError('no-expect', 'refused'), 1, 5, 'refused'],
    ['a refused message, last but one', new MessageRefusedError('not-leased', 'refused'), 4, 5, 'refused'],
    ['something that is no PodrouteError (a bug)', new TypeError('x is undefined'), 1, 5, 'failed'],
    ['a thrown string', 'boom', 1, 5, 'failed'],
    ['a node not stored yet, first receive: retried shortly', notStored(), 1, 5, 'retry'],
    ['a node not stored yet, second receive: gone, acknowledged', notStored(), 2, 5, 'gone'],
    ['a node not stored yet, first of 2 receives: handed back', notStored(), 1, 2, 'handed-back'],
  ] as const)('%s -> %s', (_what, error, receiveCount, maxReceiveCount, outcome) => {
    expect(outcomeOf(error, { receiveCount, maxReceiveCount })).toBe(outcome);
  });
});
