/**
 * `npm run bench`: every benchmark, one run each, written to bench/results.json (one key per
 * section) with a chart in bench/convergence.svg, and printed as a table. Each figure is a ratio or
 * a count measured in this run; none of this is in `npm test`.
 *
 *   npm run bench                 all sections (about 40 minutes on 2 cores)
 *   npm run bench -- --only plan,coldStart
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { benchAllocation } from './allocation.ts';
import { convergenceChart } from './chart.ts';
import { benchColdStart } from './cold-start.ts';
import { convergeOnce } from './convergence.ts';
import { benchEventRepair } from './events.ts';
import type { EventRepairResult } from './events.ts';
import type { ConvergenceRun } from './convergence.ts';
import { costOfSteadyState } from './cost.ts';
import { benchJoinToReady } from './join-to-ready.ts';
import { benchPlan } from './plan.ts';
import { benchPrefixes } from './prefixes.ts';
import type { PrefixesBenchRow, PrefixesGoal } from './prefixes.ts';
import { benchScale } from './scale.ts';
import type { ScaleGoal, ScaleRun } from './scale.ts';
import { steadyStateOnce } from './steady-state.ts';
import type { SteadyStateRun } from './steady-state.ts';

const SECTIONS = ['plan', 'convergence', 'joinToReady', 'steadyState', 'allocation', 'coldStart', 'scale', 'cost', 'prefixes', 'eventRepair'] as const;
type Section = (typeof SECTIONS)[number];

// --scale-sizes 5000,20000: other prefixes-mode scale sizes than the default four (100,000 takes a
// long while; routes mode runs at 5,000 either way);
// --join-cluster-nodes 40: a smaller busy cluster for join-to-ready than the default 200.
const { values } = parseArgs({ options: { only: { type: 'string' }, 'scale-sizes': { type: 'string' }, 'join-cluster-nodes': { type: 'string' } } });
const only = new Set((values.only ?? SECTIONS.join(',')).split(',').map((s) => s.trim()) as Section[]);
for (const name of only) if (!SECTIONS.includes(name)) throw new Error(`unknown section ${name}; sections: ${SECTIONS.join(', ')}`);

const here = import.meta.dirname;
const resultsPath = join(here, 'results.json');
// Sections not run this time keep their last figures.
const previous = await readFile(resultsPath, 'utf8')
  .then((text) => z.record(z.string(), z.unknown()).parse(JSON.parse(text)))
  .catch(() => ({}));
const results: Record<string, unknown> = { ...previous, machine: { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString().slice(0, 10) } };
const say = (text: string) => process.stderr.write(`${text}\n`);
/** Saves what is measured so far, so an interrupted run keeps its finished sections. */
const measuredAt = await commitMeasured();
/** The sections as they were before this run, to see which ones this run measured. */
const before = new Map(SECTIONS.map((name) => [name, JSON.stringify(results[name])]));
const save = () => {
  // Each section says which commit (and day) its figures were measured on: a partial run leaves the
  // others as they were, with their own stamps.
  const stamps = { ...(results.measuredAt as Record<string, unknown> | undefined) };
  for (const name of SECTIONS) if (JSON.stringify(results[name]) !== before.get(name)) stamps[name] = measuredAt;
  results.measuredAt = stamps;
  return writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
};

/** The commit measured (`+dirty` with uncommitted changes to tracked files) and the day. */
async function commitMeasured(): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  const git = (...args: string[]) => execFileSync('git', ['-C', here, ...args], { encoding: 'utf8' }).trim();
  try {
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? '+dirty' : ''} ${new Date().toISOString().slice(0, 10)}`;
  } catch {
    return `unknown ${new Date().toISOString().slice(0, 10)}`;
  }
}

if (only.has('plan')) {
  say('plan: 5,000 dual-stack nodes against 10,000 routes in 3 tables ...');
  results.plan = await benchPlan();
  await save();
}

let steady1000: SteadyStateRun | undefined;
if (only.has('convergence')) {
  const runs: ConvergenceRun[] = [];
  for (const nodes of [100, 500, 1000]) {
    say(`convergence: ${nodes} nodes joining at once against EC2's token buckets ...`);
    runs.push(await convergeOnce(nodes));
  }
  const at1000 = runs.find((run) => run.nodes === 1000);
  results.convergence = { goal: 'within 1.15x of the bound', ratioToBound: at1000?.ratioToBound ?? null, runs };
  await writeFile(join(here, 'convergence.svg'), convergenceChart(runs));
  await save();
}

