/** The DeletionWindowStore contract against the fake and against DynamoDbDeletionWindow over dynalite. */
import { DynamoDbDeletionWindow } from '../../lib/aws/dynamodb-deletion-guard.ts';
import { MemoryDeletionWindow } from '../fakes/memory-deletion-window.ts';
import { useFreshCidrTables } from '../support/dynalite.ts';
import { deletionWindowContract } from './deletion-window.contract.ts';

deletionWindowContract('MemoryDeletionWindow', async () => new MemoryDeletionWindow());

const freshTable = useFreshCidrTables();

deletionWindowContract('DynamoDbDeletionWindow over dynalite', async () => {
  return new DynamoDbDeletionWindow(await freshTable());
});
