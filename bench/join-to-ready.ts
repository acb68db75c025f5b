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
 *
 * Where a webhook join's time goes (`webhookSteps`): the handlers' own log lines, stamped by the
 * bench's logger as they are written (`stepsOf`): the kubelet's create until `webhook.admitted`
 * (claim: the API server's call, the admission's reads, the lease, the enqueue), then until the
 * worker starts the node's message (queue: the answer, the store, the poll), then until its
 * condition write starts (worker: re-reads, EC2 routes), and until the bench sees the node ready
 * (patch: the condition write, and the bench's 5 ms poll).
 */
import { performance } from 'node:perf_hooks';
import { startSandbox } from '../infra/local/sandbox/index.ts';
import type { Sandbox } from '../infra/local/sandbox/index.ts';
import { silentLogger } from '../lib/log.ts';
import type { Logger } from '../lib/log.ts';
import { mapSettled } from '../lib/util/concurrency.ts';
import { DEFAULT_MUTATING } from '../infra/local/ec2/buckets.ts';
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
  /** Each webhook join cut into its steps (ms), one entry per sample, and each step's median and share. */
  webhookSteps: { samples: JoinSteps[]; medianMs: Record<JoinStep, number>; share: Record<JoinStep, number> };
  goal: string;
}

export const JOIN_STEPS = ['claim', 'queue', 'worker', 'patch'] as const;
export type JoinStep = (typeof JOIN_STEPS)[number];
export type JoinSteps = Record<JoinStep, number>;

/** A log line of a handler, stamped (performance.now()) when written. */
export interface Stamped {
  at: number;
  event: string;
  fields: Record<string, unknown>;
}

/** The events a join's steps are read from; every other line is dropped. */
const STEP_EVENTS = new Set(['webhook.admitted', 'message.done', 'action']);

/** A logger that keeps the step events with their time, and hands every line on to `inner`. */
function stampingLogger(inner: Logger): Logger & { lines: Stamped[] } {
  const lines: Stamped[] = [];
  return {
    lines,
    log(level, event, fields = {}) {
      if (STEP_EVENTS.has(event)) lines.push({ at: performance.now(), event, fields });
      inner.log(level, event, fields);
    },
    metric: (...args) => inner.metric(...args),
  };
}

/**
 * One webhook join's steps from its stamped lines: `startedAt` (the kubelet's create) and
 * `readyAt` (seen ready) are the bench's; the rest are the node's first `webhook.admitted`, its
 * `set-network-unavailable` action to false (which starts `ms` before its line), and the
 * `message.done` of the message that wrote it (which started `ms` before its line). Throws when a
 * line is missing: such a join did not go the webhook's way.
 */
export function stepsOf(lines: readonly Stamped[], node: string, startedAt: number, readyAt: number): JoinSteps {
  const mine = lines.filter((line) => line.fields.node === node && line.at >= startedAt);
  const admitted = mine.find((line) => line.event === 'webhook.admitted');
  const patch = mine.find((line) => line.event === 'action' && line.fields.action === 'set-network-unavailable' && line.fields.value === false);
  const message = mine.find((line) => line.event === 'message.done' && patch !== undefined && line.at >= patch.at);
  if (!admitted || !patch || !message) throw new Error(`join of ${node}: no webhook.admitted, message.done and set-network-unavailable lines`);
  const msOf = (line: Stamped): number => (typeof line.fields.ms === 'number' ? line.fields.ms : 0);
  const workerStart = Math.max(admitted.at, message.at - msOf(message));
  const patchStart = Math.min(readyAt, Math.max(workerStart, patch.at - msOf(patch)));
  return {
    claim: round1(admitted.at - startedAt),
    queue: round1(workerStart - admitted.at),
    worker: round1(patchStart - workerStart),
    patch: round1(readyAt - patchStart),
  };
}

/**
 * Waits until CreateRoute's bucket is full again (50 tokens at 5 a second). The setup's mass join
 * drains it, and so do a series of samples (two routes each). A join into a cluster whose last mass
 * join was that long ago finds it full; with it empty, each join waits for its two tokens (400 ms),
 * which measures the bucket (the convergence section's subject), not the join's path.
 */
