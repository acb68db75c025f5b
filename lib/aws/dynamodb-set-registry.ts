/**
 * The CIDR set registry (lib/ipam/set-registry.ts) as one item of the CIDR table: `pk = registry`,
 * `sk = cidr-sets`, `ranges` a string set (no set's partition is named `registry`). A range is ~20
 * bytes and an item may hold 400 KB (DynamoDB Developer Guide, "Service, account, and table quotas").
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SetRegistry } from '../ipam/set-registry.ts';
import { dynamoDbError } from './dynamodb-errors.ts';

const KEY = { pk: { S: 'registry' }, sk: { S: 'cidr-sets' } };

export class DynamoDbSetRegistry implements SetRegistry {
  constructor(private readonly options: { client: DynamoDBClient; tableName: string }) {}

  /**
   * ADD on a string set adds the missing elements and creates the attribute and item when absent
   * (DynamoDB API Reference, UpdateItem), so a repeated or concurrent add needs no condition.
   */
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

  /** Strongly consistent, so a range added before is listed (DynamoDB Developer Guide, "Read consistency"). */
  async list(): Promise<string[]> {
    try {
      const out = await this.options.client.send(new GetItemCommand({ TableName: this.options.tableName, Key: KEY, ConsistentRead: true }));
      return [...(out.Item?.ranges?.SS ?? [])].sort();
    } catch (error) {
      throw dynamoDbError('GetItem', error);
    }
  }
}
