/**
 * `podroute reconcile --dry-run`: the deployed reconcile run from a laptop (./dry-run.ts), against
 * a real cluster (kubeconfig) and AWS account (the default credential chain), the lease table and
 * the queue, printing what it would send and withhold. Nothing is written: no route, no node, no
 * lease, no message. Applying is the Lambda functions' job.
 */
import { loadConfig } from '../config.ts';
import { loadKubeConfig } from '../kube/kubeconfig-file.ts';
import { reconcileClients } from '../aws/cli-clients.ts';
import { KubeNodes } from '../kube/kube-nodes.ts';
import { selectorKeys } from '../nodes/label-selector.ts';
import { dryRunReconcile } from './dry-run.ts';
import { dryRunDocument, dryRunTable } from './dry-run-output.ts';
import { UsageError, parseFlags } from './main.ts';
import type { CliIo, Command } from './main.ts';
import { sdkDefaultRegion } from '../aws/sdk-region.ts';
import { OUTPUT_OPTIONS, formatOutput, outputFormat } from './output.ts';
import { DETAILED_EXITCODE_HELP, planExitCode } from './plan-exit.ts';
import { REGION_HELP, cliRegion } from './region.ts';

export const RECONCILE_HELP = `Usage: podroute reconcile --dry-run --cluster-name <name> --cluster-cidrs <cidr>[,<cidr>] --cidr-table-name <name> --queue-url <url> [flags]

Runs the deployed reconcile function's code once against a live cluster and AWS account, up to its
first write, and prints the plan (the fields of 'podroute plan') with what the function would send
(send), withhold and why (withheld), node sync's actions (nodeSync) and the pod CIDRs it would adopt
(occupy). Reads the cloud side of the mode, the lease table, the guard's window and the queue's
backlog with the AWS default credential chain, and the nodes with your kubeconfig. Other settings
come from the environment, as the function's do. Changes nothing: every write is refused.

Flags:
  --dry-run                 required: print the plan, change nothing
  --cluster-name <name>     route tables tagged kubernetes.io/cluster/<name> are the cluster's
  --cluster-cidrs <list>    the cluster's pod CIDRs, comma-separated
  --cidr-table-name <name>  the lease table (default: $CIDR_TABLE_NAME)
  --queue-url <url>         the route worker's queue (default: $QUEUE_URL)
  --mode <mode>             routes or prefixes (default: $MODE, else routes)
  --route-table-ids <list>  use these tables instead of the tag
  --node-selector <sel>     only nodes whose labels match are podroute's (default: $NODE_SELECTOR,
                            else every node); kubectl -l syntax
  --kubeconfig <file>       default: $KUBECONFIG or ~/.kube/config
  --context <name>          kubeconfig context (default: its current context)
  --region <region>         default: ${REGION_HELP}
  -o, --output <format>     json (default), yaml or table; --format is the same flag's 0.2 name
  --detailed-exitcode       exit 2 when the plan changes anything (see below)
  -h, --help                this help

${DETAILED_EXITCODE_HELP}`;

export const reconcileCommand: Command = {
  async run(args: string[], io: CliIo): Promise<number> {
    const flags = parseFlags(args, {
      'dry-run': { type: 'boolean' },
      'cluster-name': { type: 'string' },
      'cluster-cidrs': { type: 'string' },
      'route-table-ids': { type: 'string' },
      'cidr-table-name': { type: 'string' },
      'queue-url': { type: 'string' },
      mode: { type: 'string' },
      'node-selector': { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      region: { type: 'string' },
      ...OUTPUT_OPTIONS,
      'detailed-exitcode': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (flags.flag('help')) {
      io.stdout(RECONCILE_HELP);
      return 0;
    }
    if (!flags.flag('dry-run')) throw new UsageError('reconcile runs only with --dry-run from a workstation; the deployed functions apply the plan');
    const format = outputFormat(flags, ['json', 'yaml', 'table'], 'json');
    const config = loadConfig({
      ...io.env,
      CLUSTER_NAME: flags.string('cluster-name') ?? io.env.CLUSTER_NAME,
      CLUSTER_CIDRS: flags.string('cluster-cidrs') ?? io.env.CLUSTER_CIDRS,
      ROUTE_TABLE_IDS: flags.string('route-table-ids') ?? io.env.ROUTE_TABLE_IDS,
      CIDR_TABLE_NAME: flags.string('cidr-table-name') ?? io.env.CIDR_TABLE_NAME,
      QUEUE_URL: flags.string('queue-url') ?? io.env.QUEUE_URL,
      MODE: flags.string('mode') ?? io.env.MODE,
      NODE_SELECTOR: flags.string('node-selector') ?? io.env.NODE_SELECTOR,
    });
    // The function's own lease table and queue: their reads are what it decides on.
    if (!config.cidrTableName) throw new UsageError('reconcile --dry-run reads the lease table: pass --cidr-table-name or set CIDR_TABLE_NAME');
    if (!config.queueUrl) throw new UsageError("reconcile --dry-run reads the queue's backlog: pass --queue-url or set QUEUE_URL");
    const kubeConfig = loadKubeConfig(flags.string('kubeconfig'), flags.string('context'));
    const region = await cliRegion(flags.string('region'), io.env, sdkDefaultRegion);
    const report = await dryRunReconcile(config, reconcileClients(region), new KubeNodes(kubeConfig, { keepLabels: selectorKeys(config.nodeSelector) }));
    io.stdout(formatOutput(format, dryRunDocument(report), () => dryRunTable(report)));
    return planExitCode(report.plan, flags.flag('detailed-exitcode'));
  },
};

