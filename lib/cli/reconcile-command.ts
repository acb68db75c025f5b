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
import { planExitCode } from './plan-exit.ts';
import { cliRegion } from './region.ts';
import { RECONCILE_HELP } from './command-help.ts';

export { RECONCILE_HELP } from './command-help.ts';


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

