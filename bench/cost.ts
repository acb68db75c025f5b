/**
 * Monthly AWS cost of podroute for a cluster at steady state, from counts and durations measured in
 * the sandbox (bench/steady-state.ts: kubelet-sized nodes, SQS requests counted by the local queue).
 * Unit prices are AWS's published on-demand prices for us-east-1 (free tiers ignored); each is
 * printed in the formula of the term it prices, and what is not measured is named in `assumptions`.
 */
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { round } from './stats.ts';
import type { SteadyStateRun } from './steady-state.ts';

export interface CostInputs {
  nodes: number;
  /** Wall time of one steady-state reconcile, measured. */
  reconcileMs: number;
  /** DynamoDB Query calls per reconcile, measured (one page per set at this size). */
  queriesPerReconcile: number;
  /** Read units the reconcile's lease reads consume per run (strongly consistent, 4 KB each), measured. */
  leaseReadUnits: number;
  /** SQS requests (as billed) one steady reconcile makes, measured. */
  reconcileSqsRequests: number;
  /** DynamoDB writes one steady reconcile makes, measured (the claim census record, docs/decisions/0030). */
  reconcileDynamodbWrites: number;
  /** Log bytes one steady reconcile writes at production's level, measured. */
  reconcileLogBytes: number;
  /** Custom metrics the reconcile publishes every run (so every hour of the month), measured. */
  reconcileMetrics: number;
  /** CloudWatch alarms and dashboards the stack deploys (counted in serverless.yml). */
  monitoring: { alarms: number; dashboards: number };
  /** The worker's event source at rest in the sandbox, measured. */
  idle: {
    /** Pollers the event source runs at idle. */
    pollers: number;
    /** Receives each poller makes per long-poll wait (1 when each asks once per wait). */
    receivesPerPollerPerWait: number;
  };
  /** Node joins (and as many leaves) a day: churn is not steady state, but every cluster has some. */
  joinsPerDay: number;
  /** What one join costs, measured: worker invocations and time, webhook time, DynamoDB writes, SQS requests (empty receives left out), log bytes. */
  perJoin: { workerInvocations: number; workerMs: number; webhookMs: number; dynamodbWrites: number; sqsRequests: number; logBytes: number };
}

const MONTH_MINUTES = 30 * 24 * 60;
/**
 * Unit prices, us-east-1, on-demand, free tiers ignored; each with AWS's pricing page and the date
 * it was checked (2026-12-01, against stored copies and quotes of those pages: this machine has no
 * internet). The formulas below print each price next to its term.
 */
