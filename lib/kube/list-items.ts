/**
 * A Kubernetes list body (`{"kind": "NodeList", "metadata": {...}, "items": [...]}`) split into its
 * items' JSON texts and its other members, parsed. The node adapter parses and projects one item at
 * a time, so a page's full objects (10 to 15 KB of JSON each, most of it managedFields and images)
 * are never alive together: each is garbage as soon as its few fields are copied. Pure.
 *
 * The scan only finds where each member and each item ends (strings, with their escapes, and
 * bracket depth); every part is then read by `JSON.parse`, so what is not JSON still fails as
 * `JSON.parse` of the whole body would (a SyntaxError).
 */

export interface SplitList {
  /** The members other than `items`, parsed (`items` too when it is not an array). */
  members: Map<string, unknown>;
  /** Each element of `items`, as its JSON text; null when there is no `items` array. */
  items: string[] | null;
}

export function splitList(text: string): SplitList {
  const members = new Map<string, unknown>();
  let items: string[] | null = null;
  let i = skipSpace(text, 0);
  expect(text, i, '{');
  i = skipSpace(text, i + 1);
  if (text[i] === '}') return end(text, i, members, items);
  for (;;) {
    expect(text, i, '"');
    const keyEnd = endOfString(text, i);
    const key: unknown = JSON.parse(text.slice(i, keyEnd));
    i = skipSpace(text, keyEnd);
    expect(text, i, ':');
    i = skipSpace(text, i + 1);
    if (key === 'items' && text[i] === '[') {
      members.delete('items');
      items = [];
      i = skipSpace(text, i + 1);
      if (text[i] === ']') i += 1;
      else {
        for (;;) {
          const itemEnd = endOfValue(text, i);
          items.push(text.slice(i, itemEnd));
          i = skipSpace(text, itemEnd);
          if (text[i] === ',') {
            i = skipSpace(text, i + 1);
            continue;
          }
          expect(text, i, ']');
          i += 1;
          break;
        }
      }
    } else {
      const valueEnd = endOfValue(text, i);
      members.set(String(key), JSON.parse(text.slice(i, valueEnd)));
      if (key === 'items') items = null;
      i = valueEnd;
    }
    i = skipSpace(text, i);
    if (text[i] === ',') {
      i = skipSpace(text, i + 1);
      continue;
    }
    return end(text, i, members, items);
  }
}

function end(text: string, at: number, members: Map<string, unknown>, items: string[] | null): SplitList {
  expect(text, at, '}');
  if (skipSpace(text, at + 1) !== text.length) throw new SyntaxError(`unexpected text after the JSON object at ${at + 1}`);
  return { members, items };
}

function expect(text: string, at: number, char: string): void {
  if (text[at] !== char) throw new SyntaxError(`expected ${JSON.stringify(char)} at ${at}, found ${JSON.stringify(text.slice(at, at + 10))}`);
}

/** JSON's whitespace: space, tab, line feed, carriage return (RFC 8259 section 2). */
function skipSpace(text: string, from: number): number {
  let i = from;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i += 1;
    else return i;
  }
}

/** Index just past the string that opens at `at` (a `"`); a quote after an odd run of backslashes is escaped. */
function endOfString(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw new SyntaxError(`unterminated string at ${at}`);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

const STRUCTURE = /["{}[\]]/g;
const SCALAR_END = /[,}\]\s]/g;

/** Index just past the JSON value that starts at `at`. */
function endOfValue(text: string, at: number): number {
  const first = text[at];
  if (first === '"') return endOfString(text, at);
  if (first === '{' || first === '[') {
    let depth = 0;
    STRUCTURE.lastIndex = at;
    for (;;) {
      const match = STRUCTURE.exec(text);
      if (match === null) throw new SyntaxError(`unterminated ${first === '{' ? 'object' : 'array'} at ${at}`);
      const char = match[0];
      if (char === '"') {
        STRUCTURE.lastIndex = endOfString(text, match.index);
        continue;
      }
      if (char === '{' || char === '[') depth += 1;
      else if (--depth === 0) return match.index + 1;
    }
  }
  if (first === undefined) throw new SyntaxError(`unexpected end of JSON at ${at}`);
  SCALAR_END.lastIndex = at;
  const match = SCALAR_END.exec(text);
  const stop = match === null ? text.length : match.index;
  if (stop === at) throw new SyntaxError(`unexpected ${JSON.stringify(first)} at ${at}`);
  return stop;
}
