/**
 * `npm start`: the whole of podroute on this machine. The three real handlers run against local
 * stand-ins (DynamoDB, SQS, EC2 and Kubernetes API emulators; see infra/local/sandbox/); a
 * simulated cluster joins in waves through the admission webhook, some nodes leave, the schedule
 * ticks, the worker drains the queue, and the terminal shows the nodes becoming ready.
 *
 * Exit status: 0 when the cluster converged, 1 when it did not, 2 for bad flags.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realpathSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { Sandbox, SandboxReport, SandboxStatus } from './sandbox/index.ts';
import { MAX_SUBNETS, instanceCapacity } from './sandbox/world.ts';
import { HOSTILE_SCENARIOS, isEventScenario, isHostileScenario } from './sandbox/hostile.ts';
import type { HostileScenario } from './sandbox/hostile.ts';

const HELP = `Usage: npm start -- [options]

Runs podroute locally: the reconcile, route-worker and node-webhook handlers against in-process
stand-ins for DynamoDB, SQS, EC2 and the Kubernetes API (127.0.0.1 only, no AWS account needed).
Nodes join through the Kubernetes admission webhook in waves, some leave, the schedule ticks and
the worker drains the queue until the cluster converges.

Options:
  --nodes N            nodes that join (default 50)
  --leave K            of those, nodes that leave again after joining (default 5)
  --dual-stack         IPv4 and IPv6 pod CIDRs
  --route-tables K     route tables tagged for the cluster (default 2)
  --mode MODE          routes (VPC routes, default) or prefixes (ENI prefix delegation, /28 and /80)
  --subnets K          prefixes mode: K subnets in K zones, 1..16 (default 3); each keeps the upper half
                       of its IPv4 block (and of its IPv6 /64 with --dual-stack) in a \`prefix\` subnet
                       CIDR reservation, nodes are spread over the subnets, instance addresses land
                       anywhere else in them
  --faults SHARE       share of EC2 calls failing with a retryable error, 0 <= SHARE < 1 (default 0)
  --secondary-enis N   secondary network interfaces on every instance, 0..15 (default 0); the worker
                       still routes to the primary one and turns its source/dest check off
  --external-ccm       nodes join as under an external cloud controller manager (kubeadm, kOps): the
                       kubelet registers without a providerID, a stand-in CCM sets it a moment later,
                       and podroute's UPDATE webhook (node-provider-id) acts on that update
  --deny-deletes SHARE share of the leaving nodes' deletes that a later validating webhook refuses
                       after podroute admitted them, 0 <= SHARE <= 1 (default 0); those nodes stay
  --hostile LIST       once the cluster has converged, play these hostile scenarios (comma-separated,
                       or \`all\`), then converge again:
                         same-cidr          a node registers with another node's exact pod CIDR
                         sub-range          nodes register with a /25 and a /32 inside other nodes' blocks
                         cluster-cidr       a node registers with the whole cluster CIDR
                         other-instance     a node names another node's instance in its providerID
                         short-listings     node listings silently leave out a quarter of the nodes,
                                            every other time, for a few reconcile periods
                         forged-admissions  admission requests sent with the webhook token for nodes
                                            that are never stored
                         untagged-tables    the cluster tag is removed from every route table for a
                                            few reconcile periods, then restored
                         instance-terminated  a node's instance is terminated (EC2's events go to the
                                            cloud-events function), then its Node is deleted
                         tampered-routes    an IAM user deletes one node's route and re-points another's
                                            (CloudTrail's events go to the cloud-events function)
                         forged-events      a termination event for a running instance, and a
                                            termination delivered again late, put on the event bus
                       The event scenarios start the sandbox with its EventBridge bus (cloud-events).
                       The hostile kubelets only set what a kubelet may set on its own Node at CREATE
                       (spec.podCIDR(s), spec.providerID). Converged then also means: 0 routes to a
                       node that does not hold their lease, no honest node ever marked unavailable
                       after it was ready or its route taken away; hostile nodes need not be ready.
  --tick-ms MS         reconcile schedule period; the one minute of production, fast-forwarded (default 2000)
  --report FILE        write the final numbers as JSON to FILE
  --timeout-s S        give up after S seconds (default 300)
  --log-file FILE      where the handlers' JSON logs go (default: a file in the temp directory)
  -h, --help           show this help

Converged means: every live node has NetworkUnavailable=False, every pod CIDR is routed to its
node in every cluster table (or delegated to its ENI in prefixes mode), no wrong routes, no
duplicate CIDRs, no leaked CIDR leases after a final reconcile, an empty dead-letter queue, and (prefixes
mode) no node whose pod CIDR lies outside the subnet of its primary interface (podCidrsOutsideSubnet in
the report, computed from the EC2 emulator's state; null in routes mode).
Time scaling: the schedule runs 60000/--tick-ms times faster than production's one minute (30x by
default), and every other clock podroute depends on is scaled alike, so what the sandbox shows is
what production would do:
  queue visibility timeout     6 s      (production 180 s)
  worker function timeout      1 s      (production 30 s; a timed-out batch fails as on Lambda)
  worker retry backoff         2..60 s / scale, via ChangeMessageVisibility (whole seconds)
  EC2 SDK retry backoff        the SDK's full-jitter backoff / scale (production: SDK defaults)
  EC2 SDK adaptive limiter     its floor and its recovery curve on the scaled clock
  EC2 throttling refill rates  x scale (bursts unchanged)
  message delays               / scale, rounded up (the webhook's node-left check: 10 s -> 1 s)
A retryable failure on a message's last receive is handed back to reconcile, never dead-lettered;
the dead-letter queue only gets messages whose invocations crash or time out. The sandbox sets
LEASE_GRACE_SECONDS=1 (600 in production) so that final reconcile may reclaim leases at once, and
raises the EC2 route quota (default 50 a table) to fit the cluster. In routes mode a new instance
answers NotFound for its first 60 s (scaled alike), as EC2's eventual consistency allows.

Exit status: 0 converged, 1 not converged, 2 bad flags.`;

interface Flags {
  nodes: number;
  leave: number;
  dualStack: boolean;
  routeTables: number;
  mode: 'routes' | 'prefixes';
  /** Prefixes mode only. */
  subnets: number | undefined;
  faults: number;
  secondaryEnis: number;
  denyDeletes: number;
  externalCcm: boolean;
  hostile: HostileScenario[];
  tickMs: number;
  report: string | undefined;
  timeoutS: number;
  logFile: string;
}

