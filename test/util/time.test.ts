import { describe, expect, it } from 'vitest';
import { rfc3339 } from '../../lib/util/time.ts';

describe('rfc3339', () => {
  it.each([
    [Date.UTC(2026, 0, 1), '2026-01-01T00:00:00Z'],
    [Date.UTC(2026, 0, 1, 12, 30, 5, 999), '2026-01-01T12:30:05Z'],
    [new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 1)), '1999-12-31T23:59:59Z'],
  ])('%s is %s (whole seconds, as metav1.Time is stored)', (at, text) => {
    expect(rfc3339(at)).toBe(text);
  });
});
