/**
 * `main` bound to this process: argv, stdin for `-` inputs, stdout, stderr, the environment and the
 * exit status. bin/podroute.ts runs it.
 */
import { readFile } from 'node:fs/promises';
import { main } from './main.ts';

/**
 * Exit status when the reader of stdout goes away (`podroute plan ... | head -1`). Node ignores
 * SIGPIPE, so a write to a closed pipe fails with EPIPE instead of killing the process; without a
 * handler that error is an uncaught exception and a stack trace. We end quietly with the status a
 * shell shows for a command killed by SIGPIPE (128 + 13), as `cat`, `grep` or `yes` end in the same
 * pipeline: the output was cut short, which `set -o pipefail` may want to see, but nothing failed
 * that deserves a message. Any other stdout error is reported in one line with exit 1.
 */
const EXIT_PIPE_CLOSED = 141;

const readInput = async (path: string): Promise<string> => {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** Runs the command line of this process and sets its exit status. */
export async function runPodroute(): Promise<void> {
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
  const code = await main(process.argv.slice(2), {
    stdout: (text) => {
      if (!pipeClosed) process.stdout.write(text);
    },
    stderr: (text) => process.stderr.write(text),
    readFile: readInput,
    env: process.env,
  });
  if (!pipeClosed) process.exitCode = code;
}
