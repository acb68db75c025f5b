/**
 * The one bounded-concurrency loop and the helpers built on it. `forEachLimit` runs `work` over
 * `items`, in order, with at most `limit` calls in flight. Rejects with the first failure; from
 * then on no call starts (calls already running finish on their own). A caller that must wait for
 * those catches inside `work` instead.
 */
export async function forEachLimit<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a whole number >= 1, got ${limit}`);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        await work(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * Runs `work` over `items` with at most `limit` calls in flight and returns the settled results in
 * input order. Never an unbounded Promise.all against an API with a rate limit.
 */
export async function mapSettled<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<Array<PromiseSettledResult<R>>> {
  const results = new Array<PromiseSettledResult<R>>(items.length);
  await forEachLimit(items, limit, async (item, index) => {
    try {
      results[index] = { status: 'fulfilled', value: await work(item, index) };
    } catch (reason) {
      results[index] = { status: 'rejected', reason };
    }
  });
  return results;
}

/**
 * Runs `work` on the first item alone, then on the others with at most `limit` in flight: for work
 * whose first call prepares what the others reuse. Once the first has succeeded every item is
 * tried; resolves with the results in input order, or rejects with the first failure in that order.
 */
export async function firstThenEach<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (items.length === 0) return [];
  const [first, ...rest] = items as [T, ...T[]];
  const results: R[] = [];
  results.push(await work(first, 0));
  for (const result of await mapSettled(rest, limit, (item, index) => work(item, index + 1))) {
    if (result.status === 'rejected') throw result.reason;
    results.push(result.value);
  }
  return results;
}
