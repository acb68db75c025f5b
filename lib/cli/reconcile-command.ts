/**
 * `podroute reconcile --dry-run`: the reconcile use case from a laptop, against a real cluster
 * (kubeconfig) and AWS account (the default credential chain), printing the plan it would carry out.
 * Nothing is written: no route, no node, no lease, no message. Applying is the Lambda functions' job.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { KubeConfig } from '@kubernetes/client-node';
import { routesPlane } from '../dataplane/routes/routes-plane.ts';
import { loadConfig } from '../config.ts';
import { InvalidInputError } from '../errors.ts';
import { createCidrSet } from '../ipam/index.ts';
import { tryParseCidr } from '../cidr/cidr.ts';
import { silentLogger } from '../log.ts';
import { MemoryWorkQueue } from '../messages/work-queue.ts';
import { reconcile } from '../usecases/reconcile.ts';
import { Ec2RouteTables } from '../aws/ec2-route-tables.ts';
import { KubeNodes } from '../kube/kube-nodes.ts';
import { UsageError, parseFlags } from './main.ts';
import type { CliIo, Command } from './main.ts';
import { sdkDefaultRegion } from '../aws/sdk-region.ts';
import { OUTPUT_OPTIONS, formatOutput, outputFormat } from './output.ts';
import { DETAILED_EXITCODE_HELP, planExitCode } from './plan-exit.ts';
import { formatPlanTable } from './plan-table.ts';
import { REGION_HELP, cliRegion } from './region.ts';

export const RECONCILE_HELP = `Usage: podroute reconcile --dry-run --cluster-name <name> --cluster-cidrs <cidr>[,<cidr>] [flags]

Runs the reconcile use case once against a live cluster and AWS account and prints the plan (the
same JSON as 'podroute plan'). Reads the cluster's tagged route tables with the AWS default
credential chain and the nodes with your kubeconfig. Changes nothing.

Flags:
  --dry-run                 required: print the plan, change nothing
  --cluster-name <name>     route tables tagged kubernetes.io/cluster/<name> are the cluster's
  --cluster-cidrs <list>    the cluster's pod CIDRs, comma-separated
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
      CLUSTER_NAME: flags.string('cluster-name') ?? io.env.CLUSTER_NAME,
      CLUSTER_CIDRS: flags.string('cluster-cidrs') ?? io.env.CLUSTER_CIDRS,
      ROUTE_TABLE_IDS: flags.string('route-table-ids') ?? io.env.ROUTE_TABLE_IDS,
      // The deployed masks, so that pod CIDRs of another size are reported (plan warnings).
      NODE_MASK_SIZE_IPV4: io.env.NODE_MASK_SIZE_IPV4,
      NODE_MASK_SIZE_IPV6: io.env.NODE_MASK_SIZE_IPV6,
      NODE_SELECTOR: flags.string('node-selector') ?? io.env.NODE_SELECTOR,
    });
    const kubeConfig = loadKubeConfig(flags.string('kubeconfig'), flags.string('context'));
    const region = await cliRegion(flags.string('region'), io.env, sdkDefaultRegion);
    const cidrSets = await Promise.all(
      config.clusterCidrs.map((clusterCidr) =>
        createCidrSet({ clusterCidr, nodeMaskSize: config.nodeMaskSize[tryParseCidr(clusterCidr)?.family ?? 4] }),
      ),
    );
    const routeTables = new Ec2RouteTables(new EC2Client({ region }), { clusterName: config.clusterName, routeTableIds: config.routeTableIds });
    const report = await reconcile(
      {
        config,
        // The dry run plans routes mode only (MODE is not read here).
        plane: routesPlane({ config, routeTables, cidrSets, interfaces: null }),
        routeTables,
        nodes: new KubeNodes(kubeConfig),
        queue: new MemoryWorkQueue(),
        cidrSets,
        log: silentLogger,
        now: Date.now,
      },
      { dryRun: true },
    );
    io.stdout(formatOutput(format, report.plan, () => formatPlanTable(report.plan)));
    return planExitCode(report.plan, flags.flag('detailed-exitcode'));
  },
};

/** The kubeconfig at `path` (else the default one), on `context` when given. */
function loadKubeConfig(path: string | undefined, context: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    if (path) kubeConfig.loadFromFile(path);
    else kubeConfig.loadFromDefault();
    if (context) kubeConfig.setCurrentContext(context);
  } catch (error) {
    throw new InvalidInputError(`cannot load the kubeconfig: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (!kubeConfig.getCurrentCluster()) throw new InvalidInputError('the kubeconfig has no current cluster (pass --kubeconfig or --context)');
  return kubeConfig;
}
