import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitList } from '../../lib/kube/list-items.ts';

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
