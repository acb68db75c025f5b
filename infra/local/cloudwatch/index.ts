/**
 * A local CloudWatch endpoint with the two reads `podroute doctor --stack` makes, over the AWS JSON
 * 1.0 protocol the SDK speaks to it (POST /, `X-Amz-Target: GraniteServiceVersion20100801.<Action>`,
 * timestamps as epoch seconds): DescribeAlarms by `AlarmNames` (at most 100; CloudWatch API
 * Reference) answering `MetricAlarms` with `StateValue`, `StateReason` and
 * `StateUpdatedTimestamp`; GetMetricData for `MetricStat` queries, answering each query's
 * `Timestamps` and `Values` newest first under `ScanBy: TimestampDescending`, within
 * [StartTime, EndTime). Test infrastructure.
 */
import http from 'node:http';
import { listenLocal } from '../listen.ts';

const TARGET = 'GraniteServiceVersion20100801.';

export interface CloudWatchEmulator {
  url: string;
  setAlarm(name: string, state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA', reason?: string): void;
  /** A datapoint of a metric, its dimensions as `name=value` joined by `,` in the order given. */
  putDatapoint(namespace: string, metric: string, dimensions: Record<string, string>, atMs: number, value: number): void;
  close(): Promise<void>;
}

type Reply = { status: number; body: unknown };
const error = (type: string, message: string): Reply => ({ status: 400, body: { __type: type, message } });
const key = (namespace: string, metric: string, dimensions: Array<{ Name?: string; Value?: string }>): string =>
  `${namespace}|${metric}|${[...dimensions].map((d) => `${d.Name}=${d.Value}`).sort().join(',')}`;

export async function startCloudWatchEmulator(): Promise<CloudWatchEmulator> {
  const alarms = new Map<string, { state: string; reason: string; since: number }>();
  const data = new Map<string, Array<{ at: number; value: number }>>();
  const answer = (target: string, raw: string): Reply => {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(raw || '{}') as Record<string, unknown>;
    } catch {
      return error('SerializationException', 'the request body is not JSON');
    }
    if (target === `${TARGET}DescribeAlarms`) {
      const names = Array.isArray(input.AlarmNames) ? (input.AlarmNames as string[]) : [];
      if (names.length > 100) return error('InvalidParameterValue', 'AlarmNames: at most 100');
      const found = names.flatMap((name) => {
        const alarm = alarms.get(name);
        return alarm ? [{ AlarmName: name, StateValue: alarm.state, StateReason: alarm.reason, StateUpdatedTimestamp: alarm.since / 1000 }] : [];
      });
      return { status: 200, body: { MetricAlarms: found, CompositeAlarms: [] } };
    }
    if (target === `${TARGET}GetMetricData`) {
      const start = Number(input.StartTime) * 1000;
      const end = Number(input.EndTime) * 1000;
      if (!Number.isFinite(start) || !Number.isFinite(end) || start >= end) return error('InvalidParameterValue', 'StartTime must be before EndTime');
      const queries = Array.isArray(input.MetricDataQueries) ? (input.MetricDataQueries as Array<{ Id?: string; MetricStat?: { Metric?: { Namespace?: string; MetricName?: string; Dimensions?: Array<{ Name?: string; Value?: string }> } } }>) : [];
      const results = queries.map((q) => {
        const metric = q.MetricStat?.Metric;
        const points = (data.get(key(metric?.Namespace ?? '', metric?.MetricName ?? '', metric?.Dimensions ?? [])) ?? []).filter((p) => p.at >= start && p.at < end);
        const ordered = [...points].sort((a, b) => (input.ScanBy === 'TimestampAscending' ? a.at - b.at : b.at - a.at));
        return { Id: q.Id, Label: metric?.MetricName, StatusCode: 'Complete', Timestamps: ordered.map((p) => p.at / 1000), Values: ordered.map((p) => p.value) };
      });
      return { status: 200, body: { MetricDataResults: results, Messages: [] } };
    }
    return error('UnknownOperationException', `unknown operation ${JSON.stringify(target)}`);
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const reply = req.method === 'POST' ? answer(String(req.headers['x-amz-target'] ?? ''), raw) : error('UnknownOperationException', 'POST only');
      res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(reply.body));
    });
  });
  const { port, close } = await listenLocal(server);
  return {
    url: `http://127.0.0.1:${port}`,
    setAlarm: (name, state, reason = '') => void alarms.set(name, { state, reason, since: Date.now() }),
    putDatapoint: (namespace, metric, dimensions, atMs, value) => {
      const k = key(namespace, metric, Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value })));
      data.set(k, [...(data.get(k) ?? []), { at: atMs, value }]);
    },
    close,
  };
}
