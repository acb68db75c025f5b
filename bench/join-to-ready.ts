/**
 * Join-to-ready for one node joining a busy cluster, in one run:
 *
 * - **webhook**: podroute's edge trigger. The admission allocates the pod CIDR and queues the
 *   node's routes at once (no fixed delay); measured from the kubelet's create to the stored
 *   NetworkUnavailable=False, in real time against EC2's real token buckets.
 * - **externalCcm**: the same join under an external cloud controller manager (kubeadm, kOps): the
 *   kubelet's CREATE has no providerID, the sandbox's stand-in CCM sets it at once, and podroute
 *   acts on that UPDATE (node-provider-id webhook); measured from the kubelet's create alike.
 * - **schedule**: podroute without the webhook, waiting for its one-minute schedule. A join falls at
 *   a uniformly random moment of the schedule, so the next tick comes a uniformly random time
 *   later: the bench joins the node, waits that long (its sampled phase), runs the reconcile, and
 *   measures to readiness. `tickToReadyMs` is the part from the tick's start.
 * - **upstream**: kube-controller-manager's route controller reconciles every 10 s
 *   (`--route-reconciliation-period`, default 10s: kube-controller-manager reference) and a node
 *   joins at a uniformly random moment of that period. It is not run here: each of
 *   `MODEL_DRAWS` samples is a random wait in [0, 10 s) plus one of this run's measured
 *   tick-to-ready times (reconcile, worker, condition write: the work a resync does too). The same
 *   model at podroute's one-minute period gives `scheduleModelMedianMs`, next to the measured one.
 *
 * Ratios are of medians of this run. The random draws come from a seeded generator (`seed`), so a
 * run can be redone with the same phases.
 */
import { performance } from 'node:perf_hooks';
import { startSandbox } from '../infra/local/sandbox/index.ts';
import type { Sandbox } from '../infra/local/sandbox/index.ts';
import { silentLogger } from '../lib/log.ts';
import type { Logger } from '../lib/log.ts';
import { mapSettled } from '../lib/util/concurrency.ts';
import { EC2_THROTTLE } from './convergence.ts';
import { median } from './stats.ts';
import { seededRandom } from '../infra/local/random.ts';

/** kube-controller-manager `--route-reconciliation-period` default (kube-controller-manager reference). */
export const UPSTREAM_RESYNC_MS = 10_000;
/** podroute's production schedule: `rate(1 minute)` (serverless.yml). */
export const PODROUTE_TICK_MS = 60_000;
/** Random phases drawn for each modelled median. */
export const MODEL_DRAWS = 10_001;

export interface JoinToReadyResult {
  clusterNodes: number;
  seed: number;
  webhookMs: number[];
  webhookMedianMs: number;
  /** Joins whose providerID an external CCM sets after the CREATE (the UPDATE webhook's path). */
  externalCcmMs: number[];
  externalCcmMedianMs: number;
  /** externalCcmMedianMs / webhookMedianMs: 1 when every cluster type joins alike. */
  externalCcmVsWebhook: number;
  /** Measured joins without the webhook: random phase of the one-minute schedule, then reconcile. */
  schedulePhaseMs: number[];
  scheduleMs: number[];
  tickToReadyMs: number[];
  scheduleMedianMs: number;
  /** The same, modelled: a random phase of 60 s plus a measured tick-to-ready, median of MODEL_DRAWS. */
  scheduleModelMedianMs: number;
  /** Upstream's route controller: a random phase of its 10 s resync plus a measured tick-to-ready. */
  upstreamResyncMs: number;
  upstreamMedianMs: number;
  /** upstreamMedianMs / webhookMedianMs. */
  webhookVsUpstream: number;
  /** scheduleMedianMs / webhookMedianMs. */
  webhookVsSchedule: number;
  goal: string;
}

