/**
 * The one output formatter of every command that prints a result: `-o json|yaml|table` (and the
 * formats a command adds, such as `sh` for reservations). JSON is one line, YAML one document of the
 * same data, the table the command's own readable rendering. A command's default does not depend on
 * whether stdout is a terminal, as neither kubectl's `-o` nor the AWS CLI's `--output` do: a script
 * reads what its author saw. `--format` is the name 0.2 gave the flag and stays accepted.
 */
import { UsageError } from './main.ts';

/** The parseArgs options every printing command spreads into its own. */
export const OUTPUT_OPTIONS = {
  output: { type: 'string', short: 'o' },
  format: { type: 'string' },
} as const;

interface OutputFlags {
  string(name: string): string | undefined;
}

/** The `-o` (or `--format`) value among `allowed`, else `fallback`; anything else is a usage error. */
export function outputFormat<F extends string>(flags: OutputFlags, allowed: readonly F[], fallback: F): F {
  const output = flags.string('output');
  const format = flags.string('format');
  if (output !== undefined && format !== undefined && output !== format) {
    throw new UsageError(`-o ${JSON.stringify(output)} and --format ${JSON.stringify(format)} disagree; --format is the old name of -o, give one`);
  }
  const value = output ?? format ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`-o (--output) must be ${orList(allowed)}, not ${JSON.stringify(value)}`);
  }
  return value as F;
}

const orList = (items: readonly string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1) ?? ''}`;

/** `data` printed as `format`: JSON and YAML here, `table` (or a command's own format) by `render`. */
export function formatOutput(format: string, data: unknown, render: () => string): string {
  if (format === 'json') return `${JSON.stringify(data)}\n`;
  if (format === 'yaml') return toYaml(data);
  return render();
}

/** Rows under a header, columns two spaces apart, no trailing blanks. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [render(header), ...rows.map(render)];
}

/**
 * JSON data as one block-style YAML document, the layout kubectl's `-o yaml` prints (a list under a
 * key starts at the key's indent). What JSON.stringify drops (undefined, functions) is dropped here.
 */
export function toYaml(value: unknown): string {
  const data = JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
  return `${yamlBlock(data, 0).join('\n')}\n`;
}

function yamlBlock(value: unknown, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value) && value.length > 0) {
    return value.flatMap((item: unknown) => {
      if (!isNested(item)) return [`${pad}- ${yamlScalar(item)}`];
      const [first = '', ...rest] = yamlBlock(item, indent + 2);
      return [`${pad}- ${first.slice(indent + 2)}`, ...rest];
    });
  }
  if (isRecord(value) && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, item]) => {
      const name = `${pad}${yamlString(key)}:`;
      if (!isNested(item)) return [`${name} ${yamlScalar(item)}`];
      return [name, ...yamlBlock(item, Array.isArray(item) ? indent : indent + 2)];
    });
  }
  return [`${pad}${yamlScalar(value)}`];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNested = (value: unknown): boolean => (Array.isArray(value) ? value.length > 0 : isRecord(value) && Object.keys(value).length > 0);

function yamlScalar(value: unknown): string {
  if (Array.isArray(value)) return '[]';
  if (isRecord(value)) return '{}';
  if (typeof value === 'string') return yamlString(value);
  return String(value);
}

/** Strings a YAML 1.1 or 1.2 reader would take for a boolean, null, number or date. */
const RESOLVES_TO_OTHER = [
  /^(true|false|yes|no|on|off|y|n|null)$/i,
  /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/,
  /^0[xob][0-9a-f]+$/i,
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/,
];

/**
 * A string bare when YAML reads it back as the same string, else double-quoted. JSON's escapes are
 * a subset of YAML's double-quoted ones (YAML 1.2.2, 5.7 "Escaped Characters"); the characters YAML
 * does not allow unescaped (5.1 "Character Set": DEL, C1 controls, U+2028/9, the BOM) are escaped too.
 */
function yamlString(text: string): string {
  const plain = /^[A-Za-z0-9]([A-Za-z0-9 ._/()-]*[A-Za-z0-9._/)])?$/.test(text) && !RESOLVES_TO_OTHER.some((pattern) => pattern.test(text));
  if (plain) return text;
  return JSON.stringify(text).replace(/[\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
