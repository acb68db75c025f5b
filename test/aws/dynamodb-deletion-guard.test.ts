/**
 * The deletion guard's window in the CIDR table (lib/aws/dynamodb-deletion-guard.ts), against
 * dynalite: read back as written, and written only over the version read.
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDeletionWindow } from '../../lib/aws/dynamodb-deletion-guard.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { freshCidrTable } from '../support/world.ts';

let local: LocalDynamo;
let client: DynamoDBClient;
beforeAll(async () => {
  local = await startDynalite();
  client = local.client();
});
afterAll(async () => {
  await local.close();
});

const run = (at: number, deleted: string[]) => ({ at, live: 28, deleted });

describe('DynamoDbDeletionWindow', () => {
  it('starts empty, stores a window, and refuses a write over a version another run replaced', async () => {
    const store = new DynamoDbDeletionWindow({ client, tableName: await freshCidrTable(client) });
    expect(await store.read()).toEqual({ window: { runs: [] }, version: 0 });
    expect(await store.write({ runs: [run(1, ['rtb-1|100.64.0.0/24'])] }, 0)).toBe(true);
    // A second run that read before the first wrote: its write must fail, not overwrite.
    expect(await store.write({ runs: [run(2, ['rtb-1|100.64.1.0/24'])] }, 0)).toBe(false);
    expect(await store.read()).toEqual({ window: { runs: [run(1, ['rtb-1|100.64.0.0/24'])] }, version: 1 });
    expect(await store.write({ runs: [run(1, ['rtb-1|100.64.0.0/24']), run(3, [])] }, 1)).toBe(true);
    expect(await store.write({ runs: [] }, 1)).toBe(false);
    expect((await store.read()).version).toBe(2);
  });

  it('refuses a malformed item with a clear, non-retryable error', async () => {
    const tableName = await freshCidrTable(client);
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'guard' }, sk: { S: 'route-deletions' }, runs: { S: '{"runs":[{"at":"soon"}]}' }, ver: { N: '1' } } }));
    await expect(new DynamoDbDeletionWindow({ client, tableName }).read()).rejects.toMatchObject({ retryable: false, message: expect.stringMatching(/malformed deletion guard item/) });
  });
});