if (only.has('joinToReady')) {
  say('join-to-ready: one node joining a busy cluster, webhook vs schedule at a random phase vs upstream (about 3 minutes) ...');
  results.joinToReady = await benchJoinToReady(values['join-cluster-nodes'] === undefined ? {} : { clusterNodes: Number(values['join-cluster-nodes']) });
  await save();
}

if (only.has('steadyState') || only.has('cost')) {
  const runs: SteadyStateRun[] = [];
  // 5,000 nodes exceed what VPC tables hold (1,000 routes each); it probes reconcile's own scaling.
  for (const nodes of [1000, 5000]) {
    say(`steady state: one reconcile over ${nodes} converged nodes ...`);
    runs.push(await steadyStateOnce(nodes));
  }
  steady1000 = runs[0];
  results.steadyState = { goal: '0 writes; reads O(pages)', runs };
  await save();
}

if (only.has('allocation')) {
  say('allocation: 1,000 allocations from 50 concurrent allocators against dynalite ...');
  results.allocation = await benchAllocation();
  await save();
}

if (only.has('coldStart')) {
  say('cold start: bundles and import times ...');
  results.coldStart = await benchColdStart(15, (previous as Record<string, unknown>).coldStart);
  await save();
}

if (only.has('prefixes')) {
  // 1,000 nodes joining at once, prefixes mode next to routes mode with 1 and 3 route tables (about 20 minutes).
  results.prefixes = { goal: 'one prefix call per node whatever the route tables; prefixes mode within 1.10x of the bound, routes mode within 1.05x', ...(await benchPrefixes(1000, say)) };
  await save();
}

if (only.has('scale')) {
  say('scale: one reconcile over kubelet-sized nodes (prefixes mode, and routes mode at 5,000), one process per run ...');
  results.scale = await benchScale(values['scale-sizes'] === undefined ? undefined : values['scale-sizes'].split(',').map(Number));
  await save();
}

if (only.has('eventRepair')) {
  say('event repair: terminated instances and tampered routes repaired by events alone (no reconcile), forged and stale events ...');
  results.eventRepair = await benchEventRepair(30, say);
  await save();
}

if (only.has('cost') && steady1000) {
  results.cost = costOfSteadyState(steady1000, 50);
}

await save();
printTable(results);

