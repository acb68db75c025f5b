/**
 * The local DynamoDB for tests is the sandbox's: dynalite in process on 127.0.0.1 with the CIDR
 * table created (infra/local/dynamodb.ts).
 *
 *   const local = await startDynalite();
 *   const client = local.client();          // closed by local.close()
 *   ... afterAll(() => local.close());
 *
 * `useFreshCidrTables` is for a file that wants a fresh table per case: one dynalite for the file,
 * started by the first case that asks, closed after the file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../infra/local/dynamodb.ts';
import { freshCidrTable } from './world.ts';

export { startLocalDynamoDb as startDynalite } from '../../infra/local/dynamodb.ts';
export type { LocalDynamoDb as LocalDynamo } from '../../infra/local/dynamodb.ts';

export function useFreshCidrTables(): () => Promise<{ client: DynamoDBClient; tableName: string }> {
  let local: LocalDynamoDb | undefined;
  afterAll(async () => {
    await local?.close();
  });
  return async () => {
    local ??= await startLocalDynamoDb();
    const client = local.client();
    return { client, tableName: await freshCidrTable(client) };
  };
}
