/**
 * serverless.yml's alarms, their two SNS topics and the saved Logs Insights queries, read from the
 * YAML as written (js-yaml resolves its anchors), against the runbook docs/operate/alarms.md: the heartbeat
 * treats missing data as breaching, the noisy signals need M of N datapoints, every alarm goes to
 * exactly one of the two topics, and the runbook's table says what the template does.
 * The packaged dashboard is checked in serverless-template.test.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { type Obj, isObj, obj } from '../support/mapping.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));


const sls = obj(load(readFileSync(`${root}serverless.yml`, 'utf8')), 'serverless.yml');
const resources = obj(obj(sls.resources, 'resources').Resources, 'resources.Resources');
const ofType = (type: string): Array<[string, Obj]> =>
  Object.entries(resources).flatMap(([id, resource]) => (isObj(resource) && resource.Type === type ? [[id, obj(resource.Properties, `${id}.Properties`)]] : []));

const ALARM_NAME = /^\$\{file\(\.\/infra\/serverless\/names\.cjs\):alarmPrefix\}-([a-z-]+)$/;
interface Alarm { id: string; suffix: string; props: Obj }
const alarms: Alarm[] = ofType('AWS::CloudWatch::Alarm').map(([id, props]) => {
  const suffix = ALARM_NAME.exec(String(props.AlarmName))?.[1];
  if (suffix === undefined) throw new Error(`${id}: AlarmName ${String(props.AlarmName)} is not <alarmPrefix>-<suffix>`);
  return { id, suffix, props };
});
const alarm = (suffix: string): Obj => {
  const found = alarms.find((a) => a.suffix === suffix);
  if (!found) throw new Error(`no alarm ${suffix}`);
  return found.props;
};
const topicAction = (severity: 'Page' | 'Ticket') => [{ 'Fn::If': [`Create${severity}Topic`, { Ref: `${severity}Topic` }, { Ref: `${severity}TopicArn` }] }];
const severityOf = (props: Obj): 'page' | 'ticket' | 'none' => {
  const actions = JSON.stringify(props.AlarmActions);
  if (actions === JSON.stringify(topicAction('Page'))) return 'page';
  if (actions === JSON.stringify(topicAction('Ticket'))) return 'ticket';
  return 'none';
};

/** The runbook's table rows: | `suffix` | page or ticket | M of N × P min | why | */
const runbook = readFileSync(`${root}docs/operate/alarms.md`, 'utf8');
const ROW = /^\| `([a-z-]+)` \| (page|ticket) \| (\d+) of (\d+) × (\d+) min \|/;
const rows = runbook.split('\n').flatMap((line) => {
  const match = ROW.exec(line);
  return match ? [{ suffix: match[1], severity: match[2], datapoints: Number(match[3]), periods: Number(match[4]), minutes: Number(match[5]) }] : [];
});

