/**
 * zod/mini ships without messages ("Invalid input" for everything) unless a locale is configured;
 * lib/util/zod-mini.ts registers English, so issues read as classic zod's did.
 */
import { describe, expect, it } from 'vitest';
import { parseNode } from '../../lib/nodes/node.ts';
import * as z from '../../lib/util/zod-mini.ts';
import { reject } from '../../lib/util/zod-mini.ts';

describe('zod/mini as shipped code uses it', () => {
  it.each([
    [{ metadata: { name: 5 } }, 'metadata.name: Invalid input: expected string, received number'],
    [{ metadata: { name: 'n', labels: { a: 1 } } }, 'metadata.labels.a: Invalid input: expected string, received number'],
    [{}, 'metadata: Invalid input: expected object, received undefined'],
  ])('words a default issue in English: %j', (value, message) => {
    expect(() => parseNode(value)).toThrow(`not a Kubernetes Node: ${message}`);
  });

  it('reject() records a custom issue at the path and fails the parse', () => {
    const schema = z.pipe(
      z.object({ a: z.number() }),
      z.transform((value: { a: number }, payload) => (value.a > 1 ? reject(payload, 'must be at most 1', ['a']) : value.a)),
    );
    expect(schema.safeParse({ a: 1 })).toEqual({ success: true, data: 1 });
    const result = schema.safeParse({ a: 2 });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ code: 'custom', path: ['a'], message: 'must be at most 1' })]);
  });
});
