/**
 * One local SQS (fauxqs) per test file, stopped after the file's tests; `use` receives it once it
 * is up:
 *
 *   let sqs: LocalSqs;
 *   useLocalSqs((started) => (sqs = started));
 */
import { afterAll, beforeAll } from 'vitest';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';

export function useLocalSqs(use: (sqs: LocalSqs) => void): void {
  let sqs: LocalSqs | undefined;
  beforeAll(async () => {
    sqs = await startLocalSqs();
    use(sqs);
  });
  afterAll(async () => {
    await sqs?.stop();
  });
}

let created = 0;

/** A queue of its own for one test: `prefix` and a number no other call in this file has used. */
export async function freshQueue(sqs: LocalSqs, prefix: string): Promise<string> {
  created += 1;
  return (await sqs.createQueue(`${prefix}-${created}`)).queueUrl;
}
