/**
 * `podroute doctor`: a read-only preflight of a live AWS account and cluster, with the same
 * credentials as `reconcile --dry-run` (the AWS default credential chain, your kubeconfig). Prints
 * one line per check and exits 1 when any check failed, 2 for bad flags. Writes nothing: its AWS
 * calls are DescribeRouteTables, DescribeNetworkInterfaces, Service Quotas GetServiceQuota and
 * GetAWSDefaultServiceQuota, SQS GetQueueAttributes and DynamoDB DescribeTable (prefixes mode:
 * DescribeInstances, DescribeSubnets, GetSubnetCidrReservations and a DynamoDB count query); its Kubernetes
 * calls are node lists, SubjectAccessReviews for podroute's identity (`--kube-user`, `--kube-groups`) and a
 * MutatingWebhookConfiguration list. With --stack: CloudFormation DescribeStackResources, IAM
 * SimulatePrincipalPolicy, the dead-letter queue's GetQueueAttributes, CloudWatch DescribeAlarms and
 * GetMetricData, Lambda GetFunctionConcurrency (./doctor-stack.ts); always Lambda GetAccountSettings; with
 * --dry-run-writes, EC2 CreateRoute and ModifyNetworkInterfaceAttribute with DryRun (nothing changes).
 */
import { loadConfig } from '../config.ts';
import { type DoctorClients, doctorClients } from '../aws/cli-clients.ts';
import { loadKubeConfig } from '../kube/kubeconfig-file.ts';
import { AwsStackResources, CloudFormationStacks } from '../aws/stack-resources.ts';
import { IamPolicySimulator } from '../aws/iam-simulator.ts';
import { CloudWatchReads } from '../aws/cloudwatch-reads.ts';
import { KubeAccess } from '../kube/kube-access.ts';
import { KubeNodes } from '../kube/kube-nodes.ts';
import { MAX_ROUTE_QUOTA } from '../routes/route-table-headroom.ts';
import { doctor, formatCheck } from '../usecases/doctor.ts';
import { sdkDefaultRegion } from '../aws/sdk-region.ts';
import { doctorPlaneChecks, planeWrites } from './doctor-wiring.ts';
import { physicalId, readStack, stackChecks } from './doctor-stack.ts';
import { DEFAULT_RESERVED_CONCURRENCY, checkConcurrency } from './doctor-concurrency.ts';
import { checkAllocators } from './doctor-allocators.ts';
import { LambdaConcurrency } from '../aws/lambda-concurrency.ts';
import type { CheckResult } from '../usecases/doctor-check.ts';
import { UsageError, commandFlags, stringOptions } from './main.ts';
import { configFromFlags, type ConfigFlag } from './config-flags.ts';
import { OUTPUT_OPTIONS, formatOutput, outputFormat } from './output.ts';
import { cliRegion } from './region.ts';
import { DEFAULT_KUBE_GROUPS, DEFAULT_KUBE_USER, DOCTOR_HELP } from './command-help.ts';

export { DOCTOR_HELP } from './command-help.ts';
import type { CliIo, Command } from './main.ts';
import type { AccessSubject } from '../usecases/ports.ts';



export type { DoctorClients } from '../aws/cli-clients.ts';

const CONFIG_FLAGS: readonly ConfigFlag[] = [
  'mode', 'cluster-name', 'cluster-cidrs', 'route-table-ids', 'node-selector', 'node-sync-mode',
  'node-mask-size-ipv4', 'node-mask-size-ipv6', 'queue-url', 'cidr-table-name',
];

const DOCTOR_FLAGS = {
  ...stringOptions([...CONFIG_FLAGS, 'route-quota', 'stack', 'reserved-concurrency', 'kube-user', 'kube-groups', 'kubeconfig', 'context', 'region']),
  'dry-run-writes': { type: 'boolean' },
  ...OUTPUT_OPTIONS,
} as const;

