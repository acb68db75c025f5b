/**
 * The cost model (bench/cost.ts): each line's dollars follow from the measured inputs and the unit
 * price its formula prints; the idle pollers come from the sandbox and are checked against AWS's
 * documented count; memory sizes agree with serverless.yml.
 */
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { AWS_IDLE_POLLERS, deployedMonitoring, estimateCost, MEMORY_MB, PLATFORM_LOG_BYTES, PRODUCTION_WAIT_SECONDS } from '../../bench/cost.ts';
import type { CostInputs } from '../../bench/cost.ts';

const MONTH_MINUTES = 43_200;

const base: CostInputs = {
  nodes: 1000,
  reconcileMs: 100,
  queriesPerReconcile: 2,
  leaseReadUnits: 22,
  reconcileSqsRequests: 0,
  reconcileDynamodbWrites: 1,
  reconcileLogBytes: 1000,
  reconcileMetrics: 6,
  monitoring: { alarms: 9, dashboards: 1 },
  idle: { pollers: 5, receivesPerPollerPerWait: 1 },
  joinsPerDay: 50,
  perJoin: { workerInvocations: 1, workerMs: 50, webhookMs: 100, dynamodbWrites: 3, sqsRequests: 3, logBytes: 900 },
};
const withInputs = (change: Partial<CostInputs>): CostInputs => ({ ...base, ...change });
const line = (input: CostInputs, item: string) => {
  const found = estimateCost(input).lines.find((l) => l.item === item);
  if (!found) throw new Error(`no line ${item}`);
  return found;
};

