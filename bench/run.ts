/**
 * `npm run bench`: every benchmark, one run each, written to bench/results.json (one key per
 * section) with a chart in bench/convergence.svg, and printed as a table. Each figure is a ratio or
 * a count measured in this run; none of this is in `npm test`.
 *
 *   npm run bench                 all sections (about 15 minutes on 2 cores)
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
import type { ConvergenceRun } from './convergence.ts';
import { estimateCost } from './cost.ts';
import { benchJoinToReady } from './join-to-ready.ts';
import { benchPlan } from './plan.ts';
import { benchPrefixes } from './prefixes.ts';
import type { PrefixesBenchRow } from './prefixes.ts';
import { steadyStateOnce } from './steady-state.ts';
import type { SteadyStateRun } from './steady-state.ts';

const SECTIONS = ['plan', 'convergence', 'joinToReady', 'steadyState', 'allocation', 'coldStart', 'cost', 'prefixes'] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({ options: { only: { type: 'string' } } });
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
const save = () => writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);

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
  say('join-to-ready: one node joining a busy cluster, webhook vs schedule (about 4 minutes) ...');
  results.joinToReady = await benchJoinToReady();
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
  results.coldStart = await benchColdStart(7, (previous as Record<string, unknown>).coldStart);
  await save();
}

if (only.has('prefixes')) {
  // 1,000 nodes joining at once, prefixes mode next to routes mode with 1 and 3 route tables (about 20 minutes).
  results.prefixes = { goal: 'one prefix call per node whatever the route tables; time within 1.15x of the bound', ...(await benchPrefixes(1000, say)) };
  await save();
}

if (only.has('cost') && steady1000) {
  results.cost = {
    assumptions: 'us-east-1 on-demand prices, free tiers ignored, 1,000 nodes, 1 route table, 50 joins and 50 leaves a day',
    ...estimateCost({
      nodes: steady1000.nodes,
      reconcileMs: steady1000.reconcileMs,
      queriesPerReconcile: steady1000.dynamodbCalls.Query ?? 1,
      leaseBytesPerReconcile: steady1000.nodes * 90,
      joinsPerDay: 50,
      perJoin: steady1000.perJoin,
    }),
  };
}

await writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
printTable(results);

function printTable(r: Record<string, unknown>): void {
  const rows: Array<[string, string]> = [];
  const plan = r.plan as { ms?: number } | undefined;
  if (plan?.ms !== undefined) rows.push(['plan 5,000 dual-stack nodes x 10,000 routes', `${plan.ms} ms`]);
  const conv = r.convergence as { runs?: ConvergenceRun[] } | undefined;
  for (const run of conv?.runs ?? []) rows.push([`convergence N=${run.nodes}`, `${(run.convergedMs / 1000).toFixed(1)} s = ${run.ratioToBound}x the bound (${(run.boundMs / 1000).toFixed(0)} s)`]);
  const jtr = r.joinToReady as { webhookMedianMs?: number; scheduleMedianMs?: number; speedup?: number } | undefined;
  if (jtr?.speedup !== undefined) rows.push(['join-to-ready webhook vs schedule', `${jtr.webhookMedianMs} ms vs ${jtr.scheduleMedianMs} ms (${jtr.speedup}x faster)`]);
  const steady = r.steadyState as { runs?: SteadyStateRun[] } | undefined;
  for (const run of steady?.runs ?? []) {
    const ec2 = Object.values(run.ec2Calls).reduce((a, b) => a + b, 0);
    const kube = Object.values(run.kubeCalls).reduce((a, b) => a + b, 0);
    rows.push([`steady state N=${run.nodes}`, `${ec2} EC2, ${kube} Kubernetes, ${run.dynamodbWrites} DynamoDB writes; ${run.reconcileMs} ms`]);
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
    const timed = row.timed ? `; ${(row.timed.convergedMs / 1000).toFixed(1)} s = ${row.timed.ratioToBound}x the ${row.timed.limitingAction} bound (${(row.timed.boundMs / 1000).toFixed(0)} s)` : '';
    rows.push([`${row.mode} N=${row.nodes}, ${row.routeTables} table(s)`, `${perNode} per node${timed}`]);
  }
  const cost = r.cost as { usdPerMonth?: number } | undefined;
  if (cost?.usdPerMonth !== undefined) rows.push(['cost, 1,000 nodes, steady state', `$${cost.usdPerMonth.toFixed(2)} a month`]);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
}
