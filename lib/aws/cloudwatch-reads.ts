/**
 * What `podroute doctor --stack` reads from CloudWatch (CloudWatch API Reference): alarm states by
 * name (DescribeAlarms, at most 100 names a call) and the newest datapoint of a metric with a
 * value above 0 (GetMetricData, `ScanBy: TimestampDescending`, one-minute Sum). Read-only.
 */
import { type CloudWatchClient, DescribeAlarmsCommand, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';

export interface AlarmState {
  name: string;
  state: string;
  reason: string;
}

const NAMES_PER_CALL = 100;

export class CloudWatchReads {
  constructor(private readonly client: CloudWatchClient) {}

  async alarmStates(names: readonly string[]): Promise<AlarmState[]> {
    const out: AlarmState[] = [];
    for (let i = 0; i < names.length; i += NAMES_PER_CALL) {
      let token: string | undefined;
      do {
        const page = await this.client.send(new DescribeAlarmsCommand({ AlarmNames: names.slice(i, i + NAMES_PER_CALL), NextToken: token }));
        for (const alarm of page.MetricAlarms ?? []) out.push({ name: alarm.AlarmName ?? '', state: alarm.StateValue ?? 'INSUFFICIENT_DATA', reason: alarm.StateReason ?? '' });
        token = page.NextToken;
      } while (token);
    }
    return out;
  }

  /** The newest minute in [from, to) whose Sum is above 0, or null. */
  async lastDatapoint(metric: { namespace: string; name: string; dimensions: Record<string, string> }, from: Date, to: Date): Promise<Date | null> {
    const out = await this.client.send(
      new GetMetricDataCommand({
        StartTime: from,
        EndTime: to,
        ScanBy: 'TimestampDescending',
        MaxDatapoints: 100,
        MetricDataQueries: [{
          Id: 'm',
          ReturnData: true,
          MetricStat: { Metric: { Namespace: metric.namespace, MetricName: metric.name, Dimensions: Object.entries(metric.dimensions).map(([Name, Value]) => ({ Name, Value })) }, Period: 60, Stat: 'Sum' },
        }],
      }),
    );
    const result = out.MetricDataResults?.[0];
    const index = (result?.Values ?? []).findIndex((value) => value > 0);
    return index < 0 ? null : (result?.Timestamps?.[index] ?? null);
  }
}
