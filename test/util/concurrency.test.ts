import { describe, expect, it } from 'vitest';
import { firstThenEach, forEachLimit, mapSettled } from '../../lib/util/concurrency.ts';

/** A call that resolves when the test says so, so the order of events is the test's, not a timer's. */
function gate() {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('forEachLimit', () => {
  it('never has more than `limit` calls in flight and runs every item once, in order of start', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    await forEachLimit([...Array(10).keys()], 3, async (item) => {
      started.push(item);
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      inFlight--;
    });
    expect(most).toBe(3);
    expect(started).toEqual([...Array(10).keys()]);
  });

  it('starts no call in any lane after a failure', async () => {
    const slow = gate();
    const started: number[] = [];
    const run = forEachLimit([0, 1, 2, 3, 4], 2, async (item) => {
      started.push(item);
      if (item === 0) await slow.opened;
      if (item === 1) throw new Error('boom');
    });
    await expect(run).rejects.toThrow('boom');
    slow.open();
    await tick();
    await tick();
    expect(started).toEqual([0, 1]);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects the limit %s', async (limit) => {
    await expect(forEachLimit([1], limit, async () => undefined)).rejects.toBeInstanceOf(RangeError);
  });
});

describe('mapSettled', () => {
  it('returns every result in input order, failures included', async () => {
    const results = await mapSettled([3, 1, 2], 2, async (n) => {
      if (n === 1) throw new Error('one');
      return n * 10;
    });
    expect(results).toEqual([
      { status: 'fulfilled', value: 30 },
      { status: 'rejected', reason: new Error('one') },
      { status: 'fulfilled', value: 20 },
    ]);
  });
});

describe('firstThenEach', () => {
  it('runs the first item alone, then the others at most `limit` at once, and returns the results in input order', async () => {
    let inFlight = 0;
    const most: number[] = [];
    const results = await firstThenEach([0, 1, 2, 3, 4], 2, async (item) => {
      inFlight++;
      most[item] = inFlight;
      await tick();
      inFlight--;
      return item * 10;
    });
    expect(results).toEqual([0, 10, 20, 30, 40]);
    // The first had no company; each later one started with at most one other in flight.
    expect(most[0]).toBe(1);
    expect(Math.max(...most.slice(1))).toBe(2);
  });

  it.each([
    { name: 'the first fails: no other item is tried', failing: [0], started: [0], error: 'item 0' },
    { name: 'a later one fails: every item is tried, the first failure in input order rejects', failing: [3, 1], started: [0, 1, 2, 3], error: 'item 1' },
  ])('$name', async ({ failing, started: wanted, error }) => {
    const started: number[] = [];
    const run = firstThenEach([0, 1, 2, 3], 4, async (item) => {
      started.push(item);
      await tick();
      if (failing.includes(item)) throw new Error(`item ${item}`);
      return item;
    });
    await expect(run).rejects.toThrow(error);
    expect(started.sort()).toEqual(wanted);
  });

  it('resolves with nothing for no items', async () => {
    expect(await firstThenEach([], 2, async () => 1)).toEqual([]);
  });
});
