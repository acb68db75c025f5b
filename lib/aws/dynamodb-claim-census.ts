/**
 * The claim census (lib/usecases/claim-census.ts) as one item of the CIDR table: `pk = census`,
 * `sk = claims` (no set's partition is named `census`). `runAt`/`runClear` is the last reconcile run
 * recorded (every run writes it: its age is what keeps a clear census fresh), `claimAt` the last
 * unleased claim an admission saw. Each is an UpdateItem conditional on the stored time being
 * older, so overlapping writers never move a field back.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PodrouteError } from '../errors.ts';
import type { ClaimCensusRecord, ClaimCensusStore } from '../usecases/ports.ts';
import { dynamoDbError, isConditionalCheckFailed } from './dynamodb-errors.ts';

const KEY = { pk: { S: 'census' }, sk: { S: 'claims' } };

export class DynamoDbClaimCensus implements ClaimCensusStore {
  constructor(private readonly options: { client: DynamoDBClient; tableName: string }) {}

  /** Strongly consistent, so a claim recorded by an admission a moment ago is seen (DynamoDB Developer Guide, "Read consistency"). */
  async read(): Promise<ClaimCensusRecord> {
    let item;
    try {
      item = (await this.options.client.send(new GetItemCommand({ TableName: this.options.tableName, Key: KEY, ConsistentRead: true }))).Item;
    } catch (error) {
      throw dynamoDbError('GetItem', error);
    }
    if (item === undefined) return {};
    const runAt = timeOf(item.runAt?.N);
    const claimAt = timeOf(item.claimAt?.N);
    const clear = item.runClear?.BOOL;
    return {
      ...(runAt !== undefined && clear !== undefined ? { run: { at: runAt, clear } } : {}),
      ...(claimAt !== undefined ? { claimAt } : {}),
    };
  }

  async recordRun(run: { at: number; clear: boolean }): Promise<void> {
    await this.update('SET runAt = :t, runClear = :c', 'runAt', run.at, { ':c': { BOOL: run.clear } });
  }

  async recordClaim(at: number): Promise<void> {
    await this.update('SET claimAt = :t', 'claimAt', at, {});
  }

  /** Sets the field to `at` unless it holds a later (or the same) time; a lost condition is that, not an error. */
  private async update(expression: string, field: string, at: number, values: Record<string, { BOOL: boolean }>): Promise<void> {
    try {
      await this.options.client.send(new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: KEY,
        UpdateExpression: expression,
        ConditionExpression: `attribute_not_exists(${field}) OR ${field} < :t`,
        ExpressionAttributeValues: { ':t': { N: String(at) }, ...values },
      }));
    } catch (error) {
      if (isConditionalCheckFailed(error)) return;
      throw dynamoDbError('UpdateItem', error);
    }
  }
}

/** An epoch-ms attribute; a malformed one is refused, never read as 0. */
function timeOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new PodrouteError(`malformed claim census item: ${JSON.stringify(text.slice(0, 32))} is not a time`, { retryable: false });
  return value;
}
