/**
 * The `podroute` command as a user runs it: the build of bin/podroute.ts that package.json's `bin`
 * ships, made once per test run (test/support/cli-build.global.ts). Spawning it costs a plain
 * Node start, where the sources under tsx cost a compile of every module per process.
 */
import { inject } from 'vitest';

/** Node's arguments that run the built command with `args`, after any `--import` hooks. */
export const builtCli = (args: readonly string[], hooks: readonly string[] = []): string[] =>
  [...hooks.flatMap((hook) => ['--import', hook]), inject('podrouteCli'), ...args];
