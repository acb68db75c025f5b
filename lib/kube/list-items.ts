/**
 * The JSON scanning a Kubernetes list body is read with (./list-stream.ts): `pickValue` parses only
 * the members a decision reads and steps over the rest (managedFields, images: most of a node's 10
 * to 15 KB) without building it. Pure.
 *
 * The scan finds where each member and each item ends (strings, with their escapes, and bracket
 * depth); what is kept is read by `JSON.parse`. A truncated or unbalanced value, or a kept part
 * that is not JSON, fails with a SyntaxError; the scalars of a skipped member are not checked
 * (docs/decisions/0016-scale-reconcile-read.md).
 */

/** Reads the value starting at `at`: what it stands for and the index just past it. */
export type ValueReader<T> = (text: string, at: number) => { value: T; end: number };

/** Which members of an object to keep: `true` keeps a member's value whole, a nested `Fields` keeps those of its own. */
export interface Fields {
  readonly [key: string]: Fields | true;
}

/**
 * The value starting at `at` with only the members `fields` names: of an object, each named member
 * is parsed whole (`true`) or picked by its own fields; the others are stepped over. A value that
 * is not an object is parsed whole. Duplicate keys: the last one wins, as in `JSON.parse`.
 */
export function pickValue(text: string, at: number, fields: Fields): { value: unknown; end: number } {
  if (text[at] !== '{') {
    const end = endOfValue(text, at);
    return { value: JSON.parse(text.slice(at, end)), end };
  }
  const out: Record<string, unknown> = {};
  let i = skipSpace(text, at + 1);
  if (text[i] === '}') return { value: out, end: i + 1 };
  for (;;) {
    expect(text, i, '"');
    const keyEnd = endOfString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes('\\') ? String(JSON.parse(text.slice(i, keyEnd))) : raw;
    i = skipSpace(text, keyEnd);
    expect(text, i, ':');
    i = skipSpace(text, i + 1);
    const wanted = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (wanted === undefined) {
      i = endOfValue(text, i);
    } else if (wanted === true) {
      const valueEnd = endOfValue(text, i);
      out[key] = JSON.parse(text.slice(i, valueEnd));
      i = valueEnd;
    } else {
      const picked = pickValue(text, i, wanted);
      out[key] = picked.value;
      i = picked.end;
    }
    i = skipSpace(text, i);
    if (text[i] === ',') {
      i = skipSpace(text, i + 1);
      continue;
    }
    expect(text, i, '}');
    return { value: out, end: i + 1 };
  }
}

export function expect(text: string, at: number, char: string): void {
  if (text[at] !== char) throw new SyntaxError(`expected ${JSON.stringify(char)} at ${at}, found ${JSON.stringify(text.slice(at, at + 10))}`);
}

/** JSON's whitespace: space, tab, line feed, carriage return (RFC 8259 section 2). */
export function skipSpace(text: string, from: number): number {
  let i = from;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i += 1;
    else return i;
  }
}

/** Index just past the string that opens at `at` (a `"`); a quote after an odd run of backslashes is escaped. */
function endOfString(text: string, at: number): number {
  const end = scanString(text, at);
  if (end < 0) throw new SyntaxError(`unterminated string at ${at}`);
  return end;
}

/** As `endOfString`, but -1 when the text ends before the string does. */
export function scanString(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

const SCALAR_END = /[,}\]\s]/g;

/** Index just past the JSON value that starts at `at`. */
function endOfValue(text: string, at: number): number {
  const end = scanValue(text, at, true);
  if (end < 0) throw new SyntaxError(`unexpected end of JSON in the value at ${at}`);
  return end;
}

/**
 * Index just past the JSON value that starts at `at`, or -1 when the text ends before the value
 * does. `final`: the text is all there is, so a scalar may end with it; otherwise a scalar that
 * reaches the end of the text may go on in the next part (-1). A value that cannot start at `at`
 * is a SyntaxError.
 */
export function scanValue(text: string, at: number, final: boolean): number {
  const first = text[at];
  if (first === '"') return scanString(text, at);
  if (first === '{' || first === '[') return scanNested(text, at);
  if (first === undefined) return -1;
  SCALAR_END.lastIndex = at;
  const match = SCALAR_END.exec(text);
  if (match === null && !final) return -1;
  const stop = match === null ? text.length : match.index;
  if (stop === at) throw new SyntaxError(`unexpected ${JSON.stringify(first)} at ${at}`);
  return stop;
}

/**
 * Index just past the object or array that opens at `at`, or -1 when the text ends first. Most of
 * a node's text is inside strings, which `indexOf` steps over; only the few characters between
 * two strings are looked at one by one, for brackets.
 */
function scanNested(text: string, at: number): number {
  let depth = 0;
  let i = at;
  for (;;) {
    const quote = text.indexOf('"', i);
    const stop = quote < 0 ? text.length : quote;
    for (let j = i; j < stop; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x7b || c === 0x5b) depth += 1;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) return j + 1;
    }
    if (quote < 0) return -1;
    i = scanString(text, quote);
    if (i < 0) return -1;
  }
}
