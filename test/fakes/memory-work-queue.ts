/**
 * MemoryWorkQueue for tests: the WorkQueue port (lib/usecases/ports.ts) in memory, with what
 * SqsWorkQueue promises over SQS: duplicate work collapsed per send, a delay that keeps a message
 * from the worker for its seconds, a backlog of messages waiting, in flight or delayed, and
 * `retryAfter` making a received message visible again after its seconds. It extends the CLI's
 * in-memory queue (lib/messages/work-queue.ts), so `sent` is that queue's record; `receive` and
 * `ack` play the SQS event source.
 */
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { MemoryWorkQueue as SentRecord, dedupeMessages } from '../../lib/messages/work-queue.ts';
import type { SendOptions, SendResult } from '../../lib/usecases/ports.ts';

interface Held {
  readonly message: WorkMessage;
  readonly receiptHandle: string;
  /** When the worker may see it next (clock milliseconds). */
  visibleAt: number;
  receiveCount: number;
}

/** The visibility timeout a received message gets (the queue's own, serverless.yml). */
const VISIBILITY_TIMEOUT_MS = 180_000;

export class MemoryWorkQueue extends SentRecord {
  /** Every send with its options, deduplicated per send. */
  readonly sends: Array<{ messages: WorkMessage[]; options: SendOptions | undefined }> = [];
  private held: Held[] = [];
  private handles = 0;

  constructor(private readonly clock: () => number = () => 0) {
    super();
  }

  override async send(messages: readonly WorkMessage[], options?: SendOptions): Promise<SendResult> {
    const delay = options?.delaySeconds ?? 0;
    if (!Number.isInteger(delay) || delay < 0 || delay > 900) throw new RangeError(`delaySeconds ${delay}: want 0..900 (SQS DelaySeconds)`);
    const result = await super.send(messages);
    const { unique } = dedupeMessages(messages);
    this.sends.push({ messages: unique, options });
    for (const message of unique) this.held.push({ message, receiptHandle: `handle-${++this.handles}`, visibleAt: this.clock() + delay * 1000, receiveCount: 0 });
    return result;
  }

  /** Every message sent, in order (all sends). */
  get messages(): WorkMessage[] {
    return this.sends.flatMap((s) => s.messages);
  }

  /** Forgets what was sent and what is held. */
  clear(): void {
    this.sends.length = 0;
    this.sent.length = 0;
    this.held = [];
  }

  async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    const held = this.held.find((h) => h.receiptHandle === receiptHandle);
    if (!held) throw new RangeError(`no message with receipt handle ${receiptHandle}`);
    held.visibleAt = this.clock() + Math.max(0, Math.min(43_200, Math.round(seconds))) * 1000;
  }

  async backlog(): Promise<number> {
    return this.held.length;
  }

  /** The messages visible now, each made invisible for the visibility timeout (SQS ReceiveMessage). */
  receive(): Array<{ message: WorkMessage; receiptHandle: string; receiveCount: number }> {
    const now = this.clock();
    return this.held
      .filter((h) => h.visibleAt <= now)
      .map((h) => {
        h.visibleAt = now + VISIBILITY_TIMEOUT_MS;
        h.receiveCount += 1;
        return { message: h.message, receiptHandle: h.receiptHandle, receiveCount: h.receiveCount };
      });
  }

  /** Deletes a received message (the event source after a success). */
  ack(receiptHandle: string): void {
    this.held = this.held.filter((h) => h.receiptHandle !== receiptHandle);
  }
}
