/**
 * The mass-deletion guard's window (lib/routes/deletion-guard.ts) as one item of the CIDR table:
 * `pk = guard`, `sk = route-deletions`, attribute `runs` (the window as JSON, checked by a schema
 * when read) and `ver` (N, the item's version). No set's partition is named `guard` (theirs are
 * `set#<setId>`, the registry's `registry`), so it collides with none.
 *
 * - read: GetItem with ConsistentRead, so the last run's write is seen (DynamoDB Developer Guide,
 *   "Read consistency").
 * - write: PutItem conditional on the version read (`attribute_not_exists(pk)` for none yet, else
 *   `#ver = :v`); a false condition is ConditionalCheckFailedException and nothing is written
 *   (Developer Guide, "Condition expressions"), answered here as false.
 *
 * Size: a run is its time, its live count and the route keys it let go (~40 bytes each); the guard
 * lets at most a share of the live routes go per window, so the item stays far below DynamoDB's
 * 400 KB item limit for the table sizes EC2 allows (Developer Guide, "Service, account, and table
 * quotas": item size; route tables hold at most 1,000 routes).
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PodrouteError } from '../errors.ts';
import type { GuardWindow } from '../routes/deletion-guard.ts';
import type { DeletionWindowStore } from '../usecases/ports.ts';
import * as z from '../util/zod-mini.ts';
import { dynamoDbError, isConditionalCheckFailed } from './dynamodb-errors.ts';

const KEY = { pk: { S: 'guard' }, sk: { S: 'route-deletions' } };

const windowSchema = z.object({
  runs: z.array(z.object({ at: z.number(), live: z.number().check(z.int(), z.nonnegative()), deleted: z.array(z.string()) })),
});

export class DynamoDbDeletionWindow implements DeletionWindowStore {
  constructor(private readonly options: { client: DynamoDBClient; tableName: string }) {}

  async read(): Promise<{ window: GuardWindow; version: number }> {
    let item;
    try {
      item = (await this.options.client.send(new GetItemCommand({ TableName: this.options.tableName, Key: KEY, ConsistentRead: true }))).Item;
    } catch (error) {
      throw dynamoDbError('GetItem', error);
    }
    if (item === undefined) return { window: { runs: [] }, version: 0 };
    const version = Number(item.ver?.N ?? '0');
    let parsed: unknown;
    try {
      parsed = JSON.parse(item.runs?.S ?? '') as unknown;
    } catch (error) {
      throw new PodrouteError('malformed deletion guard item: runs is not JSON', { retryable: false, cause: error });
    }
    const checked = windowSchema.safeParse(parsed);
    if (!checked.success || !Number.isSafeInteger(version)) throw new PodrouteError('malformed deletion guard item: runs or ver', { retryable: false, cause: checked.error });
    return { window: checked.data, version };
  }

  async write(window: GuardWindow, version: number): Promise<boolean> {
    try {
      await this.options.client.send(new PutItemCommand({
        TableName: this.options.tableName,
        Item: { ...KEY, runs: { S: JSON.stringify({ runs: window.runs }) }, ver: { N: String(version + 1) } },
        ...(version === 0
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : { ConditionExpression: '#ver = :v', ExpressionAttributeNames: { '#ver': 'ver' }, ExpressionAttributeValues: { ':v': { N: String(version) } } }),
      }));
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw dynamoDbError('PutItem', error);
    }
  }
}
