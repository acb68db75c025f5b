import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { main } from '../../infra/local/start.ts';
import { HOSTILE_SCENARIOS } from '../../infra/local/sandbox/hostile.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'podroute-start-'));

function start(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The CLI's flag checks and help in this process (no sandbox starts for them); the one test of the
 * process boundary (the entry point, its exit status and its streams) spawns the binary for a real run.
 */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}

const ms = z.number().int().nonnegative();
const reportSchema = z.strictObject({
  nodes: ms,
  nodesReady: ms,
  routesExpected: ms,
  routesProgrammed: ms,
  duplicateCidrs: ms,
  leakedCidrs: ms,
  wrongRoutes: ms,
  dlqMessages: ms,
  ec2Calls: z.record(z.string(), ms),
  throttled: ms,
  convergedMs: ms,
  joinToReadyMs: z.strictObject({ p50: ms, p99: ms }),
  deletesRefused: ms,
  podCidrsOutsideSubnet: ms.nullable(),
  routesToNonLeaseholder: ms,
  hostileNodes: ms,
  honestNodesNotReady: ms,
  readyNodesTainted: ms,
  liveRoutesRemoved: ms,
});

describe('npm start', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a small cluster to convergence, exits 0 and writes the report contract', async () => {
    const reportFile = join(dir, 'report.json');
    const run = await start(['--nodes', '6', '--leave', '2', '--tick-ms', '500', '--report', reportFile, '--log-file', join(dir, 'handlers.log')]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\s*✓ result\s+converged$/m);
    const report = reportSchema.parse(JSON.parse(readFileSync(reportFile, 'utf8')));
    expect(report).toMatchObject({ nodes: 4, nodesReady: 4, routesExpected: 8, routesProgrammed: 8, duplicateCidrs: 0, leakedCidrs: 0, wrongRoutes: 0, dlqMessages: 0, deletesRefused: 0, podCidrsOutsideSubnet: null, routesToNonLeaseholder: 0, hostileNodes: 0, honestNodesNotReady: 0, readyNodesTainted: 0, liveRoutesRemoved: 0 });
    // Every route of a node still there was created at least once; the two nodes that leave may go
    // before their routes are made, so their CreateRoute calls are a timing, not a promise.
    expect(report.ec2Calls.CreateRoute).toBeGreaterThanOrEqual(report.routesExpected);
    expect(report.ec2Calls.DescribeRouteTables).toBeGreaterThan(0);
    expect(report.joinToReadyMs.p99).toBeGreaterThanOrEqual(report.joinToReadyMs.p50);
    // The handlers' JSON logs go to the file, not the terminal.
    expect(run.stdout).not.toContain('"level"');
    expect(readFileSync(join(dir, 'handlers.log'), 'utf8')).toContain('"event":"reconcile.summary"');
  }, 150_000);

  it.each([
    [['--nodes', 'many']],
    [['--nodes', '0']],
    [['--leave', '7', '--nodes', '3']],
    [['--mode', 'tunnels']],
    [['--faults', '1']],
    [['--deny-deletes', '1.5']],
    [['--deny-deletes', 'some']],
    [['--route-tables', '1.5']],
    [['--secondary-enis', '16']],
    [['--secondary-enis', '15', '--nodes', '1001']],
    [['--subnets', '3']],
    [['--mode', 'prefixes', '--subnets', '0']],
    [['--mode', 'prefixes', '--subnets', '17']],
    [['--mode', 'prefixes', '--subnets', 'two']],
    [['--no-such-flag']],
    [['positional']],
    [['--hostile', 'same-cidr,no-such-scenario']],
    [['--hostile', 'all', '--nodes', '2', '--leave', '1']],
  ])('exits 2 with one line on stderr for %j', async (args) => {
    const run = await inProcess(args);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
  });

  it('names the flag, what it wants and where help is, in that one line', async () => {
    const run = await inProcess(['--nodes', 'many']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual(['podroute sandbox: --nodes "many": want a whole number from 1 to 10000 (see npm start -- --help)']);
    expect(run.stdout).toBe('');
  });

  it('documents every flag in --help', async () => {
    const run = await inProcess(['--help']);
    expect(run.code).toBe(0);
    for (const flag of ['--nodes', '--leave', '--dual-stack', '--route-tables', '--mode', '--subnets', '--faults', '--secondary-enis', '--deny-deletes', '--hostile', '--tick-ms', '--report', '--timeout-s']) {
      expect(run.stdout).toContain(flag);
    }
    for (const scenario of HOSTILE_SCENARIOS) expect(run.stdout).toContain(scenario);
  });
});
