import { parseCidr } from '../cidr/cidr.ts';
import { clusterCidrsProblem } from '../config.ts';
import { parseSubnets } from '../dataplane/prefixes/describe-subnets.ts';
import {
  DEFAULT_POD_SHARE,
  DELEGATED_PREFIX,
  type NodeSyncMode,
  PODROUTE_RESERVATION_DESCRIPTION,
  RESERVATION_TYPE,
  type ReservationPlan,
  type ReservationType,
  planReservations,
  podShareProblem,
} from '../dataplane/prefixes/reservation-plan.ts';
import { type CliIo, UsageError, clusterCidrsFlag, commandFlags, requireFlag } from './main.ts';
import { OUTPUT_OPTIONS, formatOutput, outputFormat, table } from './output.ts';
import { readJson } from './plan-command.ts';

export const RESERVATIONS_HELP = `Usage: podroute reservations --cluster-cidrs <cidr>[,<cidr>] --subnets <file> [flags]

Prints the subnet CIDR reservations that prefixes mode (MODE=prefixes) needs, as
'aws ec2 create-subnet-cidr-reservation' commands: one per subnet and cluster IP family. Changes
nothing; review the commands, then run them (e.g. pipe to sh) before deploying.

Each reservation is the largest CIDR that
  - lies inside the subnet and the cluster CIDR of its family,
  - holds at most --pod-share of the subnet's addresses (the rest stays for instances and
    network interfaces; a reservation is a power of two, so it may be less than the share),
  - holds at least one /${DELEGATED_PREFIX[4]} (IPv4) or /${DELEGATED_PREFIX[6]} (IPv6) prefix, the sizes EC2 delegates,
  - holds none of the five addresses AWS keeps in each subnet (the first four and the last);
of those, the highest in the subnet.

Flags:
  --cluster-cidrs <list>   the cluster's pod CIDRs, comma-separated (one IPv4 and/or one IPv6)
  --subnets <file>         the output of 'aws ec2 describe-subnets --output json' for the cluster's
                           subnets ('-' = stdin), e.g. with
                           --filters Name=vpc-id,Values=<vpc> or Name=subnet-id,Values=<a>,<b>
  --pod-share <0..1>       the most of each subnet's addresses to reserve for pods (default ${DEFAULT_POD_SHARE})
  --node-sync-mode <mode>  the NODE_SYNC_MODE podroute runs with, which decides the reservation type:
                           SyncFromCluster (default): explicit (podroute names each prefix; EC2's own
                           automatic picks, the VPC CNI's among them, stay out of the range);
                           SyncFromCloud: prefix (EC2 picks each node's prefix from the reservation)
  --description <text>     the reservations' description (default "${PODROUTE_RESERVATION_DESCRIPTION}"): podroute takes
                           as its own only the reservations whose description is its
                           PREFIX_RESERVATION_DESCRIPTION setting (default "${PODROUTE_RESERVATION_DESCRIPTION}"),
                           so give the same text to both
  -o, --output <format>    sh (default): the commands, with a comment line before each;
                           json, yaml: {"reservations": [...], "warnings": [...], "reservationType",
                           "description"}; table: one row per reservation
                           (--format: the same flag's 0.2 name)
  -h, --help               this help

Exit status: 0 with the commands; 2 with one line on stderr when a subnet cannot hold a
reservation (it names the subnet and why) or the input is bad. Warnings (e.g. addresses already
in use inside a reservation, which EC2 does not take back) go to stderr and do not change the status.
`;

