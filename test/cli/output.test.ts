/**
 * The shared output formatter (lib/cli/output.ts): the -o flag, JSON on one line, YAML that reads
 * back as the same data (js-yaml, YAML 1.2) and never as another type under YAML 1.1 readers.
 */
import fc from 'fast-check';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { formatOutput, outputFormat, table, toYaml } from '../../lib/cli/output.ts';
import { UsageError } from '../../lib/cli/main.ts';

const flags = (values: Record<string, string>) => ({ string: (name: string) => values[name] });

describe('outputFormat', () => {
  it.each<[Record<string, string>, string]>([
    [{}, 'json'],
    [{ output: 'yaml' }, 'yaml'],
    [{ format: 'table' }, 'table'],
    [{ output: 'table', format: 'table' }, 'table'],
  ])('%j -> %s', (values, format) => {
    expect(outputFormat(flags(values), ['json', 'yaml', 'table'], 'json')).toBe(format);
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ output: 'wide' }, /^-o \(--output\) must be json, yaml or table, not "wide"$/],
    [{ format: '' }, /not ""$/],
    [{ output: 'json', format: 'yaml' }, /disagree; --format is the old name of -o, give one$/],
  ])('%j is a usage error', (values, message) => {
    const call = () => outputFormat(flags(values), ['json', 'yaml', 'table'], 'json');
    expect(call).toThrow(UsageError);
    expect(call).toThrow(message);
  });
});

describe('formatOutput', () => {
  const data = { create: [{ destinationCidr: '10.244.2.0/24' }], nodes: [] };
  it.each([
    ['json', '{"create":[{"destinationCidr":"10.244.2.0/24"}],"nodes":[]}\n'],
    ['yaml', 'create:\n- destinationCidr: 10.244.2.0/24\nnodes: []\n'],
    ['table', 'the table\n'],
    ['sh', 'the table\n'],
  ])('%s', (format, text) => {
    expect(formatOutput(format, data, () => 'the table\n')).toBe(text);
  });
});

describe('toYaml', () => {
  it.each<[unknown, string]>([
    [{ a: 1, b: true, c: null, d: 'x' }, 'a: 1\nb: true\nc: null\nd: x\n'],
    [{ list: [1, [2, 3], { k: 'v', l: [] }], empty: {} }, 'list:\n- 1\n- - 2\n  - 3\n- k: v\n  l: []\nempty: {}\n'],
    [{ outer: { inner: { leaf: 'ip-10-0-1-11.ec2.internal (i-0a1)' } } }, 'outer:\n  inner:\n    leaf: ip-10-0-1-11.ec2.internal (i-0a1)\n'],
    [[], '[]\n'],
    ['plain', 'plain\n'],
    [{ skipped: undefined, kept: 0 }, 'kept: 0\n'],
  ])('%j', (value, text) => {
    expect(toYaml(value)).toBe(text);
  });

  // Each would be read as something else unquoted: a YAML 1.1 boolean, a number, null, a date,
  // a comment, a mapping, an empty value, leading or trailing blanks.
  it.each(['yes', 'No', 'on', 'OFF', 'y', 'true', 'null', '~', '1', '007', '1.5', '1e3', '0x1F', '2026-01-01', '#x', 'a: b', 'a #b', '', ' x', 'x ', '- x', 'line\nbreak', 'a\u2028b', 'tab\there', '"q"', "'q'", '*alias', '&anchor', '!tag', '%dir', '@at', '`tick', '{}', '[]', 'a,b'])(
    '%j is quoted and reads back as the same string',
    (text) => {
      const yaml = toYaml({ key: text });
      expect(yaml.startsWith('key: "')).toBe(true);
      expect(load(yaml)).toEqual({ key: text });
    },
  );

  it('reads back as the same data for any JSON value (js-yaml)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const data = JSON.parse(JSON.stringify(value)) as unknown;
        expect(load(toYaml(data))).toEqual(data);
      }),
      { numRuns: 300 },
    );
  });

  it('reads back as the same data for strings of any characters', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }), { maxKeys: 4 }), (value) => {
        expect(load(toYaml(value))).toEqual(value);
      }),
      { numRuns: 100 },
    );
  });
});

describe('table', () => {
  it('pads columns to the widest cell, two spaces apart, no trailing blanks', () => {
    expect(table(['A', 'LONG HEADER'], [['wide cell', ''], ['x', 'y']])).toEqual(['A          LONG HEADER', 'wide cell', 'x          y']);
  });
});
