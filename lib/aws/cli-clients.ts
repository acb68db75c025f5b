/** The SDK clients the CLI commands hand to the adapters, one region each (the commands import no SDK). */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { SQSClient } from '@aws-sdk/client-sqs';

/** What `reconcile --dry-run` reads: EC2, the lease table and the queue. */
export interface ReconcileClients {
  ec2: EC2Client;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
}

/** What `doctor` reads: the same, and Service Quotas for the route quota. */
export interface DoctorClients extends ReconcileClients {
  serviceQuotas: ServiceQuotasClient;
}

export function reconcileClients(region: string): ReconcileClients {
  return { ec2: new EC2Client({ region }), sqs: new SQSClient({ region }), dynamodb: new DynamoDBClient({ region }) };
}

export function doctorClients(region: string): DoctorClients {
  return { ...reconcileClients(region), serviceQuotas: new ServiceQuotasClient({ region }) };
}
