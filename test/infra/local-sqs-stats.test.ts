/**
 * The local SQS counts the requests it serves as SQS bills them (https://aws.amazon.com/sqs/pricing/):
 * per caller and action, empty receives included, and a payload over 64 KB once per 64 KB chunk.
 */
import { ChangeMessageVisibilityCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';

let sqs: LocalSqs;
let producer: SQSClient;
let consumer: SQSClient;
let queueUrl: string;
let queues = 0;

beforeAll(async () => {
  sqs = await startLocalSqs();
  producer = sqs.createClient('producer');
  consumer = sqs.createClient('consumer');
});
afterAll(() => sqs.stop());
// A fresh queue per test, so no message of an earlier one is received.
beforeEach(async () => {
  queues += 1;
  ({ queueUrl } = await sqs.createQueue(`stats-test-${queues}`));
  sqs.stats.reset();
});

describe('LocalSqs stats', () => {
  it('counts each caller apart, per action, with empty receives', async () => {
    await consumer.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    await producer.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: 'a', MessageBody: 'one' }, { Id: 'b', MessageBody: 'two' }] }));
    const { Messages = [] } = await consumer.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    expect(Messages).toHaveLength(2);
    const [first] = Messages;
    await consumer.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: first?.ReceiptHandle, VisibilityTimeout: 0 }));
    await consumer.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));

    expect(sqs.stats.byCaller.producer).toEqual({ calls: { SendMessageBatch: 1 }, emptyReceives: 0, billedRequests: 1 });
    expect(sqs.stats.byCaller.consumer).toEqual({
      calls: { ReceiveMessage: 2, ChangeMessageVisibility: 1, DeleteMessageBatch: 1 },
      emptyReceives: 1,
      billedRequests: 4,
    });
    expect(sqs.stats.total(['producer']).calls).toEqual({ SendMessageBatch: 1 });
    expect(sqs.stats.total().calls).toEqual({ SendMessageBatch: 1, ReceiveMessage: 2, ChangeMessageVisibility: 1, DeleteMessageBatch: 1 });
  });

  it.each([
    // [body bytes, attribute value bytes, billed requests for the send, and for the receive]
    [10, 0, 1, 1],
    [64 * 1024, 0, 1, 1],
    [64 * 1024 + 1, 0, 2, 2],
    [100 * 1024, 30 * 1024, 3, 3], // 130 KB with its attribute: 3 chunks
    [200 * 1024, 0, 4, 4],
  ])('bills a %i-byte body with a %i-byte attribute as %i send and %i receive request(s)', async (bodyBytes, attributeBytes, sendBilled, receiveBilled) => {
    const attributes = attributeBytes > 0 ? { MessageAttributes: { a: { DataType: 'String', StringValue: 'x'.repeat(attributeBytes - 'a'.length - 'String'.length) } } } : {};
    await producer.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'b'.repeat(bodyBytes), ...attributes }));
    const { Messages = [] } = await consumer.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, MessageAttributeNames: ['All'], WaitTimeSeconds: 0 }));
    await consumer.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));
    expect(sqs.stats.byCaller.producer?.billedRequests).toBe(sendBilled);
    // The receive's chunks, plus one for the delete.
    expect(sqs.stats.byCaller.consumer?.billedRequests).toBe(receiveBilled + 1);
  });

  it('refuses a caller name that cannot be an access key id', () => {
    expect(() => sqs.createClient('no/slashes')).toThrow(RangeError);
  });
});
