/**
 * `onFirstUse` (lib/util/zod-mini.ts): a module's schema is built by its first use, once, and not
 * when the module is imported.
 */
import { describe, expect, it } from 'vitest';
import * as z from '../../lib/util/zod-mini.ts';

describe('onFirstUse', () => {
  it('builds nothing until the first call, then the same schema on every call', () => {
    let builds = 0;
    const schema = z.onFirstUse(() => {
      builds += 1;
      return z.object({ name: z.string() });
    });
    expect(builds).toBe(0);
    const first = schema();
    expect(schema()).toBe(first);
    expect(builds).toBe(1);
    expect(first.safeParse({ name: 'a' }).success).toBe(true);
    expect(first.safeParse({ name: 1 }).success).toBe(false);
  });

  it('builds again after a build that threw', () => {
    let builds = 0;
    const schema = z.onFirstUse(() => {
      builds += 1;
      if (builds === 1) throw new Error('first build fails');
      return z.string();
    });
    expect(() => schema()).toThrow('first build fails');
    expect(schema().safeParse('ok').success).toBe(true);
    expect(builds).toBe(2);
  });
});
