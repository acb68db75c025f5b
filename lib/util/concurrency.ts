/**
 * Runs `work` over `items` with at most `limit` calls in flight; rejects with the first failure
 * (calls already running finish, no new one starts in that lane).
 */
export async function forEachLimit<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a whole number >= 1, got ${limit}`);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
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
