/**
 * Every command's `--help`, `plan` and `reservations` start without the AWS SDK and the Kubernetes client: run
 * under a module hook that makes loading them fail (test/support/deny-sdk.mjs), from the build that
 * package.json's `bin` ships (infra/scripts/cli-build-options.ts), where they are reachable from the
 * entry only through the dynamic import()s of lib/cli/main.ts's LAZY_COMMANDS, and `help` and `plan`
 * from the sources too, as `npm run cli` runs them. On both, the hook is shown to bite.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { builtCli } from '../support/cli-binary.ts';
import { cliBuildOptions } from '../../infra/scripts/cli-build-options.ts';
import { main } from '../../lib/cli/main.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const SDK = /^(@aws-sdk|@smithy)\/|^@kubernetes\/client-node/;

/** The command, from the build or the sources, with the SDK denied; never throws on a non-zero exit. */
async function denied(args: string[], from: 'build' | 'sources' = 'build'): Promise<{ code: number; stdout: string; stderr: string }> {
  const deny = join(root, 'test', 'support', 'deny-sdk.mjs');
  const argv = from === 'build' ? builtCli(args, [deny]) : ['--import', 'tsx', '--import', deny, join(root, 'bin', 'podroute.ts'), ...args];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The command line run in this process, through the same lazy commands. */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), readFile: async () => '', env: {} });
  return { code, stdout, stderr };
}

describe('without the SDK (under the deny hook)', () => {
  it.each(['sources', 'build'] as const)('podroute --help and a plan of the examples run, from the %s', async (from) => {
    const help = await denied(['help'], from);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^podroute: pod-CIDR allocation/);
    const plan = await denied(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', 'examples/nodes.json', '--route-tables', 'examples/route-tables.json', '-o', 'yaml'], from);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^create:\n- routeTableId: rtb-/);
  }, 60_000);

  it('every command prints its help; -h and podroute help <command> print the same', async () => {
    const commands = ['plan', 'reservations', 'reconcile', 'doctor'];
    const spawned = await Promise.all(commands.map((command) => denied([command, '--help'])));
    for (const [i, command] of commands.entries()) {
      expect(spawned[i]).toMatchObject({ code: 0, stderr: '' });
      expect(spawned[i]?.stdout).toMatch(new RegExp(`^Usage: podroute ${command} `));
      expect(await inProcess([command, '-h'])).toEqual(spawned[i]);
      expect(await inProcess(['help', command])).toEqual(spawned[i]);
    }
  }, 60_000);

  it.each(['sources', 'build'] as const)('the hook bites, from the %s: reconcile and doctor, run, need the SDK', async (from) => {
    const flags = ['--cluster-name', 'c', '--cluster-cidrs', '10.244.0.0/16', '--cidr-table-name', 't', '--queue-url', 'http://127.0.0.1:9/q', '--region', 'us-east-1'];
    const runs = await Promise.all([denied(['reconcile', '--dry-run', ...flags], from), denied(['doctor', ...flags], from)]);
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/deny-sdk: (@aws-sdk|@smithy|@kubernetes)\S* was loaded/);
    }
  }, 60_000);
});

describe('the build', () => {
  it('reaches the SDK only through dynamically imported chunks', async () => {
    const result = await build({ ...cliBuildOptions(root, join(root, 'dist', 'lazy-load-test')), write: false });
    const outputs = result.metafile.outputs;
    const entry = Object.keys(outputs).find((file) => outputs[file]?.entryPoint === 'bin/podroute.ts') ?? '';
    /** The npm packages `file` loads, following static imports only unless `dynamic`. */
    const packagesOf = (file: string, dynamic: boolean, seen = new Set<string>()): string[] => {
      if (seen.has(file)) return [];
      seen.add(file);
      return (outputs[file]?.imports ?? []).flatMap((i) => {
        if (i.kind === 'dynamic-import' && !dynamic) return [];
        return i.external ? [i.path] : packagesOf(i.path, dynamic, seen);
      });
    };
    expect(entry).not.toBe('');
    expect(packagesOf(entry, false).filter((p) => SDK.test(p))).toEqual([]);
    expect(packagesOf(entry, true).filter((p) => SDK.test(p))).toEqual(expect.arrayContaining(['@aws-sdk/client-ec2', '@kubernetes/client-node']));
  }, 60_000);
});
