/**
 * The claim census (lib/usecases/claim-census.ts) as one item of the CIDR table: `pk = census`,
 * `sk = claims` (no set's partition is named `census`). `runAt`/`runClear` is the last reconcile run
 * recorded (every run writes it: its age is what keeps a clear census fresh), `claimAt` the last
 * unleased claim an admission saw. Each is one UpdateItem (`recordRun` of the port says when a run
 * replaces the stored one); a claim over an older one or a wrong clock's. The conditions compare
 * number attributes (`<`, `>`) and test `attribute_not_exists`, which is true of an item not there
 * yet (DynamoDB Developer Guide, "Condition expressions" and "Comparison operator and function
 * reference").
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { PodrouteError } from '../errors.ts';
import { CENSUS_CLOCK_SKEW_MS } from '../usecases/claim-census.ts';
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

  async recordRun(run: { at: number; clear: boolean; writtenAt: number }): Promise<void> {
    const set = 'SET runAt = :t, runClear = :c';
    const values: Record<string, AttributeValue> = { ':t': { N: String(run.at) }, ':c': { BOOL: run.clear } };
    // A run that is not clear is always written; a clear one over an older run, or over one stamped
    // further ahead of the writer's clock than the skew bound (a wrong clock's, which would else keep
    // every later run out until that time comes). Against the time of the write, not the run's
    // start: a later run that overlaps this one started before now, so its doubt stands.
    if (!run.clear) return this.update({ UpdateExpression: set, ExpressionAttributeValues: values });
    values[':ahead'] = { N: String(run.writtenAt + CENSUS_CLOCK_SKEW_MS) };
    return this.update({ UpdateExpression: set, ConditionExpression: 'attribute_not_exists(runAt) OR runAt < :t OR runAt > :ahead', ExpressionAttributeValues: values });
  }

  async recordClaim(at: number): Promise<void> {
    await this.update({
      UpdateExpression: 'SET claimAt = :t',
      ConditionExpression: 'attribute_not_exists(claimAt) OR claimAt < :t OR claimAt > :ahead',
      ExpressionAttributeValues: { ':t': { N: String(at) }, ':ahead': { N: String(at + CENSUS_CLOCK_SKEW_MS) } },
    });
  }

  /** One UpdateItem of the census item; a lost condition is the stored value standing, not an error. */
  private async update(input: Pick<UpdateItemCommandInput, 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues'>): Promise<void> {
    try {
      await this.options.client.send(new UpdateItemCommand({ TableName: this.options.tableName, Key: KEY, ...input }));
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
