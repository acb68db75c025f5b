/**
 * The correlation id from sender to worker: SqsWorkQueue sends it as a message attribute to fauxqs,
 * the local event source delivers the records to the real route-worker handler, and each of the
 * worker's lines carries its own record's id. A message without one (an older sender's, already in
 * the queue) is handled as before, its body the same bytes.
 */
import type { ScheduledEvent, SQSBatchResponse } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createReconcileHandler } from '../../functions/reconcile.ts';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import { correlated } from '../../functions/telemetry.ts';
import type { LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { startSqsEventSource } from '../../infra/local/queue/sqs-event-source.ts';
import { SqsWorkQueue } from '../../lib/aws/sqs-work-queue.ts';
import { memoryLogger, silentLogger } from '../../lib/log.ts';
import { parseWorkMessage, serializeWorkMessage, type WorkMessage } from '../../lib/messages/work-message.ts';
import { startDynalite } from '../support/dynalite.ts';
import { useLocalSqs } from '../support/local-sqs.ts';
import { throttledWorkerWiring } from '../support/throttled-worker.ts';
import { testWiring } from '../support/wiring.ts';
import { lambdaContext, startWorld } from '../support/world.ts';

let sqs: LocalSqs;
useLocalSqs((started) => (sqs = started));

const deleteOf = (cidr: string): WorkMessage => ({ v: 1, kind: 'delete', routeTableId: 'rtb-0123456789abcdef0', destinationCidr: cidr, reason: 'no-owner' });

describe('correlation id through the queue', () => {
  it('reaches the worker as an attribute, beside an unchanged body, and tags each record\'s lines', async () => {
    const client = sqs.createClient();
    const { queueUrl } = await sqs.createQueue('correlation');
    const { queueUrl: dlqUrl } = await sqs.createQueue('correlation-dlq');
    const queue = new SqsWorkQueue(client, queueUrl);
    const tagged = deleteOf('10.244.1.0/24');
    const old = deleteOf('10.244.2.0/24');
    // As a handler sends: the use case's deps with the admission's uid.
    const deps = correlated({ queue, log: silentLogger }, 'b5a0c1f2-0000-4000-8000-00000000beef');
    await deps.queue.send([tagged]);
    await queue.send([old]);

    const log = memoryLogger();
    const wiring = throttledWorkerWiring(queue, log);
    const worker = createRouteWorkerHandler(async () => wiring);
    const bodies = new Map<string, string>();
    const source = await startSqsEventSource({
      client,
      queueUrl,
      dlqUrl,
      maxReceiveCount: 3,
      visibilityTimeoutSeconds: 30,
      waitTimeSeconds: 1,
      handler: async (event, context) => {
        for (const record of event.Records) bodies.set(record.messageId, record.body);
        return (await worker(event, context)) as SQSBatchResponse;
      },
    });
    try {
      await source.drained();
    } finally {
      await source.stop();
    }

    // Old and new bodies are the same bytes: a worker of any release parses both.
    expect([...new Set(bodies.values())].sort()).toEqual([serializeWorkMessage(tagged), serializeWorkMessage(old)].sort());
    for (const body of bodies.values()) expect(parseWorkMessage(body)).toBeTruthy();
    // Every line of a record carries that record's id, and only that: the tagged message's the uid,
    // the old message's none (how many deliveries each took is the queue's business).
    const failed = log.lines.filter((line) => line.event === 'message.failed');
    const idsOf = (message: WorkMessage) => [...new Set(failed.filter((line) => line.cidr === (message.kind === 'delete' ? message.destinationCidr : '')).map((line) => line.correlationId ?? 'none'))];
    expect([idsOf(tagged), idsOf(old)]).toEqual([['b5a0c1f2-0000-4000-8000-00000000beef'], ['none']]);
  });

  it('tags every message of a reconcile run, and its lines, with the run\'s request id', async () => {
    const local = await startDynalite();
    const world = await startWorld();
    try {
      const table = world.addClusterTable();
      const w = await testWiring(world, local);
      await world.addNode('node-a', { podCidrs: ['100.64.5.0/24'] });
      await w.wiring.cidrSets[0]?.occupy('100.64.5.0/24', 'node-a');
      const context = lambdaContext('podroute-reconcile');

      const result = await createReconcileHandler(async () => w.wiring)({} as ScheduledEvent, context);

      expect(result.messagesSent).toBe(1);
      // One send, the run's route work, with the run's id.
      expect(w.queue.sends.map((send) => ({ messages: send.messages, correlationId: send.options?.correlationId }))).toEqual([
        { messages: [expect.objectContaining({ kind: 'create', routeTableId: table, destinationCidr: '100.64.5.0/24', node: 'node-a' })], correlationId: context.awsRequestId },
      ]);
      expect(w.log.lines.find((line) => line.event === 'reconcile.summary')).toMatchObject({ correlationId: context.awsRequestId });
    } finally {
      await world.close();
      await local.close();
    }
  });
});
