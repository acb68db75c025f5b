/**
 * The mass-deletion guard's window (lib/routes/deletion-guard.ts) as one item of the CIDR table:
 * `pk = guard`, `sk = route-deletions` (no set's partition is named `guard`), `runs` the window as
 * JSON checked by a schema, `ver` its version. A run is ~40 bytes per route it let go, far below the
 * 400 KB item limit (DynamoDB Developer Guide, "Service, account, and table quotas").
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PodrouteError } from '../errors.ts';
import type { GuardWindow } from '../routes/deletion-guard.ts';
import type { DeletionWindowStore } from '../usecases/ports.ts';
import * as z from '../util/zod-mini.ts';
import { dynamoDbError, isConditionalCheckFailed } from './dynamodb-errors.ts';

const KEY = { pk: { S: 'guard' }, sk: { S: 'route-deletions' } };

const windowSchema = z.onFirstUse(() => z.object({
  runs: z.array(z.object({ at: z.number(), live: z.number().check(z.int(), z.nonnegative()), deleted: z.array(z.string()) })),
}));

export class DynamoDbDeletionWindow implements DeletionWindowStore {
  constructor(private readonly options: { client: DynamoDBClient; tableName: string }) {}

  /** Strongly consistent, so the last run's write is seen (DynamoDB Developer Guide, "Read consistency"). */
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
    const checked = windowSchema().safeParse(parsed);
    if (!checked.success || !Number.isSafeInteger(version)) throw new PodrouteError('malformed deletion guard item: runs or ver', { retryable: false, cause: checked.error });
    return { window: checked.data, version };
  }

  /** Conditional on the version read; false when another run wrote first (then nothing is written). */
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
