import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Fields, pickValue } from '../../lib/kube/list-items.ts';

/** What `pickValue` promises, computed from `JSON.parse` of the whole value. */
function pickedWhole(value: unknown, fields: Fields): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    const wanted = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (wanted !== undefined) out[key] = wanted === true ? member : pickedWhole(member, wanted);
  }
  return out;
}

describe('pickValue', () => {
  const fields: Fields = { kind: true, metadata: { name: true, labels: true }, status: { conditions: true } };

  it.each<[string, string, unknown]>([
    ['a node', '{"kind":"Node","metadata":{"name":"a","managedFields":[{"f:x":{}}],"labels":{"k":"v"}},"status":{"images":[{"names":["x"]}],"conditions":[]}}', { kind: 'Node', metadata: { name: 'a', labels: { k: 'v' } }, status: { conditions: [] } }],
    ['a member that is not an object where fields go deeper', '{"metadata":null,"status":[1,{"conditions":2}]}', { metadata: null, status: [1, { conditions: 2 }] }],
    ['a duplicate key: the last wins', '{"kind":"a","kind":"b","metadata":{"name":"x"},"metadata":{"labels":{}}}', { kind: 'b', metadata: { labels: {} } }],
    ['an escaped key', '{"k\\u0069nd":"Node","\\"x":1}', { kind: 'Node' }],
    ['a scalar', ' "x"', 'x'],
    ['whitespace everywhere', '{ "metadata" : { "name" : "a" , "uid" : "u" } , "x" : [ ] }', { metadata: { name: 'a' } }],
  ])('picks the named members of %s', (_case, text, expected) => {
    const at = text.search(/\S/);
    const { value, end } = pickValue(text, at, fields);
    expect(value).toEqual(expected);
    expect(end).toBe(text.length);
  });

  it('agrees with JSON.parse of the whole on any JSON value, and ends where the value ends', () => {
    const keys = fc.constantFrom('kind', 'metadata', 'name', 'labels', 'status', 'conditions', 'other');
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(keys, fc.jsonValue()), fc.boolean(), (inner, top, spaced) => {
        const value = { ...top, metadata: { name: inner, other: inner } };
        const text = `${JSON.stringify(value, null, spaced ? 2 : undefined)},`;
        const { value: picked, end } = pickValue(text, 0, fields);
        expect(picked).toEqual(pickedWhole(JSON.parse(text.slice(0, -1)), fields));
        expect(end).toBe(text.length - 1);
      }),
      { numRuns: 300 },
    );
  });

  it.each<[string, string]>([
    ['an unterminated string in a skipped member', '{"x":"abc}'],
    ['an unbalanced skipped member', '{"x":[1,{"y":2]}'],
    ['a kept member that is not JSON', '{"kind":tru}'],
    ['a missing colon', '{"kind" "Node"}'],
    ['a missing comma', '{"kind":"Node" "x":1}'],
    ['a truncated object', '{"kind":"Node",'],
  ])('throws a SyntaxError on %s', (_case, text) => {
    expect(() => pickValue(text, 0, fields)).toThrow(SyntaxError);
  });

  it('steps over the scalars of a skipped member without judging them (decision 0016)', () => {
    expect(pickValue('{"x":[tru, 01],"kind":"Node"}', 0, fields).value).toEqual({ kind: 'Node' });
  });
});