function printTable(r: Record<string, unknown>): void {
  const rows: Array<[string, string]> = [];
  const plan = r.plan as { ms?: number } | undefined;
  if (plan?.ms !== undefined) rows.push(['plan 5,000 dual-stack nodes x 10,000 routes', `${plan.ms} ms`]);
  const conv = r.convergence as { runs?: ConvergenceRun[] } | undefined;
  for (const run of conv?.runs ?? []) rows.push([`convergence N=${run.nodes}`, `${(run.convergedMs / 1000).toFixed(1)} s = ${run.ratioToBound}x the bound (${(run.boundMs / 1000).toFixed(0)} s)`]);
  const jtr = r.joinToReady as
    | { webhookMedianMs?: number; externalCcmMedianMs?: number; externalCcmVsWebhook?: number; scheduleMedianMs?: number; upstreamMedianMs?: number; webhookVsUpstream?: number; webhookVsSchedule?: number }
    | undefined;
  if (jtr?.webhookVsUpstream !== undefined) {
    rows.push(['join-to-ready webhook (median)', `${jtr.webhookMedianMs} ms`]);
    if (jtr.externalCcmMedianMs !== undefined) rows.push(['  external CCM (providerID set by an UPDATE)', `${jtr.externalCcmMedianMs} ms (${jtr.externalCcmVsWebhook}x)`]);
    rows.push(['  vs upstream 10 s resync, random phase', `${jtr.upstreamMedianMs} ms (${jtr.webhookVsUpstream}x)`]);
    rows.push(['  vs podroute 1 min schedule, random phase', `${jtr.scheduleMedianMs} ms (${jtr.webhookVsSchedule}x)`]);
    const steps = (r.joinToReady as { webhookSteps?: { medianMs: Record<string, number>; share: Record<string, number> } }).webhookSteps;
    if (steps) {
      const cells = Object.entries(steps.medianMs).map(([step, ms]) => `${step} ${ms} ms (${Math.round((steps.share[step] ?? 0) * 100)}%)`);
      rows.push(['  webhook join steps (median, share)', cells.join(', ')]);
    }
  }
  const steady = r.steadyState as { runs?: SteadyStateRun[] } | undefined;
  for (const run of steady?.runs ?? []) {
    const ec2 = Object.values(run.ec2Calls).reduce((a, b) => a + b, 0);
    const kube = Object.values(run.kubeCalls).reduce((a, b) => a + b, 0);
    const size = run.nodeBytes === undefined ? '' : ` (${(run.nodeBytes / 1000).toFixed(1)} KB nodes)`;
    rows.push([`steady state N=${run.nodes}${size}`, `${ec2} EC2, ${kube} Kubernetes, ${run.dynamodbWrites} DynamoDB writes; ${run.reconcileMs} ms`]);
  }
  const alloc = r.allocation as Record<string, number> | undefined;
  if (alloc) rows.push(['allocation 50 allocators x 1,000', `${alloc.duplicates} duplicates, ${alloc.conditionalFailuresPerAllocation} failed conditions/alloc, ${alloc.throughputVsSingle}x one allocator`]);
  const cold = r.coldStart as { functions?: Record<string, { bundleBytes: number; importRatioToBareEc2?: number }> } | undefined;
  for (const name of ['reconcile', 'routeWorker', 'nodeWebhook']) {
    const entry = cold?.functions?.[name];
    if (entry) rows.push([`cold start ${name}`, `${(entry.bundleBytes / 1e6).toFixed(2)} MB, import ${entry.importRatioToBareEc2}x a bare EC2 handler`]);
  }
  const prefixes = r.prefixes as { rows?: PrefixesBenchRow[] } | undefined;
  for (const row of prefixes?.rows ?? []) {
    const perNode = Object.entries(row.callCount.perNode).map(([action, n]) => `${n} ${action}`).join(' + ');
    const timed = row.timed ? `; ${(row.timed.convergedMs / 1000).toFixed(1)} s = ${row.timed.ratioToBound}x the ${row.timed.limitingAction} bound (${(row.timed.boundMs / 1000).toFixed(0)} s), sandbox CPU ${row.timed.cpuShare} of a core` : '';
    rows.push([`${row.mode} N=${row.nodes}, ${row.routeTables} table(s)`, `${perNode} per node${timed}`]);
  }
  for (const goal of (r.prefixes as { goals?: PrefixesGoal[] } | undefined)?.goals ?? []) rows.push([`goal: ${goal.goal}`, `${goal.met ? 'met' : 'NOT met'}: ${goal.ratioToBound ?? 'not timed'}x`]);
  const scale = r.scale as { runs?: ScaleRun[]; goals?: ScaleGoal[] } | undefined;
  for (const run of scale?.runs ?? []) {
    const mode = run.mode === undefined ? '' : `${run.mode} `;
    const base = run.baseRssMb === undefined ? '' : ` (${run.baseRssMb} MB before it starts)`;
    const server = run.serverMs === undefined ? '' : `, API stand-in ${run.serverMs} ms apart`;
    rows.push([`scale ${mode}N=${run.nodes} (${(run.nodeBytes / 1000).toFixed(1)} KB nodes)`, `reconcile ${run.reconcileMs} ms, peak RSS ${run.peakRssMb} MB${base}${server}`]);
    if (run.api) rows.push([`  API server cost per run, N=${run.nodes}`, `${run.api.requests} requests, ${(run.api.bytes / 1e6).toFixed(1)} MB`]);
  }
  for (const goal of scale?.goals ?? []) rows.push([`goal: ${goal.goal}`, `${goal.met ? 'met' : 'NOT met'}: ${goal.peakRssMb} MB, ${(goal.reconcileMs / 1000).toFixed(1)} s`]);
  const events = r.eventRepair as EventRepairResult | undefined;
  if (events) {
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    const ms = (value: number | null) => (value === null ? 'never' : `${value} ms`);
    rows.push([`event repair: terminated node's routes gone (goal 5 s)`, `median ${ms(events.terminated.medianMs)}, max ${ms(events.terminated.maxMs)}: ${met(events.terminated.met)} (next reconcile: ${events.nextReconcileMs.mean / 1000} s mean, ${events.nextReconcileMs.worst / 1000} s worst)`]);
    rows.push([`event repair: tampered route repaired (goal 5 s)`, `median ${ms(events.tampered.medianMs)}, max ${ms(events.tampered.maxMs)}: ${met(events.tampered.met)}`]);
    rows.push([`event repair: wrong deletions, stale/forged (goal 0)`, `${events.wrongDeletions} after ${events.forgedEvents} forged and ${events.staleEvents} stale events: ${met(events.wrongDeletionsMet)}`]);
  }
  const cost = r.cost as { usdPerMonth?: number } | undefined;
  if (cost?.usdPerMonth !== undefined) rows.push(['cost, 1,000 nodes, steady state', `$${cost.usdPerMonth.toFixed(2)} a month`]);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
}