class FlagError extends Error {}

function parseFlags(argv: string[]): Flags | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        nodes: { type: 'string' },
        leave: { type: 'string' },
        'dual-stack': { type: 'boolean' },
        'route-tables': { type: 'string' },
        mode: { type: 'string' },
        subnets: { type: 'string' },
        faults: { type: 'string' },
        'secondary-enis': { type: 'string' },
        'deny-deletes': { type: 'string' },
        'external-ccm': { type: 'boolean' },
        hostile: { type: 'string' },
        'tick-ms': { type: 'string' },
        report: { type: 'string' },
        'timeout-s': { type: 'string' },
        'log-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new FlagError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  if (values.help) return 'help';
  const number = (name: string, raw: string | undefined, fallback: number, check: (n: number) => boolean, want: string): number => {
    if (raw === undefined) return fallback;
    const value = raw.trim() === '' ? Number.NaN : Number(raw);
    if (!Number.isFinite(value) || !check(value)) throw new FlagError(`--${name} ${JSON.stringify(raw)}: want ${want}`);
    return value;
  };
  const whole = (min: number, max = Number.MAX_SAFE_INTEGER) => (n: number) => Number.isInteger(n) && n >= min && n <= max;
  const nodes = number('nodes', values.nodes, 50, whole(1, 10_000), 'a whole number from 1 to 10000');
  const leave = number('leave', values.leave, Math.min(5, nodes - 1), whole(0, nodes), `a whole number from 0 to --nodes (${nodes})`);
  const secondaryEnis = number('secondary-enis', values['secondary-enis'], 0, whole(0, 15), 'a whole number from 0 to 15');
  const mode = values.mode ?? 'routes';
  if (mode !== 'routes' && mode !== 'prefixes') throw new FlagError(`--mode ${JSON.stringify(mode)}: want routes or prefixes`);
  if (mode !== 'prefixes' && values.subnets !== undefined) throw new FlagError('--subnets: only with --mode prefixes (routes mode has one node subnet)');
  const subnets = mode === 'prefixes' ? number('subnets', values.subnets, 3, whole(1, MAX_SUBNETS), `a whole number from 1 to ${MAX_SUBNETS}`) : undefined;
  // Every interface takes an instance address of the node subnets (routes mode: one /18, 16,379 usable).
  const capacity = Math.min(16_000, instanceCapacity(mode, subnets));
  if (nodes * (1 + secondaryEnis) > capacity) {
    throw new FlagError(`--nodes ${nodes} with --secondary-enis ${secondaryEnis}: ${nodes * (1 + secondaryEnis)} interfaces do not fit the sandbox subnets (at most ${capacity})`);
  }
  const hostile = hostileFlag(values.hostile);
  if (hostile.length > 0 && nodes - leave < 2) throw new FlagError('--hostile: needs at least 2 nodes that stay (--nodes minus --leave): they are the victims');
  return {
    subnets,
    hostile,
    nodes,
    leave,
    dualStack: values['dual-stack'] ?? false,
    routeTables: number('route-tables', values['route-tables'], 2, whole(1, 20), 'a whole number from 1 to 20'),
    mode,
    faults: number('faults', values.faults, 0, (n) => n >= 0 && n < 1, 'a share, 0 <= SHARE < 1'),
    secondaryEnis,
    denyDeletes: number('deny-deletes', values['deny-deletes'], 0, (n) => n >= 0 && n <= 1, 'a share, 0 <= SHARE <= 1'),
    externalCcm: values['external-ccm'] ?? false,
    tickMs: number('tick-ms', values['tick-ms'], 2000, whole(50, 600_000), 'whole milliseconds from 50 to 600000'),
    report: values.report,
    timeoutS: number('timeout-s', values['timeout-s'], 300, (n) => n > 0 && n <= 86_400, 'seconds, more than 0'),
    logFile: values['log-file'] ?? join(tmpdir(), `podroute-sandbox-${process.pid}.log`),
  };
}

