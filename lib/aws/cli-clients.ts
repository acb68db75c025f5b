/** The SDK clients the CLI commands hand to the adapters, one region each (the commands import no SDK). */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { SQSClient } from '@aws-sdk/client-sqs';

/** What `reconcile --dry-run` reads: EC2, the lease table and the queue. */
export interface ReconcileClients {
  ec2: EC2Client;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
}

/** What `doctor` reads: the same, Service Quotas for the route quota, Lambda for concurrency, and for --stack CloudFormation, CloudWatch and IAM. */
export interface DoctorClients extends ReconcileClients {
  serviceQuotas: ServiceQuotasClient;
  lambda: LambdaClient;
  cloudFormation: CloudFormationClient;
  cloudWatch: CloudWatchClient;
  iam: IAMClient;
}

export function reconcileClients(region: string): ReconcileClients {
  return { ec2: new EC2Client({ region }), sqs: new SQSClient({ region }), dynamodb: new DynamoDBClient({ region }) };
}

export function doctorClients(region: string): DoctorClients {
  return {
    ...reconcileClients(region),
    serviceQuotas: new ServiceQuotasClient({ region }),
    lambda: new LambdaClient({ region }),
    cloudFormation: new CloudFormationClient({ region }),
    cloudWatch: new CloudWatchClient({ region }),
    iam: new IAMClient({ region }),
  };
}