describe('estimateCost', () => {
  it.each<[string, CostInputs, string, number]>([
    // 43,200 runs x 0.1 s x 0.5 GB x $0.0000133334
    ['reconcile compute', base, 'reconcile compute', 43_200 * 0.1 * 0.5 * 0.0000133334],
    ['reconcile compute, slower', withInputs({ reconcileMs: 400 }), 'reconcile compute', 43_200 * 0.4 * 0.5 * 0.0000133334],
    ['reconcile requests', base, 'reconcile requests', 43_200 * 0.2e-6],
    // 50 joins and 50 leaves a day for 30 days: 3,000 calls
    ['webhook', base, 'webhook (churn)', 3000 * (0.1 * 0.25 * 0.0000133334 + 0.2e-6)],
    ['worker', withInputs({ perJoin: { ...base.perJoin, workerInvocations: 2 } }), 'worker (churn)', 6000 * (0.05 * 0.25 * 0.0000133334 + 0.2e-6)],
    // 5 pollers x 1 receive per wait x 3 waits a minute x 43,200 minutes x $0.40/1M
    ['idle polls', base, 'SQS idle long polls', 5 * 3 * 43_200 * 0.4e-6],
    ['idle polls, 2 pollers', withInputs({ idle: { pollers: 2, receivesPerPollerPerWait: 1 } }), 'SQS idle long polls', 2 * 3 * 43_200 * 0.4e-6],
    ['idle polls, a poller asking twice a wait', withInputs({ idle: { pollers: 5, receivesPerPollerPerWait: 2 } }), 'SQS idle long polls', 5 * 2 * 3 * 43_200 * 0.4e-6],
    ['reconcile SQS at steady state', base, 'SQS reconcile', 0],
    ['reconcile SQS with a backlog check a run', withInputs({ reconcileSqsRequests: 1 }), 'SQS reconcile', 43_200 * 0.4e-6],
    ['churn SQS', base, 'SQS (churn)', 3000 * 3 * 0.4e-6],
    ['API Gateway', base, 'API Gateway (churn)', 3000 * 1e-6],
    ['DynamoDB reads: bytes decide', base, 'DynamoDB reads', 43_200 * 22 * 0.125e-6],
    ['DynamoDB reads: a Query costs a unit at least', withInputs({ leaseReadUnits: 1, queriesPerReconcile: 3 }), 'DynamoDB reads', 43_200 * 3 * 0.125e-6],
    ['DynamoDB writes', base, 'DynamoDB writes (churn)', 3000 * 3 * 0.625e-6],
    ['DynamoDB writes: the claim census record each run', base, 'DynamoDB writes (reconcile)', 43_200 * 1 * 0.625e-6],
    ['DynamoDB writes: none a run', withInputs({ reconcileDynamodbWrites: 0 }), 'DynamoDB writes (reconcile)', 0],
    ['custom metrics', base, 'CloudWatch custom metrics', 6 * 0.3],
    ['alarms and dashboard', base, 'CloudWatch alarms and dashboard', 9 * 0.1 + 1 * 3],
    ['no dashboard', withInputs({ monitoring: { alarms: 2, dashboards: 0 } }), 'CloudWatch alarms and dashboard', 2 * 0.1],
    [
      'logs',
      base,
      'CloudWatch Logs',
      ((43_200 * 1000 + 3000 * 900 + (43_200 + 3000 + 3000) * PLATFORM_LOG_BYTES) / 1e9) * 0.5,
    ],
  ])('%s', (_name, input, item, usd) => {
    expect(line(input, item).usd).toBeCloseTo(usd, 4);
  });

  it('adds the lines up', () => {
    const estimate = estimateCost(base);
    expect(estimate.usdPerMonth).toBeCloseTo(estimate.lines.reduce((sum, l) => sum + l.usd, 0), 4);
    expect(estimate.usdPerMonth).toBeGreaterThan(0);
  });

  it('prints each unit price in its formula', () => {
    const prices: Record<string, string> = {
      'reconcile compute': '$0.0000133334/GB-s',
      'reconcile requests': '$0.20/1M',
      'worker (churn)': '$0.20/1M',
      'webhook (churn)': '$0.0000133334/GB-s',
      'SQS idle long polls': '$0.40/1M',
      'SQS reconcile': '$0.40/1M',
      'SQS (churn)': '$0.40/1M',
      'API Gateway (churn)': '$1.00/1M',
      'DynamoDB reads': '$0.125/1M',
      'DynamoDB writes (reconcile)': '$0.625/1M',
      'DynamoDB writes (churn)': '$0.625/1M',
      'CloudWatch Logs': '$0.50/GB',
      'CloudWatch custom metrics': '$0.30/metric-month',
      'CloudWatch alarms and dashboard': '$0.10/alarm-month',
    };
    const { lines } = estimateCost(base);
    expect(lines.map((l) => l.item).sort()).toEqual(Object.keys(prices).sort());
    for (const l of lines) expect(l.formula).toContain(prices[l.item]);
  });

  it('scales the idle receives to production\'s wait in the formula, with the sandbox\'s poller count checked against AWS\'s', () => {
    expect(PRODUCTION_WAIT_SECONDS).toBe(20);
    expect(line(base, 'SQS idle long polls').formula).toBe(
      `5 pollers (AWS documents ${AWS_IDLE_POLLERS}) x 1 receives/poller/wait x (60 s / 20 s wait) x ${MONTH_MINUTES} min x $0.40/1M`,
    );
    expect(line(withInputs({ idle: { pollers: 3, receivesPerPollerPerWait: 1 } }), 'SQS idle long polls').formula).toContain(`AWS documents ${AWS_IDLE_POLLERS}, not 3`);
  });

  it('names what it assumes', () => {
    const { assumptions } = estimateCost(base);
    for (const words of ['50 joins', '20 s wait', 'START/END/REPORT', 'free tiers ignored']) expect(assumptions).toContain(words);
  });

  it('counts the alarm metrics and dashboards serverless.yml deploys', () => {
    const text = readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8');
    expect(deployedMonitoring()).toEqual({
      alarms: text.match(/Type: AWS::CloudWatch::Alarm\b/g)?.length,
      dashboards: text.match(/Type: AWS::CloudWatch::Dashboard\b/g)?.length,
    });
    expect(deployedMonitoring().alarms).toBeGreaterThan(0);
  });

  it('uses the memory sizes serverless.yml deploys', () => {
    const sls = load(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8')) as { functions: Record<string, { memorySize?: number }> };
    expect({
      reconcile: sls.functions.reconcile?.memorySize,
      worker: sls.functions.routeWorker?.memorySize,
      webhook: sls.functions.nodeWebhook?.memorySize,
    }).toEqual(MEMORY_MB);
  });
});
