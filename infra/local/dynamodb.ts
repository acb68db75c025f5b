/**
 * A local DynamoDB for the sandbox: dynalite in this process, in memory, on 127.0.0.1 with a free
 * port, with podroute's CIDR table created before it resolves (the same definition the deployment
 * uses, `cidrTableDefinition`).
 *
 *   const db = await startLocalDynamoDb();
 *   const client = db.client();   // destroyed by db.close()
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
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

export async function startLocalDynamoDb(options: { tableName?: string; region?: string } = {}): Promise<LocalDynamoDb> {
  const region = options.region ?? 'us-east-1';
  const { default: dynalite } = await import('dynalite');
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
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
    await client().send(new CreateTableCommand(cidrTableDefinition(tableName)));
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
