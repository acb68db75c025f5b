/**
 * The CIDR set registry (lib/ipam/set-registry.ts) as one item of the CIDR table:
 * `pk = registry`, `sk = cidr-sets`, attribute `ranges` a string set. No set's partition is named
 * `registry` (theirs are `set#<setId>`), so it collides with none.
 *
 * - add: UpdateItem `ADD #ranges :r` with a string set. ADD on a set attribute adds the elements
 *   not yet in it and creates the attribute (and the item) when missing (DynamoDB API Reference,
 *   UpdateItem, UpdateExpression ADD), so a repeated or concurrent add needs no condition.
 * - list: GetItem with ConsistentRead, so a range added before returns (DynamoDB Developer Guide,
 *   "Read consistency"). The item stays small: a range is ~20 bytes and an item may hold 400 KB
 *   (Developer Guide, "Service, account, and table quotas": item size).
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SetRegistry } from '../ipam/set-registry.ts';
import { dynamoDbError } from './dynamodb-errors.ts';

const KEY = { pk: { S: 'registry' }, sk: { S: 'cidr-sets' } };

export class DynamoDbSetRegistry implements SetRegistry {
  constructor(private readonly options: { client: DynamoDBClient; tableName: string }) {}

  async add(ranges: readonly string[]): Promise<void> {
    // DynamoDB rejects an empty set value (API Reference, AttributeValue SS): nothing to send.
    if (ranges.length === 0) return;
    try {
      await this.options.client.send(new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: KEY,
        UpdateExpression: 'ADD #ranges :r',
        ExpressionAttributeNames: { '#ranges': 'ranges' },
        ExpressionAttributeValues: { ':r': { SS: [...new Set(ranges)] } },
      }));
    } catch (error) {
      throw dynamoDbError('UpdateItem', error);
    }
  }

  async list(): Promise<string[]> {
    try {
      const out = await this.options.client.send(new GetItemCommand({ TableName: this.options.tableName, Key: KEY, ConsistentRead: true }));
      return [...(out.Item?.ranges?.SS ?? [])].sort();
    } catch (error) {
      throw dynamoDbError('GetItem', error);
    }
  }
}