const PRICE = {
  // https://aws.amazon.com/lambda/pricing/ (Duration, Arm, first 7.5 billion GB-s a month): the
  // functions deploy as arm64 (serverless.yml `architecture: arm64`). Checked 2026-12-01.
  lambdaGbSecondArm: 0.0000133334,
  // https://aws.amazon.com/lambda/pricing/ (Requests: $0.20 per 1M). Checked 2026-12-01.
  lambdaRequest: 0.2 / 1e6,
  // https://aws.amazon.com/api-gateway/pricing/ (HTTP APIs, first 300 million requests a month:
  // $1.00 per million; the webhook is an httpApi event in serverless.yml). Not re-checked on 2026-12-01.
  httpApiRequest: 1 / 1e6,
  // https://aws.amazon.com/sqs/pricing/ (Standard queue, first 100 billion requests a month:
  // $0.40 per 1M; each 64 KB chunk of a payload is one request; empty receives count). Checked 2026-12-01.
  sqsRequest: 0.4 / 1e6,
  // https://aws.amazon.com/dynamodb/pricing/on-demand/ (read request units $0.125 per 1M; one unit
  // is a strongly consistent read of up to 4 KB). Checked 2026-12-01.
  dynamoRead: 0.125 / 1e6,
  // https://aws.amazon.com/dynamodb/pricing/on-demand/ (write request units $0.625 per 1M; one unit
  // is a write of up to 1 KB). Checked 2026-12-01.
  dynamoWrite: 0.625 / 1e6,
  // https://aws.amazon.com/cloudwatch/pricing/ (Logs, collect (data ingestion): $0.50 per GB). Not re-checked on 2026-12-01.
  logsGb: 0.5,
  // https://aws.amazon.com/cloudwatch/pricing/ (Metrics: first 10,000 metrics $0.30 per metric a
  // month, prorated by the hour a metric is published in). Not re-checked against the page on 2026-12-01.
  customMetricMonth: 0.3,
  // https://aws.amazon.com/cloudwatch/pricing/ (Alarms: standard resolution (60 s), $0.10 per alarm
  // metric a month). Not re-checked against the page on 2026-12-01.
  alarmMetricMonth: 0.1,
  // https://aws.amazon.com/cloudwatch/pricing/ (Dashboards: $3.00 per dashboard a month). Not
  // re-checked against the page on 2026-12-01.
  dashboardMonth: 3,
};
/** EC2 API calls (DescribeRouteTables, CreateRoute, ...) carry no charge (https://aws.amazon.com/ec2/pricing/: instances are priced, API requests are not). */
export const EC2_API_CALL_USD = 0;
/** Each function's memory, as serverless.yml gives it (test/bench/cost.test.ts checks they agree). */
export const MEMORY_MB = { reconcile: 512, worker: 256, webhook: 256 } as const;
/**
 * The wait of each of Lambda's long polls. The Lambda Developer Guide ("Configuring scaling
 * behavior for SQS event source mappings") says Lambda long-polls a standard queue but not for how
 * long; SQS caps a long poll at 20 s (SQS Developer Guide, "Amazon SQS short and long polling"), so
 * 20 s is the fewest receives a long-polling poller can make: an assumption, and a floor.
 */
export const PRODUCTION_WAIT_SECONDS = 20;
/**
 * Pollers Lambda keeps on a quiet standard queue: "When traffic is low, Lambda scales back the
 * processing to five concurrent batches, and can optimize to as few as 2 ... However, this
 * optimization is not available when you enable the maximum concurrency setting" (same page);
 * podroute sets maximum concurrency (serverless.yml `maximumConcurrency`). The cost takes the
 * poller count the sandbox ran and says whether it matches this one.
 */
export const AWS_IDLE_POLLERS = 5;
/**
 * Bytes of the three lines Lambda writes to the log for every invocation, START, END and REPORT
 * (AWS Lambda Operator Guide, "How CloudWatch structures logs"; text format, serverless.yml sets no
 * logFormat), laid out as Lambda prints them with a request id; REPORT's figures take their usual widths.
 */
export const PLATFORM_LOG_BYTES = ((requestId: string) =>
  [
    `START RequestId: ${requestId} Version: $LATEST`,
    `END RequestId: ${requestId}`,
    `REPORT RequestId: ${requestId}\tDuration: 123.45 ms\tBilled Duration: 124 ms\tMemory Size: 512 MB\tMax Memory Used: 123 MB\t`,
  ].reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0))('8f507cfc-0000-4697-b07a-ac58fc914c95');

export interface CostEstimate {
  usdPerMonth: number;
  lines: Array<{ item: string; formula: string; usd: number }>;
  /** What the figure rests on that the sandbox did not measure. */
  assumptions: string;
}

const gb = (mb: number): number => mb / 1024;
const fmt = (value: number): string => String(round(value, 3));

