/**
 * The claim store (lib/ipam/claim-store.ts) over one DynamoDB table, each primitive one single-item
 * request; `DynamoDbCidrStore` is the claim protocol (lib/ipam/claim-protocol.ts) over it. One
 * partition per CIDR set (`pk = set#<cluster CIDR>@<mask>`), `sk` the protocol's key, its attributes
 * as S or N plus `ver` N, the item's version (none reads as 0; other attributes are ignored).
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import { canonicalCidr } from '../cidr/cidr.ts';
import { PodrouteError } from '../errors.ts';
import { ClaimProtocolStore } from '../ipam/claim-protocol.ts';
import type { ClaimStore, ItemAttrs, StoredItem } from '../ipam/claim-store.ts';
import { dynamoDbError, isConditionalCheckFailed } from './dynamodb-errors.ts';

export { blockKey, ownerKey } from '../ipam/claim-items.ts';

/** Which kind of item a write with a false condition was for (for metrics and benchmarks). */
export type ConditionalWrite = 'block' | 'owner' | 'cursor';

interface DynamoDbClaimStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** One CIDR set: see `cidrSetId`. */
  readonly setId: string;
  /** Called once per write whose condition failed. */
  readonly onConditionalFailure?: (write: ConditionalWrite) => void;
}

interface DynamoDbCidrStoreOptions extends DynamoDbClaimStoreOptions {
  /** Milliseconds since the epoch (default Date.now); stamps leases and owner records. */
  readonly clock?: () => number;
}

/** The id of the CIDR set `clusterCidr` cut into `/nodeMaskSize` blocks, e.g. `10.0.0.0/16@24`. */
export const cidrSetId = (clusterCidr: string, nodeMaskSize: number): string =>
  `${canonicalCidr(clusterCidr)}@${nodeMaskSize}`;

/**
 * CreateTable input for the CIDR table, for the local sandbox and tests. The deployed table is
 * serverless.yml's own `CidrTable` resource (written there, not generated from this), with the same keys.
 */
export const cidrTableDefinition = (tableName: string): CreateTableCommandInput => ({
  TableName: tableName,
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
});

/** The CIDR set store podroute deploys: the claim protocol over one DynamoDB table. */
export class DynamoDbCidrStore extends ClaimProtocolStore {
  constructor(options: DynamoDbCidrStoreOptions) {
    super(new DynamoDbClaimStore(options), { clock: options.clock ?? Date.now });
  }
}

/** Most items a Query page may return (DynamoDB stops a page at 1 MB anyway). */
const MAX_PAGE = 1000;
const KEYS: ReadonlySet<string> = new Set(['pk', 'sk', 'ver']);

type Values = Record<string, AttributeValue>;

/** Exported for test/ipam/claim-protocol.test.ts, which runs the claim protocol over each store primitive. */
export class DynamoDbClaimStore implements ClaimStore {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly pk: string;
  private readonly onConditionalFailure: (write: ConditionalWrite) => void;

  constructor(options: DynamoDbClaimStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.pk = `set#${options.setId}`;
    this.onConditionalFailure = options.onConditionalFailure ?? (() => undefined);
  }

  /** Strongly consistent: it returns every write that succeeded before it (DynamoDB Developer Guide, "Read consistency"). */
  async get(key: string): Promise<StoredItem | null> {
    const output = await this.call('GetItem', () => this.client.send(new GetItemCommand({
      TableName: this.tableName,
      Key: this.key(key),
      ConsistentRead: true,
    })));
    return output.Item === undefined ? null : toItem(output.Item);
  }

