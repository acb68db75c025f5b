/** The Lambda concurrency decision of `podroute doctor` (lib/cli/doctor-concurrency.ts), table-driven. */
import { describe, expect, it } from 'vitest';
import { judgeConcurrency } from '../../lib/cli/doctor-concurrency.ts';

describe('judgeConcurrency', () => {
  it.each([
    // limit, unreserved, asked, held by the stack already, status, the room named
    [1000, 1000, 11, 0, 'ok', 'the params reserve 11 of the 900 the account can spare'],
    [111, 111, 11, 0, 'ok', 'the params reserve 11 of the 11 the account can spare'],
    [110, 110, 11, 0, 'FAIL', 'the params reserve 11, the account can spare 10'],
    [10, 10, 1, 0, 'FAIL', 'the params reserve 1, the account can spare 0'],
    [10, 10, 0, 0, 'ok', 'no reserved concurrency asked'],
    [111, 100, 11, 11, 'ok', 'the params reserve 11 of the 11 the account can spare'],
    [111, 100, 12, 11, 'FAIL', 'the params reserve 12, the account can spare 11'],
    [1000, 50, 11, 0, 'FAIL', 'the params reserve 11, the account can spare 0'],
  ])('quota %i, %i unreserved, asking %i with %i held: %s', (limit, unreserved, asked, held, status, detail) => {
    const result = judgeConcurrency({ limit, unreserved }, asked, held);
    expect(result.status).toBe(status);
    expect(result.detail.startsWith(detail)).toBe(true);
  });
});
