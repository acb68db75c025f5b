import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Fields, pickValue, splitList } from '../../lib/kube/list-items.ts';

/** What `JSON.parse` of the whole body says, in splitList's shape. */
function parsedWhole(text: string): { members: Record<string, unknown>; items: unknown[] | null } {
  const value = JSON.parse(text) as Record<string, unknown>;
  const { items, ...members } = value;
  return Array.isArray(items) ? { members, items } : { members: 'items' in value ? { ...members, items } : members, items: null };
}

function split(text: string): { members: Record<string, unknown>; items: unknown[] | null } {
  const { members, items } = splitList(text);
  return { members: Object.fromEntries(members), items: items === null ? null : items.map((item) => JSON.parse(item) as unknown) };
}

describe('splitList', () => {
  it.each<[string, string]>([
    ['a NodeList page', '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"12","continue":"abc"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}'],
    ['no items', '{"kind":"NodeList","metadata":{}}'],
    ['an empty items array', '{"items":[],"kind":"NodeList"}'],
    ['items null', '{"items":null}'],
    ['items first, whitespace everywhere', ' \n{ "items" : [ {"a" : [1, 2, {"b": []}]} ,\t{"c":"}"} ] , "metadata" : { "x" : true } }\r\n'],
    ['strings holding brackets, quotes and escapes', '{"items":[{"s":"a\\"}]{[\\\\"},{"t":"\\\\\\\\"},"{\\"x\\":1}",["]"]]}'],
    ['scalars as items', '{"items":[1,-2.5e3,true,false,null,"x"]}'],
    ['an empty object', '{}'],
    ['unicode', '{"items":[{"n":"n\\u00f6de","m":"ü"}]}'],
  ])('parts of %s are what JSON.parse of the whole gives', (_case, text) => {
    expect(split(text)).toEqual(parsedWhole(text));
  });

  it.each(['[1,2]', '"x"', '12', 'null'])('throws a SyntaxError on %s: a list body is a JSON object', (text) => {
    expect(() => splitList(text)).toThrow(SyntaxError);
  });

  it('keeps each item as its own text', () => {
    expect(splitList('{"items":[ {"a":1} , [2] ]}').items).toEqual(['{"a":1}', '[2]']);
  });

  it.each<[string, string]>([
    ['an unterminated string', '{"items":[{"a":"b}]}'],
    ['an unterminated item', '{"items":[{"a":1}'],
    ['a missing colon', '{"items" [1]}'],
    ['a missing comma between items', '{"items":[{"a":1} {"b":2}]}'],
    ['a malformed member', '{"metadata":{"a":},"items":[]}'],
    ['text after the object', '{"items":[]} x'],
    ['an empty body', ''],
    ['a trailing comma', '{"items":[1,],"a":1}'],
  ])('throws a SyntaxError on %s, as JSON.parse does', (_case, text) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(() => {
      const { items } = splitList(text);
      for (const item of items ?? []) JSON.parse(item);
    }).toThrow(SyntaxError);
  });

  it('agrees with JSON.parse on any list of JSON values, with any other members', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.dictionary(fc.string().filter((k) => k !== 'items'), fc.jsonValue()), fc.boolean(), (items, members, spaced) => {
        const text = JSON.stringify({ ...members, items }, null, spaced ? 2 : undefined);
        expect(split(text)).toEqual(parsedWhole(text));
      }),
      { numRuns: 300 },
    );
  });
});

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

  it('reads a list page with it, item by item', () => {
    const page = '{"kind":"NodeList","items":[{"kind":"Node","metadata":{"name":"a","uid":"1"}},{"kind":"Node","spec":{}}]}';
    expect(splitList(page, (text, at) => pickValue(text, at, fields)).items).toEqual([{ kind: 'Node', metadata: { name: 'a' } }, { kind: 'Node' }]);
  });
});
