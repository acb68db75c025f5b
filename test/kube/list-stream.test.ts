import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListStream } from '../../lib/kube/list-stream.ts';
import { pickValue, type Fields, type ValueReader } from '../../lib/kube/list-items.ts';

const itemText: ValueReader<unknown> = (text, at) => {
  const { end } = pickValue(text, at, {});
  return { value: JSON.parse(text.slice(at, end)) as unknown, end };
};

/** The body pushed in the given parts (byte offsets of `bytes`), then ended, as members and items. */
function streamed(bytes: Buffer, cuts: readonly number[], read: ValueReader<unknown> = itemText, batchChars = 0): { members: Record<string, unknown>; items: unknown[] | null } {
  const stream = new ListStream(read, { batchChars });
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    stream.push(bytes.subarray(from, cut));
    from = cut;
  }
  stream.push(bytes.subarray(from));
  const { members, items } = stream.end();
  return { members: Object.fromEntries(members), items };
}

/** What `JSON.parse` of the whole body says, as members and items. */
function parsedWhole(text: string): { members: Record<string, unknown>; items: unknown[] | null } {
  const value = JSON.parse(text) as Record<string, unknown>;
  const { items, ...members } = value;
  return Array.isArray(items) ? { members, items } : { members: 'items' in value ? { ...members, items } : members, items: null };
}

const bytesOf = (text: string): Buffer => Buffer.from(text, "utf8");
const everyCut = (bytes: Buffer): number[][] => Array.from({ length: bytes.length + 1 }, (_, i) => [i]);

describe('ListStream', () => {
  it.each<[string, string]>([
    ['a NodeList page', '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"12","continue":"abc"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}'],
    ['no items', '{"kind":"NodeList","metadata":{}}'],
    ['an empty items array', '{"items":[],"kind":"NodeList"}'],
    ['items null', '{"items":null}'],
    ['items first, whitespace everywhere', ' \n{ "items" : [ {"a" : [1, 2, {"b": []}]} ,\t{"c":"}"} ] , "metadata" : { "x" : true } }\r\n'],
    ['strings holding brackets, quotes and escapes', '{"items":[{"s":"a\\"}]{[\\\\"},{"t":"\\\\\\\\"},"{\\"x\\":1}",["]"]]}'],
    ['scalars as items, a number last', '{"items":[1,-2.5e3,true,false,null,"x",12345]}'],
    ['a number as the last member', '{"items":[],"n":-12.5e-3}'],
    ['an empty object', '{}'],
    ['multi-byte characters', '{"items":[{"n":"n\\u00f6de","m":"ü€𝄞"}],"ö":"𝄞"}'],
  ])('%s, cut in two at every byte, reads as JSON.parse of the whole', (_case, text) => {
    const bytes = bytesOf(text);
    for (const cuts of everyCut(bytes)) expect(streamed(bytes, cuts)).toEqual(parsedWhole(text));
  });

  it('reads a body that arrives one byte at a time', () => {
    const text = '{"kind":"NodeList","items":[{"metadata":{"name":"a","labels":{"x":"}"}}},{"metadata":{"name":"b"}}],"metadata":{"continue":"c"}}';
    const bytes = bytesOf(text);
    expect(streamed(bytes, Array.from({ length: bytes.length }, (_, i) => i))).toEqual(parsedWhole(text));
  });

  it('reads each item with the reader it is given', () => {
    const fields: Fields = { metadata: { name: true } };
    const read: ValueReader<unknown> = (text, at) => pickValue(text, at, fields);
    const text = '{"items":[{"metadata":{"name":"a","uid":"1"},"status":{"images":[1,2]}},{"metadata":{"name":"b"}}]}';
    expect(streamed(bytesOf(text), [17, 40], read).items).toEqual([{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }]);
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
    ['a truncated body', '{"kind":"NodeList","items":[{"a":1},{"b":'],
    ['a body cut after the last item', '{"items":[{"a":1}]'],
  ])('throws a SyntaxError on %s, cut anywhere, as JSON.parse does', (_case, text) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    const bytes = bytesOf(text);
    for (const cuts of everyCut(bytes)) expect(() => streamed(bytes, cuts)).toThrow(SyntaxError);
  });

  it.each(['[1,2]', '"x"', '12', 'null'])('throws a SyntaxError on %s: a list body is a JSON object', (text) => {
    expect(() => streamed(bytesOf(text), [])).toThrow(SyntaxError);
  });

  it('agrees with JSON.parse on any list body, cut anywhere into any number of parts, with any read batch', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue()),
        fc.dictionary(fc.string({ unit: 'grapheme' }).filter((k) => k !== 'items'), fc.jsonValue()),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.nat({ max: 300 }),
        (items, members, spaced, offsets, batchChars) => {
          const text = JSON.stringify({ ...members, items }, null, spaced ? 2 : undefined);
          const bytes = bytesOf(text);
          expect(streamed(bytes, offsets.map((o) => o % (bytes.length + 1)), itemText, batchChars)).toEqual(parsedWhole(text));
        },
      ),
      { numRuns: 300 },
    );
  });
});
