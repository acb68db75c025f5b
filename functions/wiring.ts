/**
 * Wiring: environment -> config -> SDK clients -> adapters, once per Lambda container (cold start).
 * Each handler module calls `wiringFromEnv` lazily at first use; tests and the sandbox build the
 * same `Wiring` from their own clients and hand it to the handler factories instead.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { tryParseCidr } from '../lib/cidr/cidr.ts';
import { loadConfig } from '../lib/config.ts';
import type { Config } from '../lib/config.ts';
import { createCidrSet } from '../lib/ipam/index.ts';
import type { CidrSet } from '../lib/ipam/index.ts';
import { jsonLogger } from '../lib/log.ts';
import type { Logger } from '../lib/log.ts';
import type { WorkQueue } from '../lib/messages/work-queue.ts';
import type { EniPrefixes, NodeSource, RouteTables } from '../lib/usecases/ports.ts';
import { DynamoDbCidrStore, cidrSetId } from '../lib/aws/dynamodb-cidr-store.ts';
import { ec2ClientConfig } from '../lib/aws/ec2-client.ts';
import { Ec2EniPrefixes, assertPrefixMask } from '../lib/aws/ec2-prefixes.ts';
import { Ec2RouteTables } from '../lib/aws/ec2-route-tables.ts';
import { EksTokenProvider } from '../lib/aws/eks-token.ts';
import { SqsWorkQueue } from '../lib/aws/sqs-work-queue.ts';
import { createKubeConfig } from '../lib/kube/kube-config.ts';
import { KubeNodes } from '../lib/kube/kube-nodes.ts';

/** Everything a handler needs; built once per container. */
export interface Wiring {
  config: Config;
  routeTables: RouteTables;
  prefixes: EniPrefixes;
  nodes: NodeSource;
  queue: WorkQueue;
  cidrSets: CidrSet[];
  /** The webhook's shared secret (read once, on first use). */
  webhookSecret: () => Promise<string>;
  log: Logger;
  now: () => number;
  /**
   * How much faster than production this world's clocks run (1 in Lambda). The local sandbox
   * fast-forwards the schedule and the queue's timeouts, and scales the worker's retry delays alike.
   */
  timeScale?: number;
}

export interface Clients {
  ec2: EC2Client;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
}

/** Builds the wiring from already-made clients and a kube node source (shared by Lambda and sandbox). */
export async function buildWiring(
  config: Config,
  clients: Clients,
  nodes: NodeSource,
  webhookSecret: () => Promise<string>,
  options: { log?: Logger; now?: () => number; timeScale?: number } = {},
): Promise<Wiring> {
  const now = options.now ?? Date.now;
  if (config.mode === 'prefixes') {
    for (const cidr of config.clusterCidrs) {
      const family = tryParseCidr(cidr)?.family ?? 4;
      assertPrefixMask(family, config.nodeMaskSize[family]);
    }
  }
  const cidrSets = await Promise.all(
    config.clusterCidrs.map((clusterCidr) => {
      const family = tryParseCidr(clusterCidr)?.family ?? 4;
      const nodeMaskSize = config.nodeMaskSize[family];
      const store = new DynamoDbCidrStore({
        client: clients.dynamodb,
        tableName: config.cidrTableName,
        setId: cidrSetId(clusterCidr, nodeMaskSize),
        clock: now,
      });
      return createCidrSet({ clusterCidr, nodeMaskSize, store });
    }),
  );
  return {
    config,
    routeTables: new Ec2RouteTables(clients.ec2, { clusterName: config.clusterName, routeTableIds: config.routeTableIds }),
    prefixes: new Ec2EniPrefixes(clients.ec2),
    nodes,
    queue: new SqsWorkQueue(clients.sqs, config.queueUrl),
    cidrSets,
    webhookSecret: once(webhookSecret),
    log: options.log ?? jsonLogger({ base: { cluster: config.clusterName } }),
    now,
    timeScale: options.timeScale ?? 1,
  };
}

/** The ports and settings every use case takes, from a wiring. */
export function useCaseDeps(wiring: Wiring) {
  return {
    config: wiring.config,
    routeTables: wiring.routeTables,
    nodes: wiring.nodes,
    queue: wiring.queue,
    cidrSets: wiring.cidrSets,
    prefixes: wiring.prefixes,
    log: wiring.log,
    now: wiring.now,
  };
}

/** The Lambda wiring: config from the environment, clients from the execution role. */
export async function wiringFromEnv(env: Record<string, string | undefined>): Promise<Wiring> {
  const config = loadConfig(env);
  if (!config.queueUrl) throw new Error('QUEUE_URL is not set');
  if (!config.cidrTableName) throw new Error('CIDR_TABLE_NAME is not set');
  const region = env.AWS_REGION ?? 'us-east-1';
  const clients: Clients = { ec2: new EC2Client(ec2ClientConfig({ region })), sqs: new SQSClient({ region }), dynamodb: new DynamoDBClient({ region }) };
  const kubeConfig = await createKubeConfig(
    config.kube.auth === 'eks'
      ? {
          kind: 'eks',
          clusterName: config.kube.eksClusterName,
          describeCluster: async (name) => {
            // Loaded on first use: only the EKS flavour of a cold start pays for this client.
            const { DescribeClusterCommand, EKSClient } = await import('@aws-sdk/client-eks');
            const out = await new EKSClient({ region }).send(new DescribeClusterCommand({ name }));
            return out.cluster ?? {};
          },
          tokens: new EksTokenProvider({ clusterName: config.kube.eksClusterName, region }),
        }
      : { kind: 'secret', fetchSecret: () => readSecretsManager(region, config.kube.secretId ?? '') },
  );
  const webhookSecret = async (): Promise<string> => {
    if (!config.webhookSecret.id) throw new Error('WEBHOOK_SECRET_ID is not set');
    return config.webhookSecret.source === 'ssm'
      ? readSsmParameter(region, config.webhookSecret.id)
      : readSecretsManager(region, config.webhookSecret.id);
  };
  return buildWiring(config, clients, new KubeNodes(kubeConfig), webhookSecret);
}

async function readSecretsManager(region: string, id: string): Promise<string> {
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const out = await new SecretsManagerClient({ region }).send(new GetSecretValueCommand({ SecretId: id }));
  if (out.SecretString === undefined || out.SecretString === '') throw new Error(`secret ${id} has no string value`);
  return out.SecretString;
}

async function readSsmParameter(region: string, name: string): Promise<string> {
  const { GetParameterCommand, SSMClient } = await import('@aws-sdk/client-ssm');
  const out = await new SSMClient({ region }).send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  const value = out.Parameter?.Value;
  if (!value) throw new Error(`SSM parameter ${name} has no value`);
  return value;
}

/** Memoises an async factory; a failed attempt is forgotten so the next call tries again. */
export function once<T>(factory: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= factory().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
