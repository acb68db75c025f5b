/* global module, require */
'use strict';

/**
 * The CloudWatch dashboard of one podroute deployment, as the JSON string that
 * AWS::CloudWatch::Dashboard's DashboardBody takes (CloudWatch API reference, "Dashboard Body
 * Structure and Syntax": `widgets`, each `type: metric` with `properties.metrics` arrays of
 * [namespace, metricName, dimensionName, dimensionValue, ..., {options}], and a `region`).
 *
 * serverless.yml: `DashboardBody: ${file(./infra/serverless/dashboard.cjs)}`. Every name in it
 * is known when packaging (infra/serverless/names.cjs), so the body needs no intrinsic function.
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
  RoutesPending: ['reconcile'],        // routes planned but not yet in the route tables
  EC2Throttled: ['reconcile', 'route-worker', 'node-webhook'], // EC2 RequestLimitExceeded seen
  AllocationConflicts: ['reconcile', 'node-webhook'], // CIDR allocations lost to a concurrent writer
};

function dashboardBody({ clusterName, stage, region }) {
  const names = physicalNames(clusterName, stage, region);
  const own = (metric, fn, options = {}) => [NAMESPACE, metric, 'cluster', clusterName, 'function', fn, options];
  const widget = (title, metrics, extra = {}) => ({
    type: 'metric',
    width: 12,
    height: 6,
    properties: { title, region, view: 'timeSeries', stacked: false, period: 60, metrics, ...extra },
  });
  const widgets = [
    widget('Nodes ready vs total', [
      own('NodesReady', 'reconcile', { stat: 'Minimum', label: 'ready' }),
      own('NodesTotal', 'reconcile', { stat: 'Maximum', label: 'total' }),
    ]),
    widget('Routes pending', [own('RoutesPending', 'reconcile', { stat: 'Maximum', label: 'pending' })]),
    widget('Work queue: depth and age of the oldest message', [
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', names.queue, { stat: 'Maximum', label: 'visible' }],
      ['AWS/SQS', 'ApproximateAgeOfOldestMessage', 'QueueName', names.queue, { stat: 'Maximum', label: 'oldest (s)', yAxis: 'right' }],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', names.deadLetterQueue, { stat: 'Maximum', label: 'DLQ visible' }],
    ]),
    widget('Throttles', [
      ...PODROUTE_METRICS.EC2Throttled.map((fn) => own('EC2Throttled', fn, { stat: 'Sum', label: `EC2 ${fn}` })),
      ...[names.reconcile, names.routeWorker, names.nodeWebhook].map((fn) =>
        ['AWS/Lambda', 'Throttles', 'FunctionName', fn, { stat: 'Sum', label: `Lambda ${fn}` }]),
    ]),
    widget('Allocation conflicts', PODROUTE_METRICS.AllocationConflicts.map((fn) =>
      own('AllocationConflicts', fn, { stat: 'Sum', label: fn }))),
    widget('Webhook latency', [
      ['AWS/Lambda', 'Duration', 'FunctionName', names.nodeWebhook, { stat: 'p50', label: 'p50' }],
      ['AWS/Lambda', 'Duration', 'FunctionName', names.nodeWebhook, { stat: 'p99', label: 'p99' }],
    ]),
  ];
  return JSON.stringify({ widgets });
}

/** Serverless Framework file source: `${file(./infra/serverless/dashboard.cjs)}`. */
module.exports = async ({ resolveVariable }) => dashboardBody({
  clusterName: await resolveVariable('param:clusterName'),
  stage: await resolveVariable('sls:stage'),
  region: await resolveVariable('self:provider.region'),
});
module.exports.dashboardBody = dashboardBody;
module.exports.PODROUTE_METRICS = PODROUTE_METRICS;
module.exports.NAMESPACE = NAMESPACE;
