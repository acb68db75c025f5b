/* global module, require */
'use strict';

/**
 * The CloudWatch dashboard of one podroute deployment, as the JSON string that
 * AWS::CloudWatch::Dashboard's DashboardBody takes (CloudWatch API reference, "Dashboard Body
 * Structure and Syntax": `widgets`, each `type: metric` with `properties.metrics` arrays of
 * [namespace, metricName, dimensionName, dimensionValue, ..., {options}] or [{expression}], and a
 * `region`; `type: alarm` with `properties.alarms`, 1 to 100 alarm ARNs).
 *
 * serverless.yml: `DashboardBody: ${file(./infra/serverless/dashboard.cjs)}`. Every name in it
 * is known when packaging (infra/serverless/names.cjs); only the alarm ARNs need the partition and
 * the account, so the body is an `Fn::Sub` of the JSON with `${AWS::Partition}` and `${AWS::AccountId}`.
 * It shows every metric serverless.yml alarms on, and the state of every alarm (`ALARMS`: the
 * alarm names' suffixes); test/infra/serverless-template.test.ts checks both against the template.
 *
 * podroute metrics (namespace `podroute`, dimensions `cluster` and `function`) this dashboard reads,
 * with the function that publishes each (`PODROUTE_METRICS`, also read by the template test):
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file the framework require()s
const { physicalNames } = require('./names.cjs');

const NAMESPACE = 'podroute';

/** metric name -> the `function` dimension values it is published with. */
const PODROUTE_METRICS = {
  NodesReady: ['reconcile'],           // nodes whose NetworkUnavailable is False, each tick
  NodesTotal: ['reconcile'],           // nodes podroute manages, each tick
  NodesBlocked: ['reconcile'],         // nodes NetworkUnavailable longer than BLOCKED_NODE_SECONDS
  RoutesPending: ['reconcile'],        // routes planned but not yet in the route tables
  ReconcileCompleted: ['reconcile'],   // 1 per run that got to a plan: the heartbeat
  DeletionsWithheld: ['reconcile'],    // route deletions the mass-deletion guard held back
  ReconcileRefused: ['reconcile'],     // runs stopped on an empty or unreadable input
  RouteTableHeadroom: ['reconcile'],   // % of ROUTE_QUOTA the fullest table uses (and each table, by RouteTableId)
  RouteTableFull: ['route-worker'],    // CreateRoute answered RouteLimitExceeded
  MessagesRejected: ['route-worker'],  // malformed route messages, acknowledged
  WebhookFailures: ['node-webhook'],   // admissions the webhook failed (it fails open)
  WebhookDenied: ['node-webhook'],     // nodes refused: their pod CIDR claim could not be recorded
  EC2Throttled: ['reconcile', 'route-worker', 'node-webhook'], // EC2 RequestLimitExceeded seen
  AllocationConflicts: ['reconcile', 'node-webhook'], // CIDR allocations lost to a concurrent writer
};

/** The suffixes of serverless.yml's alarm names (`<alarmPrefix>-<suffix>`), for the alarm widget. */
const ALARMS = [
  'reconcile-heartbeat', 'nodes-blocked', 'route-table-full',
  'reconcile-errors', 'reconcile-refused', 'deletions-withheld', 'route-table-headroom',
  'route-worker-errors', 'messages-rejected', 'dlq-messages', 'events-dlq-messages', 'node-webhook-errors', 'webhook-failures',
  'webhook-denied',
];