/** `--hostile a,b` or `all`: the scenarios, in the order given, each once. */
function hostileFlag(raw: string | undefined): HostileScenario[] {
  if (raw === undefined) return [];
  const names = raw.trim() === 'all' ? [...HOSTILE_SCENARIOS] : raw.split(',').map((name) => name.trim());
  const out: HostileScenario[] = [];
  for (const name of names) {
    if (!isHostileScenario(name)) throw new FlagError(`--hostile ${JSON.stringify(raw)}: ${JSON.stringify(name)} is no scenario; want some of ${HOSTILE_SCENARIOS.join(', ')} or all`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

// --- terminal output ------------------------------------------------------------------------------

const tty = process.stdout.isTTY === true;

function progressLine(status: SandboxStatus, joined: number, elapsedMs: number): string {
  const q = status.queue;
  return [
    `nodes ready ${status.nodesReady}/${status.nodes} (joined ${joined})`,
    `routes ${status.routesProgrammed}/${status.routesExpected}`,
    `queue ${q.visible + q.delayed}${q.inFlight > 0 ? ` (+${q.inFlight} in flight)` : ''}`,
    `throttled ${status.throttled}`,
    `${(elapsedMs / 1000).toFixed(1)}s`,
  ].join(' | ');
}

function summary(report: SandboxReport, converged: boolean, flags: Flags, elapsedMs: number): string {
  const ms = (value: number | null) => (value === null ? '-' : `${value} ms`);
  const rows: Array<[string, string, boolean?]> = [
    ['result', converged ? 'converged' : 'NOT converged', converged],
    ['mode', `${flags.mode}${flags.dualStack ? ', dual-stack' : ''}${flags.subnets === undefined ? '' : `, ${flags.subnets} subnet(s)`}, ${flags.routeTables} route table(s)`],
    ['live nodes', String(report.nodes)],
    ['nodes ready', `${report.nodesReady}/${report.nodes}${report.hostileNodes > 0 ? ` (${report.hostileNodes} hostile, need not be)` : ''}`, report.honestNodesNotReady === 0],
    ['ready nodes tainted later', String(report.readyNodesTainted), report.readyNodesTainted === 0],
    ['live routes removed', String(report.liveRoutesRemoved), report.liveRoutesRemoved === 0],
    [flags.mode === 'routes' ? 'routes programmed' : 'prefixes delegated', `${report.routesProgrammed}/${report.routesExpected}`, report.routesProgrammed === report.routesExpected],
    ['wrong routes', String(report.wrongRoutes), report.wrongRoutes === 0],
    ['routes to a non-leaseholder', String(report.routesToNonLeaseholder), report.routesToNonLeaseholder === 0],
    ['duplicate CIDRs', String(report.duplicateCidrs), report.duplicateCidrs === 0],
    ['leaked CIDRs', String(report.leakedCidrs), report.leakedCidrs === 0],
    ['DLQ messages', String(report.dlqMessages), report.dlqMessages === 0],
    ...(report.podCidrsOutsideSubnet === null ? [] : [['pod CIDRs outside subnet', String(report.podCidrsOutsideSubnet), report.podCidrsOutsideSubnet === 0] as [string, string, boolean]]),
    ['deletes refused', `${report.deletesRefused} (nodes broken ${report.refusedNodesBroken}, departed leftovers ${report.departedLeftovers})`, report.refusedNodesBroken === 0 && report.departedLeftovers === 0],
    ['EC2 calls', Object.entries(report.ec2Calls).map(([action, n]) => `${action} ${n}`).join(', ') || '-'],
    ['SQS calls', `${Object.entries(report.sqsCalls).map(([action, n]) => `${action} ${n}`).join(', ') || '-'} (${report.sqsEmptyReceives} empty receives)`],
    ['throttled', String(report.throttled)],
    ['converged after', ms(report.convergedMs)],
    ['join to ready p50/p99', `${ms(report.joinToReadyMs.p50)} / ${ms(report.joinToReadyMs.p99)}`],
    ['elapsed', `${(elapsedMs / 1000).toFixed(1)} s`],
    ['handler logs', flags.logFile],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const mark = (ok: boolean | undefined) => (ok === undefined ? ' ' : ok ? '✓' : '✗');
  return rows.map(([name, value, ok]) => `  ${mark(ok)} ${name.padEnd(width)}  ${value}`).join('\n');
}

/** The --report document: exactly these fields, in this order (other tools read them). */
function reportFile(r: SandboxReport): Record<string, unknown> {
  return {
    nodes: r.nodes,
    nodesReady: r.nodesReady,
    routesExpected: r.routesExpected,
    routesProgrammed: r.routesProgrammed,
    duplicateCidrs: r.duplicateCidrs,
    leakedCidrs: r.leakedCidrs,
    wrongRoutes: r.wrongRoutes,
    dlqMessages: r.dlqMessages,
    ec2Calls: r.ec2Calls,
    throttled: r.throttled,
    convergedMs: r.convergedMs,
    joinToReadyMs: { p50: r.joinToReadyMs.p50, p99: r.joinToReadyMs.p99 },
    deletesRefused: r.deletesRefused,
    podCidrsOutsideSubnet: r.podCidrsOutsideSubnet,
    routesToNonLeaseholder: r.routesToNonLeaseholder,
    hostileNodes: r.hostileNodes,
    honestNodesNotReady: r.honestNodesNotReady,
    readyNodesTainted: r.readyNodesTainted,
    liveRoutesRemoved: r.liveRoutesRemoved,
  };
}

// --- the run ----------------------------------------------------------------------------------------

async function run(flags: Flags): Promise<number> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { startSandbox, isConverged, runHostile } = await import('./sandbox/index.ts');
  const started = performance.now();
  const deadline = started + flags.timeoutS * 1000;
  const families = flags.dualStack ? 2 : 1;

  process.stdout.write(
    `podroute sandbox: ${flags.nodes} nodes (${flags.leave} leave), ${flags.mode} mode${flags.dualStack ? ', dual-stack' : ''}${flags.subnets === undefined ? '' : `, ${flags.subnets} subnet(s)`}, ` +
      `${flags.routeTables} route table(s), faults ${flags.faults}, ${flags.secondaryEnis} secondary ENI(s)${flags.denyDeletes > 0 ? `, deny-deletes ${flags.denyDeletes}` : ''}${flags.externalCcm ? ', external CCM' : ''}${flags.hostile.length > 0 ? `, hostile ${flags.hostile.join(',')}` : ''}, tick ${flags.tickMs} ms\n`,
  );
  const sandbox: Sandbox = await startSandbox({
    dualStack: flags.dualStack,
    routeTables: flags.routeTables,
    mode: flags.mode,
    ...(flags.subnets === undefined ? {} : { subnets: flags.subnets }),
    faults: flags.faults,
    secondaryEnis: flags.secondaryEnis,
    denyDeletes: flags.denyDeletes,
    externalCcm: flags.externalCcm,
    tickMs: flags.tickMs,
    cloudEvents: flags.hostile.some(isEventScenario),
    routeLimit: Math.max(50, Math.min(1000, flags.nodes * families + 1)),
    log: { file: flags.logFile },
  });

  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\ninterrupted; stopping the sandbox\n');
    void sandbox.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let joined = 0;
  const scenarioStart = performance.now();
  let lastLine = 0;
  const draw = async (force = false) => {
    const now = performance.now();
    if (!force && !tty && now - lastLine < 2000) return;
    lastLine = now;
    const line = progressLine(await sandbox.status(), joined, now - started);
    if (tty) process.stdout.write(`\r\x1b[2K${line}`);
    else process.stdout.write(`${line}\n`);
  };
  let drawing = false;
  const ticker = setInterval(
    () => {
      if (drawing) return;
      drawing = true;
      draw()
        .catch(() => undefined)
        .finally(() => {
          drawing = false;
        });
    },
    tty ? 200 : 500,
  );

  let converged = false;
  let report: SandboxReport | undefined;
  let failure: string | undefined;
  try {
    // Joins in waves of about a tenth of the cluster, a short pause between waves; the nodes
    // that leave go once every node has joined (each of them joined at least a wave earlier).
    const waveSize = Math.max(1, Math.ceil(flags.nodes / 10));
    const names: string[] = [];
    for (let i = 0; i < flags.nodes; i += waveSize) {
      const wave = Array.from({ length: Math.min(waveSize, flags.nodes - i) }, () => sandbox.joinNode());
      for (const node of await Promise.all(wave)) {
        names.push(node.name);
        joined += 1;
      }
      await sleep(200);
    }
    let lastJoin = performance.now();
    const step = flags.leave > 0 ? flags.nodes / flags.leave : 0;
    const leaving = Array.from({ length: flags.leave }, (_, k) => names[Math.floor(k * step)]).filter((n): n is string => n !== undefined);
    const left = await Promise.all(leaving.map((name) => sandbox.leaveNode(name)));
    const refusedCount = left.filter((outcome) => outcome === 'refused').length;
    if (refusedCount > 0) process.stdout.write(`${tty ? '\n' : ''}leave: ${left.length - refusedCount} deleted, ${refusedCount} refused after admission (--deny-deletes)\n`);

    await sandbox.settle({ timeoutMs: Math.max(1000, deadline - performance.now()) });
    if (flags.hostile.length > 0) {
      process.stdout.write(`${tty ? '\n' : ''}hostile: ${flags.hostile.join(', ')}\n`);
      await runHostile(sandbox, flags.hostile, { tickMs: flags.tickMs });
      lastJoin = performance.now();
      await sandbox.settle({ timeoutMs: Math.max(1000, deadline - performance.now()) });
    }
    const convergedMs = Math.round(performance.now() - scenarioStart);

    // The final reconcile, once the lease grace period has passed for every lease taken.
    const graceMs = sandbox.config.leaseGraceSeconds * 1000 + 250;
    await sleep(Math.max(0, lastJoin + graceMs - performance.now()));
    await sandbox.tick();
    await sandbox.settle({ timeoutMs: Math.max(1000, deadline - performance.now()) });
    report = { ...(await sandbox.snapshot()), convergedMs };
    converged = isConverged(report);
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
    try {
      report = { ...(await sandbox.snapshot()), convergedMs: null };
    } catch {
      report = undefined;
    }
  } finally {
    clearInterval(ticker);
    while (drawing) await sleep(10);
    await draw(true).catch(() => undefined);
    if (tty) process.stdout.write('\n');
  }

  const elapsed = performance.now() - started;
  if (failure) process.stdout.write(`\n${failure}\n`);
  if (report) {
    process.stdout.write(`\n${summary(report, converged, flags, elapsed)}\n`);
    if (report.leakedCidrs > 0) {
      const leaked = await sandbox.leakedLeases().catch(() => []);
      process.stdout.write(`\nleaked leases: ${leaked.slice(0, 10).map((l) => `${l.cidr} (owner ${l.owner ?? 'none'})`).join(', ')}\n`);
    }
    if (flags.report) {
      writeFileSync(flags.report, `${JSON.stringify(reportFile(report), null, 2)}\n`);
      process.stdout.write(`\nreport written to ${flags.report}\n`);
    }
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await sandbox.stop();
  return converged ? 0 : 1;
}

/** Where the CLI writes its own lines: the process's streams, or a test's capture. */
export interface StartIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: StartIo = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

/** Parses the flags; a bad one is one line on stderr and exit 2, `--help` the usage and exit 0; else runs the sandbox. */
export async function main(argv: string[], io: StartIo = processIo): Promise<number> {
  let flags: Flags | 'help';
  try {
    flags = parseFlags(argv);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    io.err(`podroute sandbox: ${error.message} (see npm start -- --help)\n`);
    return 2;
  }
  if (flags === 'help') {
    io.out(`${HELP}\n`);
    return 0;
  }
  return run(flags);
}

/** True when this file is the script Node was started with, through whatever symlinks name it. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(fileURLToPath(import.meta.url)) === realpathSync(script);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`podroute sandbox failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
