#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { main } from '../lib/cli/main.ts';
import { doctorCommand } from './doctor-command.ts';
import { reconcileCommand } from './reconcile-command.ts';

const readInput = async (path: string): Promise<string> => {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readFile: readInput,
  env: process.env,
}, { reconcile: reconcileCommand, doctor: doctorCommand });
process.exitCode = code;
