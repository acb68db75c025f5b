/**
 * A local SQS for tests and the sandbox: fauxqs (the JSON protocol the current SDK speaks) in this
 * process, listening on 127.0.0.1 only, with queue URLs on the same address.
 *
 * `startFauxqs` binds 0.0.0.0, so this builds fauxqs's app itself and chooses the address.
 *
 * It counts the requests it serves, per caller (the access key id a client signs with, see
 * `createClient`) and per action, as SQS bills them (https://aws.amazon.com/sqs/pricing/, checked
 * 2026-12-01: every API action is a request, a ReceiveMessage that returns nothing included; each
 * 64 KB chunk of a request's payload is billed as one request, so a 256 KB payload is 4). AWS
 * Knowledge Center, "Why are my Amazon SQS charges higher than expected?": empty receives are billed
 * as ReceiveMessage requests, and a queue that triggers a Lambda function is long-polled even when
 * unused. The SQS Developer Guide ("Amazon SQS message quotas", "Amazon SQS message attributes")
 * counts a message's attributes (name, type and value) into its size with its body.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

/** What one caller asked of the queue service. */
export interface SqsCallerCounts {
  /** Requests served per action (failed ones included). */
  calls: Record<string, number>;
  /** ReceiveMessage requests answered with no message. */
  emptyReceives: number;
  /** Requests as billed: a request whose message payload exceeds 64 KB counts once per 64 KB chunk. */
  billedRequests: number;
}

/** Requests served, per caller (a client's access key id). */
export class LocalSqsStats {
  byCaller: Record<string, SqsCallerCounts> = {};

  /** The counts of the callers named, summed (all callers when none are named). */
  total(callers?: readonly string[]): SqsCallerCounts {
    const out: SqsCallerCounts = { calls: {}, emptyReceives: 0, billedRequests: 0 };
    for (const [caller, counts] of Object.entries(this.byCaller)) {
      if (callers && !callers.includes(caller)) continue;
      for (const [action, n] of Object.entries(counts.calls)) out.calls[action] = (out.calls[action] ?? 0) + n;
      out.emptyReceives += counts.emptyReceives;
      out.billedRequests += counts.billedRequests;
    }
    return out;
  }

  reset(): void {
    this.byCaller = {};
  }

  record(caller: string, action: string, payloadBytes: number, emptyReceive: boolean): void {
    const counts = (this.byCaller[caller] ??= { calls: {}, emptyReceives: 0, billedRequests: 0 });
    counts.calls[action] = (counts.calls[action] ?? 0) + 1;
    if (emptyReceive) counts.emptyReceives += 1;
    counts.billedRequests += Math.max(1, Math.ceil(payloadBytes / BILLING_CHUNK_BYTES));
  }
}

/** https://aws.amazon.com/sqs/pricing/: each 64 KB chunk of a payload is billed as one request. */
const BILLING_CHUNK_BYTES = 64 * 1024;
const DEFAULT_CALLER = 'local';

export interface LocalSqs {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly region: string;
  /**
   * A real SQSClient pointed at this server, with dummy credentials; its access key id is `caller`
   * (default `local`), under which `stats` counts its requests.
   */
  createClient(caller?: string): SQSClient;
  /** Requests served so far, per caller and action. */
  readonly stats: LocalSqsStats;
  /** Creates a queue (a `.fifo` name makes a FIFO queue) and returns its URL and ARN. */
  createQueue(name: string, attributes?: Record<string, string>): Promise<{ queueUrl: string; queueArn: string }>;
  stop(): Promise<void>;
}

export async function startLocalSqs(options: { port?: number; region?: string } = {}): Promise<LocalSqs> {
  const region = options.region ?? 'us-east-1';
  const app = buildApp({ logger: false, defaultRegion: region });
  const stats = new LocalSqsStats();
  // Counted as the answer leaves: the action from X-Amz-Target (the JSON protocol), the caller from
  // the SigV4 Authorization header's credential scope, the payload from the messages sent or returned.
  app.addHook('onSend', (request, reply, payload, done) => {
    const target = request.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('AmazonSQS.')) {
      const action = target.slice('AmazonSQS.'.length);
      const caller = /Credential=([^/,\s]+)\//.exec(request.headers.authorization ?? '')?.[1] ?? 'anonymous';
      let bytes = 0;
      let empty = false;
      if (action === 'SendMessage' || action === 'SendMessageBatch') {
        bytes = messagesBytes(action === 'SendMessage' ? [request.body] : entriesOf(request.body), 'MessageBody');
      } else if (action === 'ReceiveMessage' && reply.statusCode === 200 && typeof payload === 'string') {
        const messages = entriesOf(parseJson(payload), 'Messages');
        bytes = messagesBytes(messages, 'Body');
        empty = messages.length === 0;
      }
      stats.record(caller, action, bytes, empty);
    }
    done();
  });
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('local SQS did not bind a TCP port');
  const endpoint = `http://127.0.0.1:${address.port}`;
  const clients: SQSClient[] = [];
  const createClient = (caller = DEFAULT_CALLER): SQSClient => {
    if (!/^[A-Za-z0-9-]{1,64}$/.test(caller)) throw new RangeError(`caller ${JSON.stringify(caller)}: want 1-64 letters, digits or dashes`);
    const client = new SQSClient({
      endpoint,
      region,
      credentials: { accessKeyId: caller, secretAccessKey: 'local' },
    });
    clients.push(client);
    return client;
  };
  const admin = createClient();
  return {
    endpoint,
    region,
    createClient,
    stats,
    async createQueue(name, attributes = {}) {
      const fifo = name.endsWith('.fifo') ? { FifoQueue: 'true' } : {};
      const created = await admin.send(new CreateQueueCommand({ QueueName: name, Attributes: { ...fifo, ...attributes } }));
      const queueUrl = created.QueueUrl;
      if (!queueUrl) throw new Error(`local SQS returned no URL for queue ${name}`);
      const { Attributes } = await admin.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
      const queueArn = Attributes?.QueueArn;
      if (!queueArn) throw new Error(`local SQS returned no ARN for queue ${name}`);
      return { queueUrl, queueArn };
    },
    async stop() {
      for (const client of clients) client.destroy();
      await app.close();
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The list under `key` (default `Entries`) of a request or response body, or nothing. */
function entriesOf(body: unknown, key = 'Entries'): unknown[] {
  if (typeof body !== 'object' || body === null) return [];
  const list = (body as Record<string, unknown>)[key];
  return Array.isArray(list) ? list : [];
}

/** A message's size as SQS counts it: its body plus each attribute's name, data type and value. */
function messagesBytes(messages: readonly unknown[], bodyKey: 'MessageBody' | 'Body'): number {
  let bytes = 0;
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const m = message as Record<string, unknown>;
    if (typeof m[bodyKey] === 'string') bytes += Buffer.byteLength(m[bodyKey]);
    const attributes = m.MessageAttributes;
    if (typeof attributes !== 'object' || attributes === null) continue;
    for (const [name, value] of Object.entries(attributes)) {
      bytes += Buffer.byteLength(name);
      if (typeof value !== 'object' || value === null) continue;
      const v = value as Record<string, unknown>;
      for (const key of ['DataType', 'StringValue', 'BinaryValue'] as const) {
        const part = v[key];
        // A binary value travels base64-encoded in the JSON protocol; its size is the decoded bytes.
        if (typeof part === 'string') bytes += key === 'BinaryValue' ? Buffer.from(part, 'base64').length : Buffer.byteLength(part);
      }
    }
  }
  return bytes;
}
