/**
 * `--help`, `plan` and `reservations` start without the AWS SDK and the Kubernetes client: run from
 * the sources under a module hook that makes loading them fail (test/support/deny-sdk.mjs), and, in
 * the build (infra/scripts/cli-build-options.ts), reachable from the entry only through the dynamic
 * import()s of lib/cli/main.ts's LAZY_COMMANDS.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { cliBuildOptions } from '../../infra/scripts/cli-build-options.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const SDK = /^(@aws-sdk|@smithy)\/|^@kubernetes\/client-node/;

/** The command from the sources with the SDK denied; never throws on a non-zero exit. */
async function denied(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = ['--import', 'tsx', '--import', join(root, 'test', 'support', 'deny-sdk.mjs'), join(root, 'bin', 'podroute.ts'), ...args];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('without the SDK (sources, under the deny hook)', () => {
  it('podroute --help and a plan of the examples run', async () => {
    const help = await denied(['help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^podroute: pod-CIDR allocation/);
    const plan = await denied(['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', 'examples/nodes.json', '--route-tables', 'examples/route-tables.json', '-o', 'yaml']);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^create:\n- routeTableId: rtb-/);
  }, 60_000);

  it('the hook bites: reconcile, which needs the SDK, cannot even print its help', async () => {
    const reconcile = await denied(['reconcile', '--help']);
    expect(reconcile.code).toBe(1);
    expect(reconcile.stderr).toMatch(/deny-sdk: (@aws-sdk|@smithy|@kubernetes)\S* was loaded/);
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
