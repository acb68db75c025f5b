/** The DeletionWindowStore contract against the fake and against DynamoDbDeletionWindow over dynalite. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { DynamoDbDeletionWindow } from '../../lib/aws/dynamodb-deletion-guard.ts';
import { MemoryDeletionWindow } from '../fakes/memory-deletion-window.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { freshCidrTable } from '../support/world.ts';
import { deletionWindowContract } from './deletion-window.contract.ts';

let local: LocalDynamo;
let client: DynamoDBClient;
beforeAll(async () => {
  local = await startDynalite();
  client = local.client();
});
afterAll(async () => {
  await local.close();
});

deletionWindowContract('MemoryDeletionWindow', async () => new MemoryDeletionWindow());
deletionWindowContract('DynamoDbDeletionWindow over dynalite', async () => new DynamoDbDeletionWindow({ client, tableName: await freshCidrTable(client) }));
