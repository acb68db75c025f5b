/**
 * Captures what the process writes to stdout and stderr (Powertools writes info and below to
 * stdout, warnings and errors to stderr; both reach CloudWatch), with Powertools' level and dev
 * switches cleared so every line is written as in Lambda. Call from a beforeEach;
 * the test's afterEach restores the spies and the environment (vi.restoreAllMocks, vi.unstubAllEnvs).
 */
import { vi } from 'vitest';

export function captureOutput(extraEnv: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  }
  for (const name of ['POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_DEV', ...extraEnv]) vi.stubEnv(name, '');
  return out;
}
