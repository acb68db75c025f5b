/** The WorkQueue contract against the fake and against SqsWorkQueue over fauxqs (the local SQS). */
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll } from 'vitest';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { SqsWorkQueue } from '../../lib/aws/sqs-work-queue.ts';
import { parseWorkMessage } from '../../lib/messages/work-message.ts';
import { MemoryWorkQueue } from '../fakes/memory-work-queue.ts';
import { workQueueContract } from './work-queue.contract.ts';

workQueueContract('MemoryWorkQueue', async () => {
  const port = new MemoryWorkQueue();
  return {
    port,
    receive: async () => port.receive(),
    ack: async (handle) => port.ack(handle),
  };
});

let sqs: LocalSqs | undefined;
let client: SQSClient | undefined;
let queues = 0;
afterAll(async () => {
  await sqs?.stop();
});

workQueueContract('SqsWorkQueue over fauxqs', async () => {
  sqs ??= await startLocalSqs();
  const sqsClient = (client ??= sqs.createClient());
  const { queueUrl } = await sqs.createQueue(`contract-${++queues}`);
  return {
    port: new SqsWorkQueue(sqsClient, queueUrl),
    receive: async () => {
      const all: Array<{ message: ReturnType<typeof parseWorkMessage>; receiptHandle: string }> = [];
      for (;;) {
        const { Messages } = await sqsClient.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
        if (!Messages || Messages.length === 0) return all;
        for (const m of Messages) all.push({ message: parseWorkMessage(m.Body ?? ''), receiptHandle: m.ReceiptHandle ?? '' });
      }
    },
    ack: async (handle) => void (await sqsClient.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: handle }))),
  };
});