describe('serverless.yml alarms', () => {
  it.each([
    ['dlq-messages', 'DeadLetterQueue'],
    ['events-dlq-messages', 'EventsDeadLetterQueue'],
  ])('tickets on any message in a dead-letter queue: %s watches %s', (suffix, queue) => {
    expect(alarm(suffix)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
    expect(severityOf(alarm(suffix))).toBe('ticket');
  });

  it('pages when reconcile stops: a heartbeat on ReconcileCompleted whose missing data is breaching', () => {
    const heartbeat = alarm('reconcile-heartbeat');
    expect(heartbeat).toMatchObject({
      Namespace: 'podroute',
      MetricName: 'ReconcileCompleted',
      Dimensions: [{ Name: 'cluster', Value: '${param:clusterName}' }, { Name: 'function', Value: 'reconcile' }],
      Statistic: 'Sum',
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
    expect(severityOf(heartbeat)).toBe('page');
    // Every period of the window must be empty: a tick in any of them is a completed run.
    expect(heartbeat.DatapointsToAlarm).toBe(heartbeat.EvaluationPeriods);
    // The one alarm that treats missing data as breaching: podroute's other metrics are events.
    expect(alarms.filter((a) => a.props.TreatMissingData === 'breaching').map((a) => a.suffix)).toEqual(['reconcile-heartbeat']);
  });

  it.each([
    ['reconcile-errors', 'AWS/Lambda', 'Errors'],
    ['node-webhook-errors', 'AWS/Lambda', 'Errors'],
    ['webhook-failures', 'podroute', 'WebhookFailures'],
    ['webhook-denied', 'podroute', 'WebhookDenied'],
    ['deletions-withheld', 'podroute', 'DeletionsWithheld'],
  ])('%s needs M of N datapoints, never a single one', (suffix, namespace, metric) => {
    const props = alarm(suffix);
    expect(props).toMatchObject({ Namespace: namespace, MetricName: metric, TreatMissingData: 'notBreaching' });
    expect(Number(props.DatapointsToAlarm)).toBeGreaterThanOrEqual(2);
    expect(Number(props.EvaluationPeriods)).toBeGreaterThanOrEqual(Number(props.DatapointsToAlarm));
  });

  it('states M of N on every alarm, within CloudWatch bounds', () => {
    expect(alarms.length).toBeGreaterThan(10);
    for (const { suffix, props } of alarms) {
      const m = Number(props.DatapointsToAlarm);
      const n = Number(props.EvaluationPeriods);
      const period = Number(props.Period);
      expect(Number.isInteger(m) && m >= 1 && m <= n, `${suffix}: DatapointsToAlarm ${String(m)} of ${String(n)}`).toBe(true);
      // PutMetricAlarm: EvaluationPeriods x Period at most one day; a period of 60 s or a multiple.
      expect(n * period, suffix).toBeLessThanOrEqual(86_400);
      expect(period % 60, suffix).toBe(0);
    }
  });

  it('alarms at 80% of the routes-per-table quota on the fullest table\'s gauge', () => {
    expect(alarm('route-table-headroom')).toMatchObject({
      Namespace: 'podroute',
      MetricName: 'RouteTableHeadroom',
      Dimensions: [{ Name: 'cluster', Value: '${param:clusterName}' }, { Name: 'function', Value: 'reconcile' }],
      Statistic: 'Maximum',
      Threshold: 80,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('sends every alarm, and its return to OK, to exactly one of two topics, both used', () => {
    for (const { suffix, props } of alarms) {
      expect(severityOf(props), suffix).not.toBe('none');
      expect(props.OKActions, suffix).toEqual(props.AlarmActions);
    }
    expect(new Set(alarms.map((a) => severityOf(a.props)))).toEqual(new Set(['page', 'ticket']));
    const topics = ofType('AWS::SNS::Topic').map(([id]) => [id, obj(resources[id], id).Condition]);
    expect(topics.sort()).toEqual([['PageTopic', 'CreatePageTopic'], ['TicketTopic', 'CreateTicketTopic']]);
    const conditions = obj(obj(sls.resources, 'resources').Conditions, 'Conditions');
    expect(conditions.CreatePageTopic).toEqual({ 'Fn::Equals': [{ Ref: 'PageTopicArn' }, ''] });
    expect(conditions.CreateTicketTopic).toEqual({ 'Fn::Equals': [{ Ref: 'TicketTopicArn' }, ''] });
  });

  it('matches the runbook: one row per alarm, with its severity and M of N, and a section per alarm', () => {
    expect(rows.map((row) => row.suffix).sort()).toEqual(alarms.map((a) => a.suffix).sort());
    for (const row of rows) {
      const props = alarm(row.suffix ?? '');
      expect({ severity: severityOf(props), datapoints: props.DatapointsToAlarm, periods: props.EvaluationPeriods, minutes: Number(props.Period) / 60 }, row.suffix)
        .toEqual({ severity: row.severity, datapoints: row.datapoints, periods: row.periods, minutes: row.minutes });
      expect(runbook, row.suffix).toContain(`### \`${row.suffix ?? ''}\``);
    }
  });
});

describe('serverless.yml saved Logs Insights queries', () => {
  const queries = ofType('AWS::Logs::QueryDefinition');
  const filterOf = (props: Obj): string => {
    const lines = String(props.QueryString).split('\n').filter((line) => /^\|\s*filter /.test(line));
    expect(lines).toHaveLength(1);
    return lines[0] ?? '';
  };

  it('asks "why is node X not ready?" and "what did podroute do to table T?" over the three functions\' logs', () => {
    expect(queries.map(([id]) => id).sort()).toEqual(['NodeNotReadyQuery', 'RouteTableHistoryQuery']);
    for (const [id, props] of queries) {
      expect(props.LogGroupNames, id).toEqual([{ Ref: 'ReconcileLogGroup' }, { Ref: 'RouteWorkerLogGroup' }, { Ref: 'NodeWebhookLogGroup' }]);
      expect(String(props.Name), id).toMatch(/^podroute\/\$\{file\(\.\/infra\/serverless\/names\.cjs\):base\}\//);
    }
    expect(filterOf(obj(resources.NodeNotReadyQuery, 'NodeNotReadyQuery').Properties as Obj)).toMatch(/^\| filter node = "REPLACE-WITH-NODE-NAME"/);
    expect(filterOf(obj(resources.RouteTableHistoryQuery, 'RouteTableHistoryQuery').Properties as Obj)).toMatch(/^\| filter routeTableId = "rtb-REPLACE-WITH-TABLE-ID"$/);
  });
});
