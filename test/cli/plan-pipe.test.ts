/**
 * `podroute plan ... | head -1`: the reader of stdout goes away before podroute has written. The real
 * binary runs as a child process whose stdout pipe is closed at once, as `head` closes it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtCli } from '../support/cli-binary.ts';

const root = join(import.meta.dirname, '..', '..');
const example = (name: string) => join(root, 'examples', name);

function runWithStdoutClosed(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, builtCli(args), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    // Close our end of the pipe before the child can write: its writes then fail with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('podroute plan with stdout closed early', () => {
  it.each([['json'], ['table']])('--format %s ends quietly with 141 (128 + SIGPIPE), no stack trace', async (format) => {
    const result = await runWithStdoutClosed([
      'plan',
      '--cluster-cidrs',
      '10.244.0.0/16',
      '--nodes',
      example('nodes.json'),
      '--route-tables',
      example('route-tables.json'),
      '--format',
      format,
    ]);
    expect(result.stderr).toBe('');
    expect(result.signal).toBeNull();
    expect(result.code).toBe(141);
   }, 60_000);

  it('bad input still says so on stderr with exit 2 when stdout is closed', async () => {
    const result = await runWithStdoutClosed(['plan', '--cluster-cidrs', 'nope', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^podroute: --cluster-cidrs: invalid CIDR "nope"\n$/);
   }, 60_000);
});