  async putIfAbsent(key: string, attrs: ItemAttrs): Promise<boolean> {
    return this.guarded(key, 'PutItem', () => this.client.send(new PutItemCommand({
      TableName: this.tableName,
      Item: { ...this.key(key), ...toValues(attrs), ver: num(1) },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  async putIfVersion(key: string, attrs: ItemAttrs, version: number): Promise<boolean> {
    return this.guarded(key, 'PutItem', () => this.client.send(new PutItemCommand({
      TableName: this.tableName,
      Item: { ...this.key(key), ...toValues(attrs), ver: num(version + 1) },
      ...versionCondition(version),
    })));
  }

  async deleteIf(key: string, version: number): Promise<boolean> {
    return this.guarded(key, 'DeleteItem', () => this.client.send(new DeleteItemCommand({
      TableName: this.tableName,
      Key: this.key(key),
      ...versionCondition(version),
    })));
  }

  /**
   * ADD on a missing number starts from 0 and UpdateItem applies it atomically, so concurrent
   * increments each get their own value (DynamoDB Developer Guide, "Atomic counters").
   */
  async increment(key: string, attr: string, by: number): Promise<number> {
    const output = await this.call('UpdateItem', () => this.client.send(new UpdateItemCommand({
      TableName: this.tableName,
      Key: this.key(key),
      UpdateExpression: 'ADD #attr :by',
      ExpressionAttributeNames: { '#attr': attr },
      ExpressionAttributeValues: { ':by': num(by) },
      ReturnValues: 'UPDATED_NEW',
    })));
    return numberAttr(output.Attributes ?? {}, attr);
  }

  async list(from: string, to: string, limit = Number.POSITIVE_INFINITY): Promise<StoredItem[]> {
    const items: StoredItem[] = [];
    await this.queryPages(from, to, {}, (page) => {
      for (const item of page.Items ?? []) items.push(toItem(item));
      return items.length < limit;
    }, () => Math.min(MAX_PAGE, limit - items.length));
    return items.slice(0, limit);
  }

  async count(from: string, to: string): Promise<number> {
    let count = 0;
    await this.queryPages(from, to, { Select: 'COUNT' }, (page) => {
      count += page.Count ?? 0;
      return true;
    });
    return count;
  }

  // ---- SDK plumbing ---------------------------------------------------------------------------

  private key(sk: string): Values {
    return { pk: { S: this.pk }, sk: { S: sk } };
  }

  /** Strongly consistent Query over `from..to`, every page; `onPage` returns false to stop early. */
  private async queryPages(
    from: string,
    to: string,
    extra: Pick<QueryCommandInput, 'Select'>,
    onPage: (page: { Items?: Values[]; Count?: number }) => boolean,
    limit?: () => number,
  ): Promise<void> {
    let start: Values | undefined;
    do {
      const page = await this.call('Query', () => this.client.send(new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': { S: this.pk }, ':from': { S: from }, ':to': { S: to } },
        ConsistentRead: true,
        ...extra,
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        ...(limit === undefined ? {} : { Limit: limit() }),
      })));
      if (!onPage(page)) return;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  }

  /**
   * A conditional write: true when done, false when its condition was false (then DynamoDB writes
   * nothing and answers ConditionalCheckFailedException: Developer Guide, "Condition expressions").
   */
  private async guarded(key: string, action: string, run: () => Promise<unknown>): Promise<boolean> {
    try {
      await run();
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw dynamoDbError(action, error);
      this.onConditionalFailure(key.startsWith('b#') ? 'block' : key.startsWith('o#') ? 'owner' : 'cursor');
      return false;
    }
  }

  private async call<T>(action: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw dynamoDbError(action, error);
    }
  }
}

function versionCondition(version: number): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues?: Values } {
  return version === 0
    ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#ver)', ExpressionAttributeNames: { '#ver': 'ver' } }
    : { ConditionExpression: '#ver = :ver', ExpressionAttributeNames: { '#ver': 'ver' }, ExpressionAttributeValues: { ':ver': num(version) } };
}

function toValues(attrs: ItemAttrs): Values {
  const values: Values = {};
  for (const [name, value] of Object.entries(attrs)) values[name] = typeof value === 'number' ? num(value) : { S: value };
  return values;
}

function toItem(item: Values): StoredItem {
  const key = item.sk?.S;
  if (key === undefined) throw corrupt('an item without a string sk');
  const attrs: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(item)) {
    if (KEYS.has(name)) continue;
    if (value.S !== undefined) attrs[name] = value.S;
    else if (value.N !== undefined) attrs[name] = numberAttr(item, name);
  }
  return { key, attrs, version: item.ver === undefined ? 0 : numberAttr(item, 'ver') };
}

// ---- helpers ----------------------------------------------------------------------------------

const num = (value: number): AttributeValue => ({ N: String(value) });

function corrupt(what: string): PodrouteError {
  return new PodrouteError(`malformed CIDR table item: ${what}`, { retryable: false });
}

function numberAttr(item: Values, name: string): number {
  const text = item[name]?.N;
  const value = text === undefined ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(value)) throw corrupt(`attribute ${name} is not a whole number`);
  return value;
}

