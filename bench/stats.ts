/** Small helpers shared by the benchmarks. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** `value` rounded to `digits` decimal places. */
export const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;
