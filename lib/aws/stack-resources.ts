/**
 * Does the stack's queue and table exist? Read-only, for `podroute doctor`. A missing queue answers
 * `QueueDoesNotExist` (SQS API reference, GetQueueAttributes); a missing table
 * `ResourceNotFoundException`, and a table is usable when ACTIVE (DynamoDB API reference,
 * DescribeTable). A queue's depth is its ApproximateNumberOfMessages (GetQueueAttributes). A
 * deployed stack's resources come from CloudFormation DescribeStackResources (its StackId is an ARN
 * that names the partition, region and account). Other failures (credentials, network) are thrown
 * for the caller to report.
 */
import { type CloudFormationClient, DescribeStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DYNAMODB_ERROR_CODES, SQS_ERROR_CODES } from './aws-error-codes.ts';
import { classifyAwsError } from './aws-errors.ts';
import { InvalidInputError } from '../errors.ts';
import type { StackResources } from '../usecases/ports.ts';

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

  async queueDepth(url: string): Promise<number> {
    const out = await this.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }));
    const depth = Number(out.Attributes?.ApproximateNumberOfMessages);
    if (!Number.isInteger(depth) || depth < 0) throw new InvalidInputError(`GetQueueAttributes answered no ApproximateNumberOfMessages for ${url}`);
    return depth;
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

export interface DeployedStack {
  stackId: string;
  partition: string;
  region: string;
  account: string;
  resources: Array<{ logicalId: string; type: string; physicalId: string }>;
}

const STACK_ARN = /^arn:([a-z-]+):cloudformation:([a-z0-9-]+):(\d{12}):stack\//;

/**
 * DescribeStackResources answers "only the first 100 resources" (CloudFormation API Reference); a
 * full answer may be a cut one, so the doctor says so instead of judging part of a stack.
 */
const DESCRIBE_STACK_RESOURCES_MAX = 100;

export class CloudFormationStacks {
  constructor(private readonly client: CloudFormationClient) {}

  async describe(name: string): Promise<DeployedStack> {
    const out = await this.client.send(new DescribeStackResourcesCommand({ StackName: name }));
    const all = out.StackResources ?? [];
    if (all.length >= DESCRIBE_STACK_RESOURCES_MAX) {
      throw new InvalidInputError(`stack ${name} has ${DESCRIBE_STACK_RESOURCES_MAX} or more resources, more than DescribeStackResources answers; podroute's own stack holds fewer: is --stack the right stack?`);
    }
    const stackId = all[0]?.StackId ?? '';
    const arn = STACK_ARN.exec(stackId);
    if (!arn) throw new InvalidInputError(`DescribeStackResources answered no StackId ARN for ${name}`);
    const resources = all.flatMap((r) => (r.LogicalResourceId && r.ResourceType && r.PhysicalResourceId ? [{ logicalId: r.LogicalResourceId, type: r.ResourceType, physicalId: r.PhysicalResourceId }] : []));
    return { stackId, partition: arn[1] ?? 'aws', region: arn[2] ?? '', account: arn[3] ?? '', resources };
  }
}
