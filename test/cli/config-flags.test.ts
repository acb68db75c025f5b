/** The settings commands take as flags or from the environment: a flag given wins, else the environment's value. */
import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../lib/cli/config-flags.ts';
import { commandFlags, parseFlags, stringOptions } from '../../lib/cli/main.ts';

const io = (env: Record<string, string | undefined> = {}) => {
  const out: string[] = [];
  return { out, io: { stdout: (text: string) => out.push(text), stderr: () => {}, readFile: async () => '', env } };
};

describe('configFromFlags', () => {
  it.each([
    ['the flag over the environment', ['--cluster-name', 'from-flag'], { CLUSTER_NAME: 'from-env' }, 'from-flag'],
    ['the environment without the flag', [], { CLUSTER_NAME: 'from-env' }, 'from-env'],
    ['nothing from neither', [], {}, undefined],
  ])('takes %s', (_what, args, env, expected) => {
    const flags = parseFlags(args, stringOptions(['cluster-name', 'queue-url']));
    expect(configFromFlags(flags, env, ['cluster-name', 'queue-url'])).toEqual({ CLUSTER_NAME: expected, QUEUE_URL: undefined });
  });

  it('refuses a flag the command did not name', () => {
    expect(() => parseFlags(['--queue-url', 'x'], stringOptions(['cluster-name']))).toThrow(/queue-url/);
  });
});

describe('commandFlags', () => {
  it.each([['--help'], ['-h']])('prints the help for %s and gives no flags', (flag) => {
    const { out, io: cli } = io();
    expect(commandFlags([flag], {}, cli, 'HELP TEXT')).toBeUndefined();
    expect(out).toEqual(['HELP TEXT']);
  });

  it('gives the flags and prints nothing without --help', () => {
    const { out, io: cli } = io();
    expect(commandFlags(['--mode', 'routes'], stringOptions(['mode']), cli, 'HELP TEXT')?.string('mode')).toBe('routes');
    expect(out).toEqual([]);
  });
});
