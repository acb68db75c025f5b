/**
 * The services `podroute doctor` tests run against, started once per file: the EC2 emulator
 * (unthrottled), local SQS with one queue, dynalite, the Service Quotas stand-in, and a temporary
 * directory for the kubeconfig the Kubernetes emulator (started per test) writes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { startLocalSqs, type LocalSqs } from '../../infra/local/queue/local-sqs.ts';
import { startServiceQuotasEmulator, type ServiceQuotasEmulator } from '../../infra/local/service-quotas/index.ts';
import { startDynalite, type LocalDynamo } from './dynalite.ts';

export interface DoctorServices {
  ec2: Ec2Emulator;
  sqs: LocalSqs;
  dynamo: LocalDynamo;
  quotas: ServiceQuotasEmulator;
  dir: string;
  kubeconfig: string;
  queueUrl: string;
  close(): Promise<void>;
}

export async function startDoctorServices(queueName: string, dirPrefix: string): Promise<DoctorServices> {
  const [ec2, sqs, dynamo, quotas] = await Promise.all([startEc2Emulator({ throttle: false }), startLocalSqs(), startDynalite(), startServiceQuotasEmulator()]);
  const dir = await mkdtemp(join(tmpdir(), dirPrefix));
  const queueUrl = (await sqs.createQueue(queueName)).queueUrl;
  return {
    ec2, sqs, dynamo, quotas, dir, kubeconfig: join(dir, 'kubeconfig'), queueUrl,
    close: async () => {
      await Promise.all([ec2.close(), sqs.stop(), dynamo.close(), quotas.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
