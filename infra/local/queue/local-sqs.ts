/**
 * A local SQS for tests and the sandbox: fauxqs (the JSON protocol the current SDK speaks) in this
 * process, listening on 127.0.0.1 only, with queue URLs on the same address.
 *
 * `startFauxqs` binds 0.0.0.0, so this builds fauxqs's app itself and chooses the address.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

export interface LocalSqs {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly region: string;
  /** A real SQSClient pointed at this server, with dummy credentials. */
  createClient(): SQSClient;
  /** Creates a queue (a `.fifo` name makes a FIFO queue) and returns its URL and ARN. */
  createQueue(name: string, attributes?: Record<string, string>): Promise<{ queueUrl: string; queueArn: string }>;
  stop(): Promise<void>;
}

export async function startLocalSqs(options: { port?: number; region?: string } = {}): Promise<LocalSqs> {
  const region = options.region ?? 'us-east-1';
  const app = buildApp({ logger: false, defaultRegion: region });
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('local SQS did not bind a TCP port');
  const endpoint = `http://127.0.0.1:${address.port}`;
  const clients: SQSClient[] = [];
  const createClient = (): SQSClient => {
    const client = new SQSClient({
      endpoint,
      region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    clients.push(client);
    return client;
  };
  const admin = createClient();
  return {
    endpoint,
    region,
    createClient,
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