export function estimateCost(input: CostInputs): CostEstimate {
  const reconciles = MONTH_MINUTES; // one a minute
  const joins = input.joinsPerDay * 30;
  // A leave is taken to cost what a join costs (the webhook, a worker message, its writes).
  const churn = joins * 2;
  const lines: CostEstimate['lines'] = [];
  const add = (item: string, formula: string, usd: number) => lines.push({ item, formula, usd: round(usd, 4) });
  const gbS = `$${PRICE.lambdaGbSecondArm}/GB-s`;

  add(
    'reconcile compute',
    `${reconciles} runs x ${input.reconcileMs} ms x ${gb(MEMORY_MB.reconcile)} GB x ${gbS}`,
    reconciles * (input.reconcileMs / 1000) * gb(MEMORY_MB.reconcile) * PRICE.lambdaGbSecondArm,
  );
  add('reconcile requests', `${reconciles} x $0.20/1M`, reconciles * PRICE.lambdaRequest);
  const workerRuns = churn * input.perJoin.workerInvocations;
  add(
    'worker (churn)',
    `${fmt(workerRuns)} runs x (${input.perJoin.workerMs} ms x ${gb(MEMORY_MB.worker)} GB x ${gbS} + $0.20/1M)`,
    workerRuns * ((input.perJoin.workerMs / 1000) * gb(MEMORY_MB.worker) * PRICE.lambdaGbSecondArm + PRICE.lambdaRequest),
  );
  add(
    'webhook (churn)',
    `${churn} calls x (${input.perJoin.webhookMs} ms x ${gb(MEMORY_MB.webhook)} GB x ${gbS} + $0.20/1M)`,
    churn * ((input.perJoin.webhookMs / 1000) * gb(MEMORY_MB.webhook) * PRICE.lambdaGbSecondArm + PRICE.lambdaRequest),
  );

  add('API Gateway (churn)', `${churn} webhook calls x $1.00/1M HTTP API requests`, churn * PRICE.httpApiRequest);

  // The idle pollers: the sandbox's measured receives per poller per wait, at production's wait.
  const { pollers, receivesPerPollerPerWait } = input.idle;
  const polls = pollers * receivesPerPollerPerWait * (60 / PRODUCTION_WAIT_SECONDS) * MONTH_MINUTES;
  const pollerNote = pollers === AWS_IDLE_POLLERS ? `AWS documents ${AWS_IDLE_POLLERS}` : `AWS documents ${AWS_IDLE_POLLERS}, not ${pollers}`;
  add(
    'SQS idle long polls',
    `${pollers} pollers (${pollerNote}) x ${receivesPerPollerPerWait} receives/poller/wait x (60 s / ${PRODUCTION_WAIT_SECONDS} s wait) x ${MONTH_MINUTES} min x $0.40/1M`,
    polls * PRICE.sqsRequest,
  );
  add('SQS reconcile', `${reconciles} runs x ${input.reconcileSqsRequests} requests x $0.40/1M`, reconciles * input.reconcileSqsRequests * PRICE.sqsRequest);
  add('SQS (churn)', `${churn} joins+leaves x ${input.perJoin.sqsRequests} requests x $0.40/1M`, churn * input.perJoin.sqsRequests * PRICE.sqsRequest);

  // Each Query consumes at least one unit, however few bytes it reads.
  const readUnitsPerRun = Math.max(input.queriesPerReconcile, input.leaseReadUnits);
  add('DynamoDB reads', `${reconciles} runs x ${readUnitsPerRun} RRU (strongly consistent, 4 KB each) x $0.125/1M`, reconciles * readUnitsPerRun * PRICE.dynamoRead);
  add('DynamoDB writes (reconcile)', `${reconciles} runs x ${input.reconcileDynamodbWrites} WRU (the claim census record, 1 KB or less) x $0.625/1M`, reconciles * input.reconcileDynamodbWrites * PRICE.dynamoWrite);
  add('DynamoDB writes (churn)', `${churn} joins+leaves x ${input.perJoin.dynamodbWrites} WRU x $0.625/1M`, churn * input.perJoin.dynamodbWrites * PRICE.dynamoWrite);

  const invocations = reconciles + workerRuns + churn;
  const logBytes = reconciles * input.reconcileLogBytes + churn * input.perJoin.logBytes + invocations * PLATFORM_LOG_BYTES;
  add(
    'CloudWatch Logs',
    `(${reconciles} runs x ${input.reconcileLogBytes} B + ${churn} joins+leaves x ${input.perJoin.logBytes} B + ${fmt(invocations)} invocations x ${PLATFORM_LOG_BYTES} B START/END/REPORT) / 1e9 x $0.50/GB`,
    (logBytes / 1e9) * PRICE.logsGb,
  );

  add('CloudWatch custom metrics', `${input.reconcileMetrics} metrics the reconcile publishes every run x $0.30/metric-month`, input.reconcileMetrics * PRICE.customMetricMonth);
  add(
    'CloudWatch alarms and dashboard',
    `${input.monitoring.alarms} alarm metrics (60 s or longer periods) x $0.10/alarm-month + ${input.monitoring.dashboards} dashboards x $3.00/dashboard-month`,
    input.monitoring.alarms * PRICE.alarmMetricMonth + input.monitoring.dashboards * PRICE.dashboardMonth,
  );

  const assumptions = [
    'us-east-1 on-demand prices, free tiers ignored',
    `${input.nodes} nodes, 1 route table, one reconcile a minute`,
    `${input.joinsPerDay} joins and as many leaves a day, a leave costing what a join costs`,
    `Lambda long-polls with a ${PRODUCTION_WAIT_SECONDS} s wait (the SQS maximum; Lambda does not document its wait)`,
    `START/END/REPORT lines of ${PLATFORM_LOG_BYTES} B per invocation (text log format); podroute's own lines measured as the sandbox writes them (Powertools adds its own keys in Lambda)`,
    'EC2 API calls are free; metrics the worker and webhook publish only on failures are not counted',
    'the INIT phase of cold starts (billed since August 2025) is not priced: at a few joins a day most worker and webhook invocations start cold, adding their import time (bench coldStart) to each',
  ].join('; ');
  return { usdPerMonth: round(lines.reduce((sum, line) => sum + line.usd, 0), 4), lines, assumptions };
}