function dashboardBody({ clusterName, stage, region }) {
  const names = physicalNames(clusterName, stage, region);
  const own = (metric, fn, options = {}) => [NAMESPACE, metric, 'cluster', clusterName, 'function', fn, options];
  const widget = (title, metrics, extra = {}) => ({
    type: 'metric',
    width: 12,
    height: 6,
    properties: { title, region, view: 'timeSeries', stacked: false, period: 60, metrics, ...extra },
  });
  const lambdaFunctions = [names.reconcile, names.routeWorker, names.nodeWebhook];
  const alarmArn = (suffix) => `arn:\${AWS::Partition}:cloudwatch:${region}:\${AWS::AccountId}:alarm:${names.alarmPrefix}-${suffix}`;
  // Each table's share of the quota: the metric with the extra dimension RouteTableId, whose values
  // are known only at run time (CloudWatch search expressions find them; an alarm cannot use one).
  const perTable = `SEARCH('{${NAMESPACE},RouteTableId,cluster,function} MetricName="RouteTableHeadroom" cluster="${clusterName}"', 'Maximum', 300)`;
  const widgets = [
    {
      type: 'alarm',
      width: 24,
      height: 4,
      properties: { title: 'Alarms (page: heartbeat, nodes blocked, table full; the rest open a ticket)', alarms: ALARMS.map(alarmArn), sortBy: 'stateUpdatedTimestamp' },
    },
    widget('Heartbeat: reconcile runs completed vs invoked', [
      own('ReconcileCompleted', 'reconcile', { stat: 'Sum', label: 'completed' }),
      ['AWS/Lambda', 'Invocations', 'FunctionName', names.reconcile, { stat: 'Sum', label: 'invoked' }],
    ], { period: 300 }),
    widget('Nodes ready vs total, and blocked', [
      own('NodesReady', 'reconcile', { stat: 'Minimum', label: 'ready' }),
      own('NodesTotal', 'reconcile', { stat: 'Maximum', label: 'total' }),
      own('NodesBlocked', 'reconcile', { stat: 'Maximum', label: 'blocked' }),
    ]),
    widget('Routes pending', [own('RoutesPending', 'reconcile', { stat: 'Maximum', label: 'pending' })]),
    widget('Work queue: depth and age of the oldest message', [
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', names.queue, { stat: 'Maximum', label: 'visible' }],
      ['AWS/SQS', 'ApproximateAgeOfOldestMessage', 'QueueName', names.queue, { stat: 'Maximum', label: 'oldest (s)', yAxis: 'right' }],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', names.deadLetterQueue, { stat: 'Maximum', label: 'DLQ visible' }],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', names.eventsDeadLetterQueue, { stat: 'Maximum', label: 'events DLQ visible' }],
    ]),
    widget('Function errors', lambdaFunctions.map((fn) =>
      ['AWS/Lambda', 'Errors', 'FunctionName', fn, { stat: 'Sum', label: fn }])),
    widget('Reconcile held back: deletions withheld, refused runs', [
      own('DeletionsWithheld', 'reconcile', { stat: 'Sum', label: 'deletions withheld' }),
      own('ReconcileRefused', 'reconcile', { stat: 'Sum', label: 'refused runs' }),
    ], { period: 300 }),
    widget('Route tables: % of the routes-per-table quota used, and full tables', [
      own('RouteTableHeadroom', 'reconcile', { stat: 'Maximum', label: 'fullest table (%)' }),
      [{ expression: perTable, id: 'tables', label: '' }],
      own('RouteTableFull', 'route-worker', { stat: 'Sum', label: 'RouteLimitExceeded', yAxis: 'right' }),
    ], { period: 300 }),
    widget('Worker and webhook failures', [
      own('MessagesRejected', 'route-worker', { stat: 'Sum', label: 'messages rejected' }),
      own('WebhookFailures', 'node-webhook', { stat: 'Sum', label: 'webhook failures' }),
      own('WebhookDenied', 'node-webhook', { stat: 'Sum', label: 'nodes denied' }),
    ], { period: 300 }),
    widget('Throttles', [
      ...PODROUTE_METRICS.EC2Throttled.map((fn) => own('EC2Throttled', fn, { stat: 'Sum', label: `EC2 ${fn}` })),
      ...lambdaFunctions.map((fn) =>
        ['AWS/Lambda', 'Throttles', 'FunctionName', fn, { stat: 'Sum', label: `Lambda ${fn}` }]),
    ]),
    widget('Allocation conflicts', PODROUTE_METRICS.AllocationConflicts.map((fn) =>
      own('AllocationConflicts', fn, { stat: 'Sum', label: fn }))),
    widget('Webhook latency', [
      ['AWS/Lambda', 'Duration', 'FunctionName', names.nodeWebhook, { stat: 'p50', label: 'p50' }],
      ['AWS/Lambda', 'Duration', 'FunctionName', names.nodeWebhook, { stat: 'p99', label: 'p99' }],
    ]),
  ];
  return { 'Fn::Sub': JSON.stringify({ widgets }) };
}

/** Serverless Framework file source: `${file(./infra/serverless/dashboard.cjs)}`. */
module.exports = async ({ resolveVariable }) => dashboardBody({
  clusterName: await resolveVariable('param:clusterName'),
  stage: await resolveVariable('sls:stage'),
  region: await resolveVariable('self:provider.region'),
});
module.exports.dashboardBody = dashboardBody;
module.exports.PODROUTE_METRICS = PODROUTE_METRICS;
module.exports.ALARMS = ALARMS;
module.exports.NAMESPACE = NAMESPACE;
