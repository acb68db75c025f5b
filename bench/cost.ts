/**
 * Monthly AWS cost of podroute for a cluster at steady state, from counts and durations measured in
 * the sandbox. Unit prices are AWS's published on-demand prices for us-east-1 (free tiers ignored);
 * each is written next to the term it prices.
 */
import { round } from './stats.ts';

export interface CostInputs {
  nodes: number;
  /** Wall time of one steady-state reconcile, measured. */
  reconcileMs: number;
  /** DynamoDB Query calls per reconcile, measured (one page per set at this size). */
  queriesPerReconcile: number;
  /** Bytes of lease items the reconcile reads per run (one item per node per set). */
  leaseBytesPerReconcile: number;
  /** Node joins (and as many leaves) a day: churn is not steady state, but every cluster has some. */
  joinsPerDay: number;
  /** Worker invocations, DynamoDB writes and webhook calls one join costs, measured. */
  perJoin: { workerInvocations: number; workerMs: number; webhookMs: number; dynamodbWrites: number };
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
};
/** EC2 API calls (DescribeRouteTables, CreateRoute, ...) carry no charge (https://aws.amazon.com/ec2/pricing/: instances are priced, API requests are not). */
export const EC2_API_CALL_USD = 0;
const MEMORY_GB = { reconcile: 0.5, worker: 0.25, webhook: 0.25 };
/** Lambda's SQS event source keeps about five long-polling connections open (one ReceiveMessage per 20 s each). */
const SQS_POLLERS = 5;

export interface CostEstimate {
  usdPerMonth: number;
  lines: Array<{ item: string; formula: string; usd: number }>;
}

export function estimateCost(input: CostInputs): CostEstimate {
  const reconciles = MONTH_MINUTES; // one a minute
  const joins = input.joinsPerDay * 30;
  const lines: CostEstimate['lines'] = [];
  const add = (item: string, formula: string, usd: number) => lines.push({ item, formula, usd: round(usd, 4) });

  const reconcileGbS = reconciles * (input.reconcileMs / 1000) * MEMORY_GB.reconcile;
  add('reconcile compute', `${reconciles} runs x ${input.reconcileMs} ms x 0.5 GB x $0.0000133334/GB-s`, reconcileGbS * PRICE.lambdaGbSecondArm);
  add('reconcile requests', `${reconciles} x $0.20/1M`, reconciles * PRICE.lambdaRequest);
  const workerRuns = joins * 2 * input.perJoin.workerInvocations;
  add('worker compute (churn)', `${workerRuns} runs x ${input.perJoin.workerMs} ms x 0.25 GB x $0.0000133334/GB-s`, workerRuns * (input.perJoin.workerMs / 1000) * MEMORY_GB.worker * PRICE.lambdaGbSecondArm);
  add('webhook (churn)', `${joins * 2} calls x (${input.perJoin.webhookMs} ms x 0.25 GB x GB-s price + $0.20/1M)`, joins * 2 * ((input.perJoin.webhookMs / 1000) * MEMORY_GB.webhook * PRICE.lambdaGbSecondArm + PRICE.lambdaRequest));
  const polls = SQS_POLLERS * 3 * MONTH_MINUTES;
  add('SQS long polls', `${SQS_POLLERS} pollers x 3/min x ${MONTH_MINUTES} min x $0.40/1M`, polls * PRICE.sqsRequest);
  const readUnits = reconciles * Math.max(input.queriesPerReconcile, Math.ceil(input.leaseBytesPerReconcile / 4096));
  add('DynamoDB reads', `${reconciles} runs x ${Math.ceil(input.leaseBytesPerReconcile / 4096)} RRU (strongly consistent, 4 KB each) x $0.125/1M`, readUnits * PRICE.dynamoRead);
  add('DynamoDB writes (churn)', `${joins * 2} joins+leaves x ${input.perJoin.dynamodbWrites} WRU x $0.625/1M`, joins * 2 * input.perJoin.dynamodbWrites * PRICE.dynamoWrite);
  const logGb = (reconciles * 700) / 1e9;
  add('CloudWatch Logs', `${reconciles} summaries x ~700 B x $0.50/GB`, logGb * PRICE.logsGb);
  return { usdPerMonth: round(lines.reduce((sum, line) => sum + line.usd, 0), 4), lines };
}

