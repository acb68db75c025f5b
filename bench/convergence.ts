/**
 * Convergence against the physical limit: N nodes join at once, against the EC2 emulator's real
 * token buckets (CreateRoute: 50 tokens, 5 a second), and the time until every node is ready is
 * compared with the bucket's lower bound ((routes - burst) / refill). Ratios from one run.
 */
import { performance } from 'node:perf_hooks';
import { minimumSeconds } from '../infra/local/ec2/buckets.ts';
import { DEFAULT_MUTATING, DEFAULT_NON_MUTATING } from '../infra/local/ec2/throttle.ts';
import type { ThrottleOptions } from '../infra/local/ec2/throttle.ts';
import { startSandbox } from '../infra/local/sandbox/index.ts';
import type { Sandbox, SandboxReport } from '../infra/local/sandbox/index.ts';
import { silentLogger } from '../lib/log.ts';
import { mapSettled } from '../lib/util/concurrency.ts';
import { round } from './stats.ts';

export interface ConvergenceRun {
  nodes: number;
  routes: number;
  convergedMs: number;
  boundMs: number;
  ratioToBound: number;
  ec2Calls: Record<string, number>;
  throttled: number;
  dlqMessages: number;
}

/**
 * EC2's buckets at their real sizes and rates: the category defaults, and the emulator adds the
 * per-action buckets of infra/local/ec2/buckets.ts (AssignPrivateIpAddresses, AssignIpv6Addresses).
 */
export const EC2_THROTTLE: ThrottleOptions = { mutating: DEFAULT_MUTATING, nonMutating: DEFAULT_NON_MUTATING };

export async function convergeOnce(nodes: number, options: { routeTables?: number; tickMs?: number } = {}): Promise<ConvergenceRun> {
  const routeTables = options.routeTables ?? 1;
  const sandbox = await startSandbox({
    nodes: 0,
    routeTables,
    routeLimit: nodes + 10,
    // Real time: EC2's own bucket sizes and refill rates, and the production schedule (one minute).
    throttle: EC2_THROTTLE,
    tickMs: options.tickMs ?? 60_000,
    // A kubelet registers its node once the instance has booted, by when EC2 lists the instance: the
    // sandbox's pessimistic launch lag (60 s from the join) would measure a wait that production
    // does not have. The lag's retries have their own tests and run in `npm start`.
    notFoundAfterLaunchMs: 0,
    visibilityTimeoutSeconds: 180,
    log: silentLogger,
  });
  try {
    // A running cluster has had a reconcile before nodes join: its claim census lets admissions read by key.
    await sandbox.tick();
    const routes = nodes * routeTables;
    // Every route through CreateRoute's bucket (EC2's real size and refill rate) bounds the run.
    const boundMs = minimumSeconds(DEFAULT_MUTATING, routes) * 1000;
    const { convergedMs, report } = await joinAllAndConverge(sandbox, nodes, Math.max(120_000, boundMs * 4));
    return {
      nodes,
      routes,
      convergedMs: Math.round(convergedMs),
      boundMs: Math.round(boundMs),
      ratioToBound: boundMs > 0 ? round(convergedMs / boundMs, 3) : 0,
      ec2Calls: report.ec2Calls,
      throttled: report.throttled,
      dlqMessages: report.dlqMessages,
    };
  } finally {
    await sandbox.stop();
  }
}

/** How often the sandbox's status is looked at while a run converges. */
const STATUS_POLL_MS = 500;

/**
 * N nodes join at once (25 registrations in flight, as kubelets reach the API server), then waits
 * until the cluster has converged as a user sees it: every node ready and every route or prefix
 * right (retries may still be queued). Answers the time from the first join, and the report then.
 */
export async function joinAllAndConverge(sandbox: Sandbox, nodes: number, timeoutMs: number): Promise<{ convergedMs: number; report: SandboxReport }> {
  const started = performance.now();
  const names = Array.from({ length: nodes }, (_, i) => `ip-10-1-${Math.floor(i / 250)}-${i % 250}.ec2.internal`);
  const joins = await mapSettled(names, 25, (name) => sandbox.joinNode(name));
  if (process.env.BENCH_VERBOSE) process.stderr.write(`  joined ${nodes} in ${Math.round(performance.now() - started)} ms\n`);
  const failed = joins.filter((r) => r.status === 'rejected');
  if (failed.length > 0) throw new Error(`${failed.length} joins failed: ${String((failed[0] as PromiseRejectedResult).reason)}`);
  const deadline = started + timeoutMs;
  let lastReport = started;
  for (;;) {
    const status = await sandbox.status();
    if (process.env.BENCH_VERBOSE && performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      process.stderr.write(`  ${Math.round((lastReport - started) / 1000)} s: ${JSON.stringify(status)}\n`);
    }
    if (status.nodes === nodes && status.nodesReady === nodes && status.routesProgrammed === status.routesExpected && status.wrongRoutes === 0) break;
    if (performance.now() > deadline) throw new Error(`no convergence for ${nodes} nodes: ${JSON.stringify(status)}`);
    // Each look copies every stored node (about 12 KB each): on a shared machine a tighter poll takes
    // CPU from the run it times. 500 ms is 0.3 % of a 180 s bound.
    await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
  }
  const convergedMs = performance.now() - started;
  return { convergedMs, report: await sandbox.snapshot() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 100);
  console.log(JSON.stringify(await convergeOnce(n)));
}
