/**
 * A local DynamoDB (dynalite, in process, in memory) on 127.0.0.1 with a fresh port, for tests and
 * benchmarks. Creates the CIDR table (and any other tables asked for) before it resolves.
 *
 *   const local = await startDynalite();
 *   const client = local.client();          // closed by local.close()
 *   ... afterAll(() => local.close());
 */
import { CreateTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { cidrTableDefinition } from '../../lib/aws/dynamodb-cidr-store.ts';

export const CIDR_TABLE = 'podroute-cidrs';

export interface LocalDynamo {
  readonly endpoint: string;
  /** The CIDR table's name. */
  readonly tableName: string;
  /** A new SDK client for the local endpoint (dummy credentials, us-east-1). */
  client(options?: { maxAttempts?: number }): DynamoDBClient;
  /** Destroys every client made here and stops the server. */
  close(): Promise<void>;
}

export interface StartDynaliteOptions {
  /** Name of the CIDR table (default `podroute-cidrs`). */
  tableName?: string;
  /** More tables to create. */
  tables?: CreateTableCommandInput[];
}

export async function startDynalite(options: StartDynaliteOptions = {}): Promise<LocalDynamo> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dynalite = (await import('dynalite')).default;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('dynalite is not listening on a TCP port');
  const endpoint = `http://127.0.0.1:${address.port}`;
  const clients: DynamoDBClient[] = [];
  const client = (clientOptions: { maxAttempts?: number } = {}): DynamoDBClient => {
    const made = new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      ...clientOptions,
    });
    clients.push(made);
    return made;
  };
  const tableName = options.tableName ?? CIDR_TABLE;
  const admin = client();
  for (const table of [cidrTableDefinition(tableName), ...(options.tables ?? [])]) {
    await admin.send(new CreateTableCommand(table));
  }
  return {
    endpoint,
    tableName,
    client,
    close: async () => {
      for (const made of clients.splice(0)) made.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
