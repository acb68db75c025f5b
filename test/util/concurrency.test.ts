import { describe, expect, it } from 'vitest';
import { forEachLimit, mapSettled } from '../../lib/util/concurrency.ts';

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