/** The cost of a steady-state run's cluster (bench/steady-state.ts), with `joinsPerDay` of churn. */
export function costOfSteadyState(run: SteadyStateRun, joinsPerDay: number): CostEstimate & { nodeBytes: number } {
  return {
    nodeBytes: run.nodeBytes,
    ...estimateCost({
      nodes: run.nodes,
      reconcileMs: run.reconcileMs,
      queriesPerReconcile: run.dynamodbCalls.Query ?? 1,
      leaseReadUnits: run.leaseReadUnits,
      reconcileSqsRequests: run.reconcileSqsRequests,
      reconcileDynamodbWrites: run.dynamodbWrites,
      reconcileLogBytes: run.reconcileLogBytes,
      reconcileMetrics: run.reconcileMetrics,
      monitoring: deployedMonitoring(),
      idle: run.idle,
      joinsPerDay,
      perJoin: run.perJoin,
    }),
  };
}

/**
 * The alarm metrics and dashboards serverless.yml deploys: an alarm on one metric counts once, a
 * metric-math alarm once per metric it reads (CloudWatch pricing bills alarms per alarm metric).
 */
export function deployedMonitoring(path = new URL('../serverless.yml', import.meta.url)): { alarms: number; dashboards: number } {
  const doc = load(readFileSync(path, 'utf8')) as { resources?: { Resources?: Record<string, { Type?: unknown; Properties?: { Metrics?: Array<{ MetricStat?: unknown }> } }> } };
  let alarms = 0;
  let dashboards = 0;
  for (const resource of Object.values(doc.resources?.Resources ?? {})) {
    if (resource.Type === 'AWS::CloudWatch::Alarm') alarms += resource.Properties?.Metrics?.filter((m) => m.MetricStat !== undefined).length ?? 1;
    if (resource.Type === 'AWS::CloudWatch::Dashboard') dashboards += 1;
  }
  return { alarms, dashboards };
}
