/**
 * A tiny XML writer for EC2 Query responses. Elements are `Xml` values; plain strings are always
 * text and always escaped, so a caller's value (a tag, say) can never turn into markup.
 */

export class Xml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

export type XmlContent = Xml | string | number | boolean | undefined | null | readonly XmlContent[];

export function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c);
}

/** `<name>content</name>`; an undefined or null content leaves the element out entirely. */
export function el(name: string, content: XmlContent): Xml {
  if (content === undefined || content === null) return new Xml('');
  return new Xml(`<${name}>${render(content)}</${name}>`);
}

/** A list the EC2 way: `<name><item>..</item>...</name>`. */
export function set<T>(name: string, items: readonly T[], item: (value: T) => XmlContent): Xml {
  return new Xml(`<${name}>${items.map((value) => `<item>${render(item(value))}</item>`).join('')}</${name}>`);
}

export function render(content: XmlContent): string {
  if (content === undefined || content === null) return '';
  if (content instanceof Xml) return content.markup;
  if (Array.isArray(content)) return content.map((c: XmlContent) => render(c)).join('');
  if (typeof content === 'string') return escapeXml(content);
  return String(content);
}
