/**
 * The podroute command line. `main` takes argv and an io port and returns the exit code, so tests
 * can run it in process as well as through the real binary (lib/cli/process.ts binds it to the
 * process). Each command is a file of its own in lib/cli/.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { InvalidInputError } from '../errors.ts';
import { planCommand, PLAN_HELP } from './plan-command.ts';
import { reservationsCommand, RESERVATIONS_HELP } from './reservations-command.ts';
import { DOCTOR_HELP, RECONCILE_HELP } from './command-help.ts';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): Promise<string>;
  env: Record<string, string | undefined>;
}

/** A usage problem: exit 2 with one line. */
export class UsageError extends InvalidInputError {
  override name = 'UsageError';
}

/**
 * A command loaded when it runs (one that needs AWS or Kubernetes clients). It prints its own help
 * for `--help`, which is also what `podroute help <command>` runs.
 */
export interface Command {
  run(args: string[], io: CliIo): Promise<number>;
}

/**
 * reconcile and doctor load the AWS SDK and the Kubernetes client when they run, in chunks of their
 * own in the build (infra/scripts/build-cli.ts): `plan`, `reservations` and every command's
 * `--help` (printed here, from ./command-help.ts) start without them, 2.4 s sooner on our 2-core
 * machines.
 */
function lazy(help: string, load: () => Promise<Command>): Command {
  return {
    run: async (args, io) => {
      if (args.includes('--help') || args.includes('-h')) {
        io.stdout(help);
        return 0;
      }
      return (await load()).run(args, io);
    },
  };
}

export const LAZY_COMMANDS: Readonly<Record<string, Command>> = {
  reconcile: lazy(RECONCILE_HELP, async () => (await import('./reconcile-command.ts')).reconcileCommand),
  doctor: lazy(DOCTOR_HELP, async () => (await import('./doctor-command.ts')).doctorCommand),
};

/** The `--detailed-exitcode` flag of plan and reconcile: with it, every error exits 1. */
export const DETAILED_EXITCODE = '--detailed-exitcode';

const MAIN_HELP = `podroute: pod-CIDR allocation and VPC routing for Kubernetes on AWS

Usage: podroute <command> [flags]

Commands:
  plan         show what the route controller would change (reads kubectl and aws CLI JSON)
  reservations print the subnet CIDR reservations prefixes mode needs (reads aws CLI JSON)
  reconcile    run the reconcile use case against a live cluster and AWS account (--dry-run)
  doctor       check, read-only, that an account and cluster are ready for podroute

Output: -o json|yaml|table on each command that prints a result (reservations adds sh). A
command's default format is the same on a terminal and in a pipe (plan, reconcile: json; doctor:
table; reservations: sh).

Exit status: 0 done, 1 an error (doctor: a failed check), 2 bad input. With --detailed-exitcode
(plan, reconcile --dry-run), as 'terraform plan -detailed-exitcode': 0 no changes, 1 any error,
bad input too, 2 changes pending.

AWS: credentials from the AWS SDK's default chain; the region from --region, else $AWS_REGION,
$AWS_DEFAULT_REGION, the profile's region ($AWS_PROFILE), else an error.

Run 'podroute <command> --help' for a command's flags.
`;

export async function main(argv: string[], io: CliIo, commands: Readonly<Record<string, Command>> = LAZY_COMMANDS): Promise<number> {
  const [command, ...rest] = argv;
  const usageExit = rest.includes(DETAILED_EXITCODE) ? 1 : 2;
  try {
    const extra = command === undefined ? undefined : commands[command];
    if (extra) return await extra.run(rest, io);
    switch (command) {
      case 'plan':
        return await planCommand(rest, io);
      case 'reservations':
        return await reservationsCommand(rest, io);
      case undefined:
      case '-h':
      case '--help':
      case 'help': {
        const asked = rest[0] === undefined ? undefined : commands[rest[0]];
        if (asked) return await asked.run(['--help'], io);
        io.stdout(command === undefined ? MAIN_HELP : helpFor(rest[0]));
        return command === undefined ? 2 : 0;
      }
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; try 'podroute --help'`);
    }
  } catch (error) {
    if (error instanceof InvalidInputError) {
      io.stderr(`podroute: ${oneLine(error.message)}\n`);
      return usageExit;
    }
    io.stderr(`podroute: internal error: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  }
}

function helpFor(command: string | undefined): string {
  if (command === 'plan') return PLAN_HELP;
  if (command === 'reservations') return RESERVATIONS_HELP;
  return MAIN_HELP;
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

/** parseArgs with our errors: unknown flags and missing values are usage errors. */
export function parseFlags(args: string[], options: NonNullable<ParseArgsConfig['options']>): Flags {
  try {
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return new Flags(values as Record<string, string | boolean | undefined>);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), { cause: error });
  }
}

/** parseArgs options for flags that each take a string. */
export function stringOptions(names: readonly string[]): Record<string, { type: 'string' }> {
  return Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
}

/** A command's flags with -h/--help added; undefined once --help has printed the command's help. */
export function commandFlags(args: string[], options: NonNullable<ParseArgsConfig['options']>, io: CliIo, help: string): Flags | undefined {
  const flags = parseFlags(args, { ...options, help: { type: 'boolean', short: 'h' } });
  if (!flags.flag('help')) return flags;
  io.stdout(help);
  return undefined;
}

export class Flags {
  constructor(private readonly values: Record<string, string | boolean | undefined>) {}
  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }
  flag(name: string): boolean {
    return this.values[name] === true;
  }
}

/** A required flag's value, or a usage error that names the flag and points at the command's help. */
export function requireFlag(value: string | undefined, name: string, command: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required (see 'podroute ${command} --help')`);
  return value;
}

/** The required `--cluster-cidrs` flag as its comma-separated parts, trimmed, empty ones left out. */
export function clusterCidrsFlag(flags: Flags, command: string): string[] {
  return requireFlag(flags.string('cluster-cidrs'), 'cluster-cidrs', command)
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
