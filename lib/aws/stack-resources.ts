/**
 * Does the stack's queue and table exist? Read-only, for `podroute doctor`. A missing queue answers
 * `QueueDoesNotExist` (SQS API reference, GetQueueAttributes); a missing table
 * `ResourceNotFoundException`, and a table is usable when ACTIVE (DynamoDB API reference,
 * DescribeTable). Other failures (credentials, network) are thrown for the caller to report.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { StackResources } from '../usecases/doctor.ts';
import { DYNAMODB_ERROR_CODES, SQS_ERROR_CODES } from './aws-error-codes.ts';
import { classifyAwsError } from './aws-errors.ts';

export class AwsStackResources implements StackResources {
  constructor(private readonly clients: { sqs: SQSClient; dynamodb: DynamoDBClient }) {}

  async queue(url: string): Promise<{ exists: boolean; detail: string }> {
    try {
      const out = await this.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
      return { exists: true, detail: out.Attributes?.QueueArn ?? url };
    } catch (error) {
      if (classifyAwsError(error, SQS_ERROR_CODES) === 'not-found') return { exists: false, detail: `no queue at ${url}` };
      throw error;
    }
  }

  async table(name: string): Promise<{ exists: boolean; detail: string }> {
    try {
      const out = await this.clients.dynamodb.send(new DescribeTableCommand({ TableName: name }));
      const status = out.Table?.TableStatus ?? 'UNKNOWN';
      return { exists: status === 'ACTIVE', detail: `${name} is ${status}` };
    } catch (error) {
      if (classifyAwsError(error, DYNAMODB_ERROR_CODES) === 'not-found') return { exists: false, detail: `no table named ${name}` };
      throw error;
    }
  }
}
