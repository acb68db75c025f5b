/**
 * A Kubernetes list body read as it arrives: `ListStream` takes the response body part by part
 * (`push`) and reads each element of `items` as soon as it is whole, with a `ValueReader` such as
 * `pickValue` (./list-items.ts), so a page is never held as one string. The reader must throw a
 * SyntaxError on an object that the text ends inside of, as `pickValue` does. Only the text of the
 * value being read is kept between parts: a few kilobytes, not the page. `end` answers the body's
 * other members and its items, or throws the SyntaxError `JSON.parse` of the whole would. Pure.
 */
import { StringDecoder } from 'node:string_decoder';
import { expect, scanString, scanValue, skipSpace, type ValueReader } from './list-items.ts';

/** A list body read: its members other than `items` (`items` too when it is not an array), and each element of `items` as the reader answers it (null when there is no `items` array). */
export interface StreamedList<T> {
  members: Map<string, unknown>;
  items: T[] | null;
}

type State = 'open' | 'firstKey' | 'key' | 'colon' | 'value' | 'firstItem' | 'item' | 'afterItem' | 'afterMember' | 'trailing';

/** A step that needs text past what has arrived. */
const MORE = -1;

/**
 * Text gathered before a read is tried: a few items, so that few of them straddle the read's end
 * and are read twice; small enough to stay out of V8's large-object space (objects of 128 KiB or
 * more go there, and only a full GC frees them).
 */
const READ_BATCH_CHARS = 64 * 1024;

export class ListStream<T> {
  private readonly decoder = new StringDecoder('utf8');
  private readonly members = new Map<string, unknown>();
  private items: T[] | null = null;
  private state: State = 'open';
  private key = '';
  /** Text not read yet. */
  private pending = '';
  /** A value that ran past the text is scanned again once `pending` is this long, so a long value costs a linear scan, not one per part. */
  private retryAt = 0;

  private readonly batchChars: number;

  /** `batchChars`: text gathered before a read is tried (tests read at every part with 0). */
  constructor(
    private readonly readItem: ValueReader<T>,
    options: { batchChars?: number } = {},
  ) {
    this.batchChars = options.batchChars ?? READ_BATCH_CHARS;
    this.retryAt = this.batchChars;
  }

  /** The next part of the body; a SyntaxError when what has arrived cannot start a list body. */
  push(part: Buffer): void {
    this.pending += this.decoder.write(part);
    if (this.pending.length >= this.retryAt) this.read(false);
  }

  /** The whole list, once the body has ended; a SyntaxError when it is truncated or not a list body. */
  end(): StreamedList<T> {
    this.pending += this.decoder.end();
    this.read(true);
    if (this.state !== 'trailing') throw new SyntaxError('unexpected end of JSON in the list body');
    return { members: this.members, items: this.items };
  }

  private read(final: boolean): void {
    const text = this.pending;
    let i = 0;
    for (;;) {
      const next = this.step(text, skipSpace(text, i), final);
      if (next === MORE) break;
      i = next;
    }
    this.pending = text.slice(i);
    this.retryAt = final ? 0 : Math.max(this.pending.length * 2, this.batchChars);
  }

  /** Reads one token or value at `at` (past whitespace): the index after it, or MORE. */
  private step(text: string, at: number, final: boolean): number {
    if (at >= text.length) {
      if (final && this.state !== 'trailing') throw new SyntaxError(`unexpected end of JSON at ${at}`);
      return MORE;
    }
    switch (this.state) {
      case 'open':
        expect(text, at, '{');
        this.state = 'firstKey';
        return at + 1;
      case 'firstKey':
        if (text[at] === '}') return this.to('trailing', at + 1);
        return this.to('key', at);
      case 'key': {
        expect(text, at, '"');
        const end = scanString(text, at);
        if (end < 0) return this.short(final, at);
        this.key = String(JSON.parse(text.slice(at, end)));
        return this.to('colon', end);
      }
      case 'colon':
        expect(text, at, ':');
        return this.to('value', at + 1);
      case 'value':
        return this.value(text, at, final);
      case 'firstItem':
        if (text[at] === ']') return this.to('afterMember', at + 1);
        return this.to('item', at);
      case 'item':
        return this.item(text, at, final);
      case 'afterItem':
        if (text[at] === ',') return this.to('item', at + 1);
        expect(text, at, ']');
        return this.to('afterMember', at + 1);
      case 'afterMember':
        if (text[at] === ',') return this.to('key', at + 1);
        expect(text, at, '}');
        return this.to('trailing', at + 1);
      case 'trailing':
        throw new SyntaxError(`unexpected text after the JSON object at ${at}`);
    }
  }

  /**
   * One element of `items`. An object is read at once: the reader fails (SyntaxError) on one that
   * the text ends inside of, and it is read again once more has arrived, so a whole item is scanned
   * once. Any other value is first found whole (a number may go on in the next part).
   */
  private item(text: string, at: number, final: boolean): number {
    if (text[at] !== '{' && scanValue(text, at, final) < 0) return this.short(final, at);
    let item: { value: T; end: number };
    try {
      item = this.readItem(text, at);
    } catch (error) {
      if (final || !(error instanceof SyntaxError)) throw error;
      return MORE;
    }
    this.items?.push(item.value);
    return this.to('afterItem', item.end);
  }

  /** The value of member `key`: `items` as an array is read item by item, any other value whole. */
  private value(text: string, at: number, final: boolean): number {
    if (this.key === 'items' && text[at] === '[') {
      this.members.delete('items');
      this.items = [];
      return this.to('firstItem', at + 1);
    }
    const end = scanValue(text, at, final);
    if (end < 0) return this.short(final, at);
    this.members.set(this.key, JSON.parse(text.slice(at, end)));
    if (this.key === 'items') this.items = null;
    return this.to('afterMember', end);
  }

  private to(state: State, at: number): number {
    this.state = state;
    return at;
  }

  /** A value that runs past the text: wait for more, or, at the end of the body, fail. */
  private short(final: boolean, at: number): number {
    if (final) throw new SyntaxError(`unexpected end of JSON in the value at ${at}`);
    return MORE;
  }
}
