/**
 * Convergence against the physical limit: N nodes join at once, against the EC2 emulator's real
 * token buckets (CreateRoute: 50 tokens, 5 a second), and the time until every node is ready is
 * compared with the bucket's lower bound ((routes - burst) / refill). Ratios from one run.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_MUTATING, DEFAULT_NON_MUTATING } from '../infra/local/ec2/throttle.ts';
import { startSandbox } from '../infra/local/sandbox/index.ts';
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

/** Lower bound of the time to create `routes` routes through a bucket of `burst` tokens refilled at `refill`/s. */
export const bucketBoundMs = (routes: number, burst = DEFAULT_MUTATING.capacity, refill = DEFAULT_MUTATING.refillPerSecond): number =>
  (Math.max(0, routes - burst) / refill) * 1000;

export async function convergeOnce(nodes: number, options: { routeTables?: number; tickMs?: number } = {}): Promise<ConvergenceRun> {
  const routeTables = options.routeTables ?? 1;
  const sandbox = await startSandbox({
    nodes: 0,
    routeTables,
    routeLimit: nodes + 10,
    // Real time: EC2's own bucket sizes and refill rates, and the production schedule (one minute).
    throttle: { mutating: DEFAULT_MUTATING, nonMutating: DEFAULT_NON_MUTATING },
    tickMs: options.tickMs ?? 60_000,
    // A kubelet registers its node once the instance has booted, by when EC2 lists the instance: the
    // sandbox's pessimistic launch lag (60 s from the join) would measure a wait that production
    // does not have. The lag's retries have their own tests and run in `npm start`.
    notFoundAfterLaunchMs: 0,
    visibilityTimeoutSeconds: 180,
    log: silentLogger,
  });
  try {
    const started = performance.now();
    const names = Array.from({ length: nodes }, (_, i) => `ip-10-1-${Math.floor(i / 250)}-${i % 250}.ec2.internal`);
    const joins = await mapSettled(names, 25, (name) => sandbox.joinNode(name));
    if (process.env.BENCH_VERBOSE) process.stderr.write(`  joined ${nodes} in ${Math.round(performance.now() - started)} ms\n`);
    const failed = joins.filter((r) => r.status === 'rejected');
    if (failed.length > 0) throw new Error(`${failed.length} joins failed: ${String((failed[0] as PromiseRejectedResult).reason)}`);
    const routes = nodes * routeTables;
    const boundMs = bucketBoundMs(routes);
    // Converged as a user sees it: every node ready and every route right (retries may still be queued).
    const deadline = started + Math.max(120_000, boundMs * 4);
    let lastReport = started;
    for (;;) {
      const status = await sandbox.status();
      if (process.env.BENCH_VERBOSE && performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        process.stderr.write(`  ${Math.round((lastReport - started) / 1000)} s: ${JSON.stringify(status)}\n`);
      }
      if (status.nodes === nodes && status.nodesReady === nodes && status.routesProgrammed === status.routesExpected && status.wrongRoutes === 0) break;
      if (performance.now() > deadline) throw new Error(`no convergence for ${nodes} nodes: ${JSON.stringify(status)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const convergedMs = performance.now() - started;
    const report = await sandbox.snapshot();
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 100);
  console.log(JSON.stringify(await convergeOnce(n)));
}
