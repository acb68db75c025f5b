/**
 * The WorkQueue contract (lib/usecases/ports.ts): what reconcile, the webhook and the worker
 * rely on from the queue, run against MemoryWorkQueue and SqsWorkQueue over fauxqs
 * (work-queue.contract.test.ts). The harness receives and deletes as the SQS event source does.
 */
import { describe, expect, it } from 'vitest';
import { messageKey, type WorkMessage } from '../../lib/messages/work-message.ts';
import type { WorkQueue } from '../../lib/usecases/ports.ts';

export interface WorkQueueHarness {
  port: WorkQueue & Required<Pick<WorkQueue, 'retryAfter' | 'backlog'>>;
  /** Every message visible now (each then in flight). */
  receive(): Promise<Array<{ message: WorkMessage; receiptHandle: string }>>;
  /** Deletes a received message. */
  ack(receiptHandle: string): Promise<void>;
}

const create = (i: number) => ({ v: 1 as const, kind: 'create' as const, routeTableId: 'rtb-0000000000000000a', destinationCidr: `100.64.${i}.0/24`, node: `node-${i}`, instanceId: `i-${i.toString(16).padStart(17, '0')}` }) satisfies WorkMessage;
const keys = (messages: ReadonlyArray<{ message: WorkMessage }>): string[] => messages.map((m) => messageKey(m.message)).sort();

export function workQueueContract(name: string, make: () => Promise<WorkQueueHarness>): void {
  describe(`WorkQueue contract: ${name}`, () => {
    it('delivers each piece of work once per send, and says how many duplicates it dropped', async () => {
      const h = await make();
      expect(await h.port.send([])).toEqual({ sent: 0, duplicates: 0 });
      const messages = Array.from({ length: 12 }, (_, i) => create(i));
      expect(await h.port.send([...messages, create(3), create(7)])).toEqual({ sent: 12, duplicates: 2 });
      const received = await h.receive();
      expect(keys(received)).toEqual(keys(messages.map((message) => ({ message }))));
      expect(received.find((r) => r.message.kind === 'create' && r.message.node === 'node-5')?.message).toEqual(create(5));
    });

    it('a replace and a create of the same work: the replace is delivered', async () => {
      const h = await make();
      const replace: WorkMessage = { ...create(1), kind: 'replace' };
      expect(await h.port.send([create(1), replace])).toEqual({ sent: 1, duplicates: 1 });
      expect((await h.receive()).map((r) => r.message)).toEqual([replace]);
    });

    it('holds a delayed message back from the worker, and counts it in the backlog', async () => {
      const h = await make();
      await h.port.send([create(1)], { delaySeconds: 300 });
      await h.port.send([create(2)]);
      expect((await h.receive()).map((r) => r.message)).toEqual([create(2)]);
      // One delayed, one in flight.
      expect(await h.port.backlog()).toBe(2);
    });

    it('counts waiting and in-flight messages until they are deleted', async () => {
      const h = await make();
      expect(await h.port.backlog()).toBe(0);
      await h.port.send([create(1), create(2), create(3)]);
      expect(await h.port.backlog()).toBe(3);
      const received = await h.receive();
      expect(await h.port.backlog()).toBe(3);
      await h.ack(received[0]?.receiptHandle ?? '');
      expect(await h.port.backlog()).toBe(2);
      expect(await h.receive()).toEqual([]);
    });

    it('retryAfter makes a received message visible again after its seconds (0: at once)', async () => {
      const h = await make();
      await h.port.send([create(1), create(2)]);
      const received = await h.receive();
      const first = received.find((r) => r.message.kind === 'create' && r.message.node === 'node-1');
      await h.port.retryAfter(first?.receiptHandle ?? '', 0);
      expect((await h.receive()).map((r) => r.message)).toEqual([create(1)]);
      const second = received.find((r) => r.message.kind === 'create' && r.message.node === 'node-2');
      await h.port.retryAfter(second?.receiptHandle ?? '', 600);
      expect(await h.receive()).toEqual([]);
    });
  });
}
