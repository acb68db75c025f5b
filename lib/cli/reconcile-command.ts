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
import { UsageError, commandFlags, stringOptions } from './main.ts';
import { configFromFlags, type ConfigFlag } from './config-flags.ts';
import type { CliIo, Command } from './main.ts';
import { sdkDefaultRegion } from '../aws/sdk-region.ts';
import { OUTPUT_OPTIONS, formatOutput, outputFormat } from './output.ts';
import { planExitCode } from './plan-exit.ts';
import { cliRegion } from './region.ts';
import { RECONCILE_HELP } from './command-help.ts';

export { RECONCILE_HELP } from './command-help.ts';


const CONFIG_FLAGS: readonly ConfigFlag[] = ['cluster-name', 'cluster-cidrs', 'route-table-ids', 'cidr-table-name', 'queue-url', 'mode', 'node-selector'];

export const reconcileCommand: Command = {
  async run(args: string[], io: CliIo): Promise<number> {
    const flags = commandFlags(args, {
      'dry-run': { type: 'boolean' },
      ...stringOptions([...CONFIG_FLAGS, 'kubeconfig', 'context', 'region']),
      ...OUTPUT_OPTIONS,
      'detailed-exitcode': { type: 'boolean' },
    }, io, RECONCILE_HELP);
    if (!flags) return 0;
    if (!flags.flag('dry-run')) throw new UsageError('reconcile runs only with --dry-run from a workstation; the deployed functions apply the plan');
    const format = outputFormat(flags, ['json', 'yaml', 'table'], 'json');
    const config = loadConfig({ ...io.env, ...configFromFlags(flags, io.env, CONFIG_FLAGS) });
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

