#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { main } from '../lib/cli/main.ts';
import type { Command } from '../lib/cli/main.ts';

/**
 * Exit status when the reader of stdout goes away (`podroute plan ... | head -1`). Node ignores
 * SIGPIPE, so a write to a closed pipe fails with EPIPE instead of killing the process; without a
 * handler that error is an uncaught exception and a stack trace. We end quietly with the status a
 * shell shows for a command killed by SIGPIPE (128 + 13), as `cat`, `grep` or `yes` end in the same
 * pipeline: the output was cut short, which `set -o pipefail` may want to see, but nothing failed
 * that deserves a message. Any other stdout error is reported in one line with exit 1.
 */
const EXIT_PIPE_CLOSED = 141;
let pipeClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') {
    pipeClosed = true;
    process.exitCode = EXIT_PIPE_CLOSED;
    return;
  }
  process.stderr.write(`podroute: cannot write to stdout: ${error.code ?? error.message}\n`);
  process.exitCode = 1;
});

/**
 * The commands that need AWS and Kubernetes clients load them when they run: `plan` and
 * `reservations` read files only, and start without 2.4 s of SDK imports (on our 2-core machines).
 */
function lazy(load: () => Promise<Command>): Command {
  return { run: async (args, io) => (await load()).run(args, io) };
}

const readInput = async (path: string): Promise<string> => {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const code = await main(process.argv.slice(2), {
  stdout: (text) => {
    if (!pipeClosed) process.stdout.write(text);
  },
  stderr: (text) => process.stderr.write(text),
  readFile: readInput,
  env: process.env,
}, {
  reconcile: lazy(async () => (await import('../lib/cli/reconcile-command.ts')).reconcileCommand),
  doctor: lazy(async () => (await import('../lib/cli/doctor-command.ts')).doctorCommand),
});
if (!pipeClosed) process.exitCode = code;
