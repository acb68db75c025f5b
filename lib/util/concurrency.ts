/**
 * The one bounded-concurrency loop: runs `work` over `items`, in order, with at most `limit` calls
 * in flight. Rejects with the first failure; from then on no call starts (calls already running
 * finish on their own). A caller that must wait for those catches inside `work` instead.
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
