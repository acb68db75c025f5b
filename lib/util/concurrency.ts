/**
 * Runs `work` over `items` with at most `limit` calls in flight and returns the settled results in
 * input order. Never an unbounded Promise.all against an API with a rate limit.
 */
export async function mapSettled<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<Array<PromiseSettledResult<R>>> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a whole number >= 1, got ${limit}`);
  const results = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = { status: 'fulfilled', value: await work(items[index] as T, index) };
      } catch (reason) {
        results[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
