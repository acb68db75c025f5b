/**
 * The local DynamoDB's tables are ACTIVE before anything uses them: CreateTable is asynchronous,
 * and item requests on a CREATING table answer ResourceNotFoundException (DynamoDB Developer
 * Guide, "CreateTable"). A slow table (createTableMs) stands in for a loaded machine.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { startLocalDynamoDb } from '../../infra/local/dynamodb.ts';
import { freshCidrTable } from '../support/world.ts';

describe('local DynamoDB tables', () => {
  it.each([
    ['the sandbox table', false],
    ['a fresh test table', true],
  ])('%s takes writes as soon as it is made, however long CREATING lasts', async (_name, fresh) => {
    const db = await startLocalDynamoDb({ createTableMs: 300 });
    try {
      const client = db.client();
      const tableName = fresh ? await freshCidrTable(client) : db.tableName;
      await expect(client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'probe' }, sk: { S: 'probe' } } }))).resolves.toBeDefined();
    } finally {
      await db.close();
    }
  });
});