export async function benchJoinToReady(
  options: { clusterNodes?: number; webhookSamples?: number; scheduleSamples?: number; seed?: number; log?: Logger } = {},
): Promise<JoinToReadyResult> {
  const clusterNodes = options.clusterNodes ?? 200;
  const webhookSamples = options.webhookSamples ?? 15;
  const scheduleSamples = options.scheduleSamples ?? 3;
  const seed = options.seed ?? 20261201;
  const random = seededRandom(seed);
  const sandbox = await startSandbox({
    nodes: 0,
    routeTables: 2,
    routeLimit: 2 * (clusterNodes + webhookSamples + scheduleSamples) + 10,
    throttle: EC2_THROTTLE,
    tickMs: PODROUTE_TICK_MS,
    // A kubelet registers its Node once the instance has booted, by when EC2 shows the instance.
    notFoundAfterLaunchMs: 0,
    visibilityTimeoutSeconds: 180,
    // The stand-in CCM initializes an externalCcm join at once, so the figure is podroute's path alone.
    ccmDelayMs: 0,
    log: options.log ?? silentLogger,
  });
  try {
    const names = Array.from({ length: clusterNodes }, (_, i) => `ip-10-3-${Math.floor(i / 250)}-${i % 250}.ec2.internal`);
    await mapSettled(names, 25, (name) => sandbox.joinNode(name));
    await untilReady(sandbox, names, 600_000);
    // The bench runs each reconcile itself, at the moment a sample's phase says.
    sandbox.setSchedule(false);
    const webhookMs: number[] = [];
    for (let i = 0; i < webhookSamples; i++) webhookMs.push(await timeWebhookJoin(sandbox, `ip-10-4-0-${i}.ec2.internal`));
    const externalCcmMs: number[] = [];
    for (let i = 0; i < webhookSamples; i++) externalCcmMs.push(await timeWebhookJoin(sandbox, `ip-10-4-2-${i}.ec2.internal`, true));
    const schedulePhaseMs: number[] = [];
    const scheduleMs: number[] = [];
    const tickToReadyMs: number[] = [];
    for (let i = 0; i < scheduleSamples; i++) {
      const phaseMs = Math.round(random() * PODROUTE_TICK_MS);
      const sample = await timeScheduledJoin(sandbox, `ip-10-4-1-${i}.ec2.internal`, phaseMs);
      schedulePhaseMs.push(phaseMs);
      scheduleMs.push(sample.joinToReadyMs);
      tickToReadyMs.push(sample.tickToReadyMs);
    }
    const webhookMedianMs = median(webhookMs);
    const externalCcmMedianMs = median(externalCcmMs);
    const scheduleMedianMs = median(scheduleMs);
    const upstreamMedianMs = modelMedian(UPSTREAM_RESYNC_MS, tickToReadyMs, random);
    const scheduleModelMedianMs = modelMedian(PODROUTE_TICK_MS, tickToReadyMs, random);
    return {
      clusterNodes,
      seed,
      webhookMs,
      webhookMedianMs,
      externalCcmMs,
      externalCcmMedianMs,
      externalCcmVsWebhook: ratio(externalCcmMedianMs, webhookMedianMs),
      schedulePhaseMs,
      scheduleMs,
      tickToReadyMs,
      scheduleMedianMs,
      scheduleModelMedianMs,
      upstreamResyncMs: UPSTREAM_RESYNC_MS,
      upstreamMedianMs,
      webhookVsUpstream: ratio(upstreamMedianMs, webhookMedianMs),
      webhookVsSchedule: ratio(scheduleMedianMs, webhookMedianMs),
      goal: 'webhook median <= 250 ms',
    };
  } finally {
    await sandbox.stop();
  }
}

async function timeWebhookJoin(sandbox: Sandbox, name: string, externalCcm = false): Promise<number> {
  const started = performance.now();
  await sandbox.joinNode(name, { webhook: true, externalCcm });
  await untilReady(sandbox, [name], 60_000);
  const operation = externalCcm ? 'UPDATE' : 'CREATE';
  const call = sandbox.kube.state.webhookCalls().find((c) => c.operation === operation && c.name === name);
  if (call?.ok !== true) throw new Error(`the ${operation} admission of ${name} failed (${call?.error ?? 'no call'}): not a webhook join`);
  return Math.round(performance.now() - started);
}

/** Joins without the webhook, waits `phaseMs` (the time to the next tick), ticks, and times both parts. */
async function timeScheduledJoin(sandbox: Sandbox, name: string, phaseMs: number): Promise<{ joinToReadyMs: number; tickToReadyMs: number }> {
  const started = performance.now();
  await sandbox.joinNode(name, { webhook: false });
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + phaseMs - performance.now())));
  const tickAt = performance.now();
  await sandbox.tick();
  await untilReady(sandbox, [name], 120_000);
  const readyAt = performance.now();
  return { joinToReadyMs: Math.round(readyAt - started), tickToReadyMs: Math.round(readyAt - tickAt) };
}

/** Median of MODEL_DRAWS draws of (a uniformly random wait in [0, periodMs)) + (a measured tick-to-ready). */
export function modelMedian(periodMs: number, tickToReadyMs: readonly number[], random: () => number): number {
  if (tickToReadyMs.length === 0) throw new RangeError('modelMedian needs at least one measured tick-to-ready time');
  const draws: number[] = [];
  for (let i = 0; i < MODEL_DRAWS; i++) {
    const work = tickToReadyMs[Math.floor(random() * tickToReadyMs.length)] ?? 0;
    draws.push(random() * periodMs + work);
  }
  return Math.round(median(draws));
}


const ratio = (a: number, b: number): number => (b > 0 ? Math.round((a / b) * 10) / 10 : 0);

async function untilReady(sandbox: Sandbox, names: string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ready = names.every((name) => {
      const node = sandbox.kube.state.getNode(name) as { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined;
      return node?.status?.conditions?.some((c) => c.type === 'NetworkUnavailable' && c.status === 'False') === true;
    });
    if (ready) return;
    if (performance.now() > deadline) throw new Error(`nodes not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchJoinToReady({ clusterNodes: Number(process.argv[2] ?? 200) })));
}
