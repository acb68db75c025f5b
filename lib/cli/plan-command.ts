import { InvalidInputError, errorText } from '../errors.ts';
import { parseNodeList } from '../nodes/node.ts';
import { clusterCidrsProblem, numberProblem } from '../config.ts';
import type { NumericVariable } from '../config.ts';
import { parseLabelSelector } from '../nodes/label-selector.ts';
import { strayPodCidrs, strayPodCidrsMessage } from '../nodes/pod-cidr-scope.ts';
import { clusterTagKey, parseRouteTables, planRoutes } from '../routes/index.ts';
import { isClusterTable } from '../routes/route-tables.ts';
import type { RoutePlan } from '../routes/index.ts';
import { type CliIo, UsageError, clusterCidrsFlag, commandFlags, requireFlag, stringOptions } from './main.ts';
import { OUTPUT_OPTIONS, formatOutput, outputFormat } from './output.ts';
import { DETAILED_EXITCODE_HELP, planExitCode } from './plan-exit.ts';
import { formatPlanTable } from './plan-table.ts';

export const PLAN_HELP = `Usage: podroute plan --cluster-cidrs <cidr>[,<cidr>] --nodes <file> --route-tables <file> [flags]

Plans the route controller's work without changing anything: which VPC routes to create, replace
and delete, and which nodes' NetworkUnavailable condition to write. Prints one JSON object (-o).
With no lease table to ask, of nodes whose pod CIDRs overlap (or that name one instance) the one
registered first (creationTimestamp, then name) owns them; the others are listed with "conflict"
and get no route.

Flags:
  --cluster-cidrs <list>      the cluster's pod CIDRs, comma-separated (one IPv4 and/or one IPv6)
  --nodes <file>              the output of 'kubectl get nodes -o json' (a List or NodeList; '-' = stdin)
  --route-tables <file>       the output of 'aws ec2 describe-route-tables --output json'
  --cluster-name <name>       only tables tagged kubernetes.io/cluster/<name> are the cluster's
                              (default: every table in the file)
  --node-selector <selector>  only nodes whose labels match are podroute's (NODE_SELECTOR; kubectl
                              -l syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); others are
                              listed as "unmanaged" (default: every node)
  --max-delete-share <0..1>   mass-deletion guard: more no-owner deletions than this share of the
                              cluster's live routes marks the plan unsafe (default 0.5)
  --min-deletes-for-guard <n> the share rule trips only from this many deletions on (default 5)
  -o, --output <format>       json (default, one line, for tools), yaml, or table (a readable
                              summary); --format is the same flag's 0.2 name
  --detailed-exitcode         exit 2 when the plan changes anything (see below)
  -h, --help                  this help

Exit status: 0 with a plan; 2 with one line on stderr for bad input; 141 when stdout is closed
early (e.g. '| head -1'), as for a command killed by SIGPIPE.

${DETAILED_EXITCODE_HELP}`;

export async function planCommand(args: string[], io: CliIo): Promise<number> {
  const flags = commandFlags(args, {
    ...stringOptions(['cluster-cidrs', 'nodes', 'route-tables', 'cluster-name', 'node-selector', 'max-delete-share', 'min-deletes-for-guard']),
    ...OUTPUT_OPTIONS,
    'detailed-exitcode': { type: 'boolean' },
  }, io, PLAN_HELP);
  if (!flags) return 0;
  const clusterCidrs = clusterCidrsFlag(flags, 'plan');
  if (clusterCidrs.length === 0) throw new UsageError('--cluster-cidrs needs at least one CIDR');
  // The functions' own check (lib/config.ts): a CIDR refused there is refused here.
  const cidrProblem = clusterCidrsProblem(clusterCidrs);
  if (cidrProblem !== null) throw new UsageError(`--cluster-cidrs: ${cidrProblem}`);
  const format = outputFormat(flags, ['json', 'yaml', 'table'], 'json');
  const selectorText = flags.string('node-selector');
  let nodeSelector;
  try {
    nodeSelector = selectorText === undefined ? undefined : parseLabelSelector(selectorText);
  } catch (error) {
    throw new UsageError(`--node-selector: ${errorText(error)}`, { cause: error });
  }
  const nodesPath = requireFlag(flags.string('nodes'), 'nodes', 'plan');
  const tablesPath = requireFlag(flags.string('route-tables'), 'route-tables', 'plan');
  const nodes = parseNodeList(await readJson(io, nodesPath, '--nodes'));
  const routeTables = parseRouteTables(await readJson(io, tablesPath, '--route-tables'));
  const clusterName = flags.string('cluster-name');
  // Contract 1: no cluster table is bad input, as upstream's AWS provider refuses to run without one.
  if (!routeTables.some((table) => clusterName === undefined || isClusterTable(table, clusterName))) {
    throw new InvalidInputError(
      clusterName === undefined
        ? `--route-tables: no route table in ${JSON.stringify(tablesPath)}; nothing can be planned`
        : `--route-tables: no route table carries the tag ${clusterTagKey(clusterName)}; check --cluster-name`,
    );
  }
  // Contract 1, bad input: a --cluster-cidrs that holds no node's pod CIDR (a typo) would plan
  // every node unavailable. The functions' own rule (reconcile refuses to run on it).
  const stray = strayPodCidrs(nodes, clusterCidrs, nodeSelector);
  if (stray !== null) throw new InvalidInputError(strayPodCidrsMessage(stray, clusterCidrs, '--cluster-cidrs'));

  const plan: RoutePlan = planRoutes({
    nodes,
    routeTables,
    clusterCidrs,
    ...(flags.string('cluster-name') === undefined ? {} : { clusterName: flags.string('cluster-name') }),
    ...(nodeSelector === undefined ? {} : { nodeSelector }),
    ...optionalNumber(flags.string('max-delete-share'), 'max-delete-share', 'maxDeleteShare', 'MAX_DELETE_SHARE'),
    ...optionalNumber(flags.string('min-deletes-for-guard'), 'min-deletes-for-guard', 'minDeletesForGuard', 'MIN_DELETES_FOR_GUARD'),
  });
  io.stdout(formatOutput(format, plan, () => formatPlanTable(plan)));
  return planExitCode(plan, flags.flag('detailed-exitcode'));
}

function optionalNumber<K extends string>(text: string | undefined, flag: string, key: K, variable: NumericVariable): Partial<Record<K, number>> {
  if (text === undefined) return {};
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--${flag} must be a number, not ${JSON.stringify(text)}`);
  // The bounds of the variable of the same meaning (lib/config.ts), in the flag's words.
  const problem = numberProblem(variable, value);
  if (problem !== null) throw new UsageError(`--${flag}${problem.slice(variable.length)}`);
  return { [key]: value } as Partial<Record<K, number>>;
}

/** Reads and parses a JSON input file ('-' = stdin through io.readFile); bad input is an InvalidInputError naming the flag. */
export async function readJson(io: CliIo, path: string, flag: string): Promise<unknown> {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : String(code ?? error);
    throw new InvalidInputError(`${flag}: cannot read ${JSON.stringify(path)}: ${why}`, { cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InvalidInputError(`${flag}: ${JSON.stringify(path)} is not JSON (${errorText(error)})`, { cause: error });
  }
}
