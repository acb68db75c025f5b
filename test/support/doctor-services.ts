/**
 * The services `podroute doctor` tests run against, started once per file: the EC2 emulator
 * (unthrottled), local SQS with one queue, dynalite, the Service Quotas, IAM, CloudFormation, CloudWatch and Lambda stand-ins, and a temporary
 * directory for the kubeconfig the Kubernetes emulator (started per test) writes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import type { DoctorClients } from '../../lib/aws/cli-clients.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { startServiceQuotasEmulator, type ServiceQuotasEmulator } from '../../infra/local/service-quotas/index.ts';
import { startIamEmulator, type IamEmulator } from '../../infra/local/iam/index.ts';
import { startCloudFormationEmulator, type CloudFormationEmulator } from '../../infra/local/cloudformation/index.ts';
import { startLambdaEmulator, type LambdaEmulator } from '../../infra/local/lambda/index.ts';
import { startCloudWatchEmulator, type CloudWatchEmulator } from '../../infra/local/cloudwatch/index.ts';
import { startDynalite, type LocalDynamo } from './dynalite.ts';

export interface DoctorServices {
  ec2: Ec2Emulator;
  sqs: LocalSqs;
  dynamo: LocalDynamo;
  quotas: ServiceQuotasEmulator;
  iam: IamEmulator;
  cloudFormation: CloudFormationEmulator;
  lambda: LambdaEmulator;
  cloudWatch: CloudWatchEmulator;
  dir: string;
  kubeconfig: string;
  queueUrl: string;
  close(): Promise<void>;
}

export async function startDoctorServices(queueName: string, dirPrefix: string): Promise<DoctorServices> {
  const [ec2, sqs, dynamo, quotas, iam, cloudFormation, lambda, cloudWatch] = await Promise.all([
    startEc2Emulator({ throttle: false }),
    startLocalSqs(),
    startDynalite(),
    startServiceQuotasEmulator(),
    startIamEmulator(),
    startCloudFormationEmulator(),
    startLambdaEmulator(),
    startCloudWatchEmulator(),
  ]);
  const dir = await mkdtemp(join(tmpdir(), dirPrefix));
  const queueUrl = (await sqs.createQueue(queueName)).queueUrl;
  return {
    ec2, sqs, dynamo, quotas, iam, cloudFormation, lambda, cloudWatch, dir, kubeconfig: join(dir, 'kubeconfig'), queueUrl,
    close: async () => {
      await Promise.all([ec2.close(), sqs.stop(), dynamo.close(), quotas.close(), iam.close(), cloudFormation.close(), lambda.close(), cloudWatch.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The doctor's SDK clients for these services, one attempt each. */
export function doctorClientsFor(services: DoctorServices, region: string): DoctorClients {
  const local = { region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 };
  return {
    ec2: new EC2Client({ ...local, endpoint: services.ec2.url }),
    sqs: services.sqs.createClient(),
    dynamodb: services.dynamo.client(),
    serviceQuotas: new ServiceQuotasClient({ ...local, endpoint: services.quotas.url }),
    cloudFormation: new CloudFormationClient({ ...local, endpoint: services.cloudFormation.url }),
    cloudWatch: new CloudWatchClient({ ...local, endpoint: services.cloudWatch.url }),
    iam: new IAMClient({ ...local, endpoint: services.iam.url }),
    lambda: new LambdaClient({ ...local, endpoint: services.lambda.url }),
  };
}