export async function reservationsCommand(args: string[], io: CliIo): Promise<number> {
  const flags = commandFlags(args, {
    'cluster-cidrs': { type: 'string' },
    subnets: { type: 'string' },
    'pod-share': { type: 'string' },
    'node-sync-mode': { type: 'string', default: 'SyncFromCluster' },
    description: { type: 'string' },
    ...OUTPUT_OPTIONS,
  }, io, RESERVATIONS_HELP);
  if (!flags) return 0;
  const clusterCidrText = clusterCidrsFlag(flags, 'reservations');
  // The functions' own check (lib/config.ts): a CIDR refused there is refused here.
  const cidrProblem = clusterCidrsProblem(clusterCidrText);
  if (cidrProblem !== null) throw new UsageError(`--cluster-cidrs: ${cidrProblem}`);
  const format = outputFormat(flags, ['sh', 'json', 'yaml', 'table'], 'sh');
  const podShare = podShareFlag(flags.string('pod-share'));
  const nodeSyncMode = flags.string('node-sync-mode');
  if (nodeSyncMode !== 'SyncFromCluster' && nodeSyncMode !== 'SyncFromCloud') {
    throw new UsageError(`--node-sync-mode must be SyncFromCluster or SyncFromCloud, not ${JSON.stringify(nodeSyncMode)}`);
  }
  const reservationType = RESERVATION_TYPE[nodeSyncMode satisfies NodeSyncMode];
  const description = flags.string('description') ?? PODROUTE_RESERVATION_DESCRIPTION;
  if (description.trim() === '') throw new UsageError('--description must not be empty');
  const subnets = parseSubnets(await readJson(io, requireFlag(flags.string('subnets'), 'subnets', 'reservations'), '--subnets'));

  const plan = planReservations({ subnets, clusterCidrs: clusterCidrText.map((text) => parseCidr(text)), podShare });
  for (const warning of plan.warnings) io.stderr(`podroute: warning: ${warning}\n`);
  const render = format === 'table' ? () => formatTable(plan, reservationType) : () => formatCommands(plan, reservationType, description);
  io.stdout(formatOutput(format, { ...plan, reservationType, description }, render));
  return 0;
}

/** The plan as a shell script: a comment naming what each command reserves, then the command. */
function formatCommands(plan: ReservationPlan, reservationType: ReservationType, description: string): string {
  const lines: string[] = [];
  for (const r of plan.reservations) {
    const where = r.availabilityZone === null ? '' : ` (${r.availabilityZone})`;
    lines.push(`# ${r.subnetId}${where} ${r.subnetCidr}: ${r.cidr} for pods (${r.share * 100}% of the subnet, ${r.prefixes} /${DELEGATED_PREFIX[r.family]} prefixes)`);
    lines.push(
      [
        'aws ec2 create-subnet-cidr-reservation',
        `--subnet-id ${shellQuote(r.subnetId)}`,
        `--cidr ${shellQuote(r.cidr)}`,
        `--reservation-type ${reservationType}`,
        `--description ${shellQuote(description)}`,
      ].join(' '),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The plan as rows for people: where each reservation goes, what it holds. */
function formatTable(plan: ReservationPlan, reservationType: ReservationType): string {
  const rows = plan.reservations.map((r) => [
    r.subnetId,
    r.availabilityZone ?? '',
    r.subnetCidr,
    r.cidr,
    reservationType,
    `${r.share * 100}%`,
    `${r.prefixes} /${DELEGATED_PREFIX[r.family]}`,
  ]);
  return `${table(['SUBNET', 'ZONE', 'SUBNET CIDR', 'RESERVATION', 'TYPE', 'SHARE', 'PREFIXES'], rows).join('\n')}\n`;
}

/**
 * A word the shell reads back as `text`: bare when it is plainly safe, else single-quoted.
 * Exported for its table-driven test (test/cli/reservations-cli.test.ts).
 */
export function shellQuote(text: string): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function podShareFlag(text: string | undefined): number {
  if (text === undefined) return DEFAULT_POD_SHARE;
  const value = Number(text);
  if (text.trim() === '' || podShareProblem(value) !== null) throw new UsageError(`--pod-share must be a number above 0 and below 1, not ${JSON.stringify(text)}`);
  return value;
}
