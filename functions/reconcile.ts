/**
 * reconcile: the EventBridge schedule's Lambda. Plans every route and node condition of the cluster
 * and fans the work out to the route worker's queue (lib/usecases/reconcile.ts), each message tagged
 * with the run's request id. In observe mode the run is the dry run, and it reports its drift.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { reconcile } from '../lib/usecases/reconcile.ts';
import type { ReconcileReport } from '../lib/usecases/reconcile.ts';
import type { Telemetry } from '../lib/log.ts';
import { driftOf, reportDrift } from '../lib/usecases/observe.ts';
import { correlated, telemetryFromEnv, telemetryMiddlewares, wiringOptions } from './telemetry.ts';
import { once, useCaseDeps, wiringFromEnv } from './wiring.ts';
import type { Wiring } from './wiring.ts';

export interface ReconcileResult {
  nodes: number;
  routeTables: number;
  create: number;
  replace: number;
  delete: number;
  unsafe: string | null;
  messagesSent: number;
  messagesDeferred: number;
  conditionsPatched: number;
  allocated: number;
  reclaimed: number;
  errors: number;
}

export function createReconcileHandler(getWiring: () => Promise<Wiring>, telemetry?: Telemetry) {
  return middy<ScheduledEvent, ReconcileResult>().use(telemetryMiddlewares(telemetry)).handler(async (_event, context) => {
    const wiring = await getWiring();
    const deps = correlated(useCaseDeps(wiring), context?.awsRequestId);
    const report = await reconcile(deps, { dryRun: wiring.observe === true });
    if (wiring.observe === true) reportDrift(driftOf(report), deps.log);
    return summarize(report);
  });
}

function summarize(report: ReconcileReport): ReconcileResult {
  return {
    nodes: report.nodes,
    routeTables: report.routeTables,
    create: report.plan.create.length,
    replace: report.plan.replace.length,
    delete: report.plan.delete.length,
    unsafe: report.plan.unsafe ?? null,
    messagesSent: report.messagesSent,
    messagesDeferred: report.messagesDeferred,
    conditionsPatched: report.conditionsPatched,
    allocated: report.allocated.length,
    reclaimed: report.reclaimed.length,
    errors: report.errors.length,
  };
}

const telemetry = telemetryFromEnv('reconcile', process.env);
export const handler = createReconcileHandler(once(() => wiringFromEnv(process.env, wiringOptions(telemetry))), telemetry);