async function untilBucketRefilled(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, (DEFAULT_MUTATING.capacity / DEFAULT_MUTATING.refillPerSecond) * 1000));
}

/**
 * Per step: the median over the samples, and its share of the steps' medians summed (shares add
 * up to 1; one slow join, such as a redelivered message, moves a median less than a sum).
 */
export function summarizeSteps(samples: readonly JoinSteps[]): { medianMs: Record<JoinStep, number>; share: Record<JoinStep, number> } {
  const medians = JOIN_STEPS.map((step) => [step, median(samples.map((s) => s[step]))] as const);
  const total = medians.reduce((sum, [, ms]) => sum + ms, 0);
  const medianMs = Object.fromEntries(medians.map(([step, ms]) => [step, round1(ms)])) as Record<JoinStep, number>;
  const share = Object.fromEntries(medians.map(([step, ms]) => [step, total > 0 ? Math.round((ms / total) * 1000) / 1000 : 0])) as Record<JoinStep, number>;
  return { medianMs, share };
}

const round1 = (ms: number): number => Math.round(ms * 10) / 10;

export async function benchJoinToReady(
  options: { clusterNodes?: number; webhookSamples?: number; scheduleSamples?: number; seed?: number; log?: Logger } = {},
): Promise<JoinToReadyResult> {
  const clusterNodes = options.clusterNodes ?? 200;
  const webhookSamples = options.webhookSamples ?? 15;
  const scheduleSamples = options.scheduleSamples ?? 3;
  const seed = options.seed ?? 20261201;
  const random = seededRandom(seed);
  const log = stampingLogger(options.log ?? silentLogger);
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
    log,
  });
  try {
    const names = Array.from({ length: clusterNodes }, (_, i) => `ip-10-3-${Math.floor(i / 250)}-${i % 250}.ec2.internal`);
    await mapSettled(names, 25, (name) => sandbox.joinNode(name));
    await untilReady(sandbox, names, 600_000);
    // The bench runs each reconcile itself, at the moment a sample's phase says.
    sandbox.setSchedule(false);
    await untilBucketRefilled();
    log.lines.length = 0;
    const webhookMs: number[] = [];
    const steps: JoinSteps[] = [];
    for (let i = 0; i < webhookSamples; i++) {
      const sample = await timeWebhookJoin(sandbox, `ip-10-4-0-${i}.ec2.internal`, log.lines);
      webhookMs.push(sample.ms);
      steps.push(sample.steps);
    }
    log.lines.length = 0;
    await untilBucketRefilled();
    const externalCcmMs: number[] = [];
    for (let i = 0; i < webhookSamples; i++) externalCcmMs.push((await timeWebhookJoin(sandbox, `ip-10-4-2-${i}.ec2.internal`, log.lines, true)).ms);
    log.lines.length = 0;
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
      webhookSteps: { samples: steps, ...summarizeSteps(steps) },
      goal: 'webhook median <= 250 ms',
    };
  } finally {
    await sandbox.stop();
  }
}

async function timeWebhookJoin(sandbox: Sandbox, name: string, lines: readonly Stamped[], externalCcm = false): Promise<{ ms: number; steps: JoinSteps }> {
  const started = performance.now();
  await sandbox.joinNode(name, { webhook: true, externalCcm });
  await untilReady(sandbox, [name], 60_000);
  const readyAt = performance.now();
  const operation = externalCcm ? 'UPDATE' : 'CREATE';
  const call = sandbox.kube.state.webhookCalls().find((c) => c.operation === operation && c.name === name);
  if (call?.ok !== true) throw new Error(`the ${operation} admission of ${name} failed (${call?.error ?? 'no call'}): not a webhook join`);
  // The worker logs its condition write and its message once the write has returned: after the
  // node can be seen ready.
  await until(() => lines.some((line) => line.event === 'message.done' && line.fields.node === name && line.at >= started), 10_000);
  return { ms: Math.round(readyAt - started), steps: stepsOf(lines, name, started, readyAt) };
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

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
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
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchJoinToReady({ clusterNodes: Number(process.argv[2] ?? 200) })));
}
