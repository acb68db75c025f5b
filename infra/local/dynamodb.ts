/**
 * A local DynamoDB for the sandbox: dynalite in this process, in memory, on 127.0.0.1 with a free
 * port, with podroute's CIDR table created before it resolves (the same definition the deployment
 * uses, `cidrTableDefinition`).
 *
 *   const db = await startLocalDynamoDb();
 *   const client = db.client();   // destroyed by db.close()
 */
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { listenLocal } from './listen.ts';
import { cidrTableDefinition } from '../../lib/aws/dynamodb-cidr-store.ts';

export const LOCAL_CIDR_TABLE = 'podroute-cidrs';

export interface LocalDynamoDb {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly region: string;
  /** The CIDR table's name. */
  readonly tableName: string;
  /** A new SDK client for the local endpoint (dummy credentials). */
  client(options?: { maxAttempts?: number }): DynamoDBClient;
  /** Requests the server answered, per DynamoDB action (`PutItem`, `Query`, ...). */
  readonly stats: { calls: Record<string, number>; reset(): void };
  /** Destroys every client made here and stops the server. */
  close(): Promise<void>;
}

/** `createTableMs`: how long a new table stays CREATING (dynalite's timer; 0 by default). */
export async function startLocalDynamoDb(options: { tableName?: string; region?: string; createTableMs?: number } = {}): Promise<LocalDynamoDb> {
  const region = options.region ?? 'us-east-1';
  const { default: dynalite } = await import('dynalite');
  const server = dynalite({ createTableMs: options.createTableMs ?? 0, deleteTableMs: 0, updateTableMs: 0 });
  const listening = await listenLocal(server);
  const endpoint = `http://127.0.0.1:${listening.port}`;
  const calls: Record<string, number> = {};
  server.on('request', (request: { headers: Record<string, string | string[] | undefined> }) => {
    const target = request.headers['x-amz-target'];
    const action = typeof target === 'string' ? target.slice(target.indexOf('.') + 1) : 'unknown';
    calls[action] = (calls[action] ?? 0) + 1;
  });
  const clients: DynamoDBClient[] = [];
  const client = (clientOptions: { maxAttempts?: number } = {}): DynamoDBClient => {
    const made = new DynamoDBClient({
      endpoint,
      region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      ...clientOptions,
    });
    clients.push(made);
    return made;
  };
  const tableName = options.tableName ?? LOCAL_CIDR_TABLE;
  try {
    await createTableAndWait(client(), cidrTableDefinition(tableName));
  } catch (error) {
    await listening.close();
    throw new Error(`local DynamoDB: could not create table ${tableName}`, { cause: error });
  }
  return {
    endpoint,
    region,
    tableName,
    client,
    stats: {
      calls,
      reset: () => {
        for (const key of Object.keys(calls)) delete calls[key];
      },
    },
    close: async () => {
      for (const made of clients.splice(0)) made.destroy();
      await listening.close();
    },
  };
}

/**
 * Creates a table and resolves once it is ACTIVE. CreateTable is asynchronous: the table is
 * CREATING first, and DynamoDB (dynalite too) answers ResourceNotFoundException to item requests
 * until it is ACTIVE (DynamoDB Developer Guide, "CreateTable": "you can perform read and write
 * operations only on an ACTIVE table"). dynalite's createTableMs: 0 is a timer, so on a loaded
 * machine the first PutItem could still find it CREATING.
 */
export async function createTableAndWait(
  client: DynamoDBClient,
  definition: CreateTableCommandInput,
  timeoutMs = 30_000,
): Promise<void> {
  await client.send(new CreateTableCommand(definition));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const described = await client.send(new DescribeTableCommand({ TableName: definition.TableName }));
    if (described.Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`local DynamoDB: table ${definition.TableName ?? '?'} not ACTIVE after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
