/** The DeletionWindowStore contract against the fake and against DynamoDbDeletionWindow over dynalite. */
import { afterAll } from 'vitest';
import { DynamoDbDeletionWindow } from '../../lib/aws/dynamodb-deletion-guard.ts';
import { MemoryDeletionWindow } from '../fakes/memory-deletion-window.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { freshCidrTable } from '../support/world.ts';
import { deletionWindowContract } from './deletion-window.contract.ts';

deletionWindowContract('MemoryDeletionWindow', async () => new MemoryDeletionWindow());

// One dynalite for the file, started by the first case that needs it; a fresh table per case.
let local: LocalDynamo | undefined;
afterAll(async () => {
  await local?.close();
});

deletionWindowContract('DynamoDbDeletionWindow over dynalite', async () => {
  local ??= await startDynalite();
  const client = local.client();
  return new DynamoDbDeletionWindow({ client, tableName: await freshCidrTable(client) });
});
