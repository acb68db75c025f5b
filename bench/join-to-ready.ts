/**
 * Join-to-ready for one node joining a busy cluster: through the node webhook (podroute's edge
 * trigger) versus waiting for the next schedule tick (what upstream's controllers do: they act at
 * their next resync). Real time, EC2's real token buckets, the production one-minute schedule.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_MUTATING, DEFAULT_NON_MUTATING } from '../infra/local/ec2/throttle.ts';
import { startSandbox } from '../infra/local/sandbox/index.ts';
import type { Sandbox } from '../infra/local/sandbox/index.ts';
import { silentLogger } from '../lib/log.ts';
import { mapSettled } from '../lib/util/concurrency.ts';
import { median } from './stats.ts';

export interface JoinToReadyResult {
  clusterNodes: number;
  tickMs: number;
  webhookMs: number[];
  scheduleMs: number[];
  webhookMedianMs: number;
  scheduleMedianMs: number;
  /** How many times faster the webhook path makes a node ready. */
  speedup: number;
}

export async function benchJoinToReady(options: { clusterNodes?: number; samples?: number; tickMs?: number } = {}): Promise<JoinToReadyResult> {
  const clusterNodes = options.clusterNodes ?? 200;
  const samples = options.samples ?? 3;
  const tickMs = options.tickMs ?? 60_000;
  const sandbox = await startSandbox({
    nodes: 0,
    routeTables: 2,
    routeLimit: 2 * (clusterNodes + 2 * samples) + 10,
    throttle: { mutating: DEFAULT_MUTATING, nonMutating: DEFAULT_NON_MUTATING },
    tickMs,
    visibilityTimeoutSeconds: 180,
    log: silentLogger,
  });
  try {
    const names = Array.from({ length: clusterNodes }, (_, i) => `ip-10-3-${Math.floor(i / 250)}-${i % 250}.ec2.internal`);
    await mapSettled(names, 25, (name) => sandbox.joinNode(name));
    await untilReady(sandbox, names, 600_000);
    const webhookMs: number[] = [];
    const scheduleMs: number[] = [];
    for (let i = 0; i < samples; i++) {
      webhookMs.push(await timeJoin(sandbox, `ip-10-4-0-${i}.ec2.internal`, true, tickMs * 3));
      scheduleMs.push(await timeJoin(sandbox, `ip-10-4-1-${i}.ec2.internal`, false, tickMs * 3));
    }
    const webhookMedianMs = median(webhookMs);
    const scheduleMedianMs = median(scheduleMs);
    return {
      clusterNodes,
      tickMs,
      webhookMs,
      scheduleMs,
      webhookMedianMs,
      scheduleMedianMs,
      speedup: Math.round((scheduleMedianMs / webhookMedianMs) * 10) / 10,
    };
  } finally {
    await sandbox.stop();
  }
}

async function timeJoin(sandbox: Sandbox, name: string, webhook: boolean, timeoutMs: number): Promise<number> {
  const started = performance.now();
  await sandbox.joinNode(name, { webhook });
  await untilReady(sandbox, [name], timeoutMs);
  return Math.round(performance.now() - started);
}

async function untilReady(sandbox: Sandbox, names: string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ready = names.every((name) => {
      const node = sandbox.kube.state.getNode(name) as { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined;
      return node?.status?.conditions?.some((c) => c.type === 'NetworkUnavailable' && c.status === 'False') === true;
    });
    if (ready) return;
    if (performance.now() > deadline) throw new Error(`nodes not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchJoinToReady({ clusterNodes: Number(process.argv[2] ?? 200) })));
}