/** The command; tests hand in clients for the local stand-ins. */
export function createDoctorCommand(makeClients: (region: string) => DoctorClients = doctorClients): Command {
  return {
    async run(args: string[], io: CliIo): Promise<number> {
      const flags = commandFlags(args, DOCTOR_FLAGS, io, DOCTOR_HELP);
      if (!flags) return 0;
      const format = outputFormat(flags, ['table', 'json', 'yaml'], 'table');
      const routeQuota = parseQuota(flags.string('route-quota'));
      const subject = parseSubject(flags.string('kube-user') ?? io.env.PODROUTE_KUBE_USER, flags.string('kube-groups') ?? io.env.PODROUTE_KUBE_GROUPS);
      const stackName = flags.string('stack') ?? io.env.STACK_NAME;
      const reservedConcurrency = parseReserved(flags.string('reserved-concurrency'));
      const region = await cliRegion(flags.string('region'), io.env, sdkDefaultRegion);
      const clients = makeClients(region);
      const stackPorts = {
        stacks: new CloudFormationStacks(clients.cloudFormation),
        simulator: new IamPolicySimulator(clients.iam),
        queueDepth: (url: string) => new AwsStackResources(clients).queueDepth(url),
        cloudWatch: new CloudWatchReads(clients.cloudWatch),
        now: Date.now,
      };
      const deployed = stackName ? await readStack(stackName, stackPorts) : null;
      const fromStack = (logicalId: string) => (deployed?.stack ? physicalId(deployed.stack, logicalId) : undefined);
      const settings = configFromFlags(flags, io.env, CONFIG_FLAGS);
      const config = loadConfig({
        ...settings,
        PREFIX_RESERVATION_DESCRIPTION: io.env.PREFIX_RESERVATION_DESCRIPTION,
        QUEUE_URL: settings.QUEUE_URL ?? fromStack('WorkQueue'),
        CIDR_TABLE_NAME: settings.CIDR_TABLE_NAME ?? fromStack('CidrTable'),
        ROUTE_QUOTA: routeQuota ?? io.env.ROUTE_QUOTA,
      });
      // loadConfig has checked the masks' bounds (NODE_MASK_SIZE_* from the flags or the environment).
      const kubeConfig = loadKubeConfig(flags.string('kubeconfig'), flags.string('context'));
      const results: CheckResult[] = deployed ? [deployed.result] : [];
      const access = new KubeAccess(kubeConfig);
      results.push(...await doctor({
        config,
        plane: doctorPlaneChecks({ config, ec2: clients.ec2, dynamodb: clients.dynamodb, serviceQuotas: clients.serviceQuotas, dryRunWrites: flags.flag('dry-run-writes') }),
        nodes: new KubeNodes(kubeConfig),
        access,
        subject,
        stack: new AwsStackResources(clients),
      }));
      results.push(...(await checkAllocators(access)));
      if (deployed?.stack) results.push(...(await stackChecks(deployed.stack, config.clusterName, planeWrites(config), stackPorts)));
      const stackFunctions = (deployed?.stack?.resources ?? []).filter((r) => r.type === 'AWS::Lambda::Function').map((r) => r.physicalId);
      results.push(await checkConcurrency(new LambdaConcurrency(clients.lambda), reservedConcurrency, stackFunctions));
      io.stdout(formatOutput(format, results, () => results.map((result) => `${formatCheck(result)}\n`).join('')));
      return results.some((result) => result.status === 'FAIL') ? 1 : 0;
    },
  };
}

export const doctorCommand = createDoctorCommand();

function parseQuota(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const quota = Number(text);
  if (!/^[0-9]+$/.test(text) || quota < 1 || quota > MAX_ROUTE_QUOTA) {
    throw new UsageError(`--route-quota must be a whole number from 1 to ${MAX_ROUTE_QUOTA} (EC2's adjustable maximum), not ${JSON.stringify(text)}`);
  }
  return text;
}

function parseReserved(text: string | undefined): number {
  if (text === undefined) return DEFAULT_RESERVED_CONCURRENCY;
  if (!/^[0-9]{1,6}$/.test(text)) throw new UsageError(`--reserved-concurrency must be a whole number (the params' reservations in all; 0: none), not ${JSON.stringify(text)}`);
  return Number(text);
}

function parseSubject(user: string | undefined, groups: string | undefined): AccessSubject {
  const subject = {
    user: (user ?? DEFAULT_KUBE_USER).trim(),
    groups: (groups ?? DEFAULT_KUBE_GROUPS).split(',').map((g) => g.trim()).filter(Boolean),
  };
  if (!subject.user && subject.groups.length === 0) throw new UsageError("--kube-user and --kube-groups are both empty: name podroute's Kubernetes user or its groups");
  return subject;
}

