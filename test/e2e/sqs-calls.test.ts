/**
 * The sandbox counts the SQS requests production would pay for (issue 9, goal 6): an idle queue
 * still costs one empty receive per poller per long-poll wait (AWS Knowledge Center, "Why are my
 * Amazon SQS charges higher than expected?"), and the sandbox's own depth checks are not counted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';

describe('sandbox SQS counts', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ nodes: 0, routeTables: 1, tickMs: 0, throttle: false });
  }, 20_000);
  afterAll(() => sandbox?.stop());

  it('counts the idle pollers\' empty receives, and not the sandbox\'s own depth checks', async () => {
    const { pollers, waitTimeSeconds } = sandbox.queue.eventSource;
    expect(pollers).toBe(5);
    expect(waitTimeSeconds).toBe(1);
    sandbox.queue.sqs.stats.reset();
    // Two waits and a bit: every poller has answered at least one receive by then.
    await sleep(2 * waitTimeSeconds * 1000 + 200);
    await sandbox.queue.depth();
    const report = await sandbox.snapshot(); // reads the DLQ's depth too
    const receives = report.sqsCalls.ReceiveMessage ?? 0;
    expect(receives).toBeGreaterThanOrEqual(pollers);
    // And the waits are honoured: a poller that ignored WaitTimeSeconds would ask hundreds of times.
    // Each poller has at most one receive under way at the reset and two whole waits after it.
    expect(receives).toBeLessThanOrEqual(pollers * 3);
    expect(report.sqsEmptyReceives).toBe(receives);
    expect(Object.keys(report.sqsCalls)).toEqual(['ReceiveMessage']);
    expect(sandbox.queue.sqs.stats.byCaller.sandbox?.calls.GetQueueAttributes).toBeGreaterThanOrEqual(2);
  }, 10_000);
});
