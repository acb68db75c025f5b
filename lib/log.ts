/**
 * Structured logs and metrics behind one small port, `Logger`: one line per applied action, one
 * summary per run, metrics in CloudWatch's embedded metric format. In Lambda it is Powertools
 * (`powertoolsTelemetry`, flushed once per invocation by functions/telemetry.ts, namespace `podroute`,
 * dimensions `cluster` and `function`); `memoryLogger`, `silentLogger` and `jsonLogger` serve tests
 * and the sandbox. Every logger redacts credential fields and a webhook path's token segment.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type MetricUnitName = 'Count' | 'Milliseconds' | 'Percent';

export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
  metric(name: string, value: number, unit?: MetricUnitName, dimensions?: Record<string, string>): void;
}

/** The port's metric units as Powertools names them (CloudWatch's StandardUnit values). */
const POWERTOOLS_UNIT = { Count: MetricUnit.Count, Milliseconds: MetricUnit.Milliseconds, Percent: MetricUnit.Percent } as const;

/** CloudWatch namespace of every podroute metric. */
const METRIC_NAMESPACE = 'podroute';

/** Which handler a metric or line comes from (the `function` dimension). */
export type FunctionName = 'reconcile' | 'route-worker' | 'node-webhook' | 'cloud-events';

export interface Telemetry {
  /** The port the use cases log through. */
  log: Logger;
  /** Powertools instances, for the handler's middy chain (context injection, flush). */
  logger: PowertoolsLogger;
  metrics: Metrics;
}

/**
 * Powertools-backed telemetry for one function of one cluster. The log level comes from the
 * environment (POWERTOOLS_LOG_LEVEL, else LOG_LEVEL, default INFO); `logLevel` overrides it.
 */
export function powertoolsTelemetry(options: { cluster: string; functionName: FunctionName; logLevel?: LogLevel }): Telemetry {
  const logger = new PowertoolsLogger({
    serviceName: 'podroute',
    ...(options.logLevel ? { logLevel: options.logLevel.toUpperCase() as 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' } : {}),
    persistentKeys: { cluster: options.cluster, function: options.functionName },
  });
  const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: 'podroute', logger });
  // Powertools adds a `service` dimension by default; ours are exactly `cluster` and `function`, so
  // alarms and the dashboard can name every dimension of a metric.
  const ours = { cluster: options.cluster, function: options.functionName };
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions(ours);
  const log: Logger = {
    log(level, event, fields = {}) {
      logger[level](event, plainFields(fields));
    },
    metric(name, value, unit = 'Count', dimensions = {}) {
      const powertoolsUnit = POWERTOOLS_UNIT[unit];
      if (Object.keys(dimensions).length === 0) {
        metrics.addMetric(name, powertoolsUnit, value);
        return;
      }
      // Extra dimensions make another metric stream: it is written at once, on its own line.
      const single = metrics.singleMetric();
      single.clearDefaultDimensions();
      single.setDefaultDimensions(ours);
      for (const [key, dimension] of Object.entries(dimensions)) single.addDimension(key, dimension);
      single.addMetric(name, powertoolsUnit, value);
    },
  };
  return { log, logger, metrics };
}

/** The fields as errorReplacer shapes them, the same in every logger. */
function plainFields(fields: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(fields, errorReplacer)) as Record<string, unknown>;
}

interface JsonLoggerOptions {
  sink?: (line: string) => void;
  now?: () => number;
  namespace?: string;
  base?: Record<string, unknown>;
  minLevel?: LogLevel;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Plain JSON lines to a sink (the sandbox's log file); metrics as EMF lines, one per call. */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const now = options.now ?? Date.now;
  const namespace = options.namespace ?? METRIC_NAMESPACE;
  const minLevel = ORDER[options.minLevel ?? 'info'];
  const base = options.base ?? {};
  return {
    log(level, event, fields = {}) {
      if (ORDER[level] < minLevel) return;
      sink(JSON.stringify({ level, event, time: new Date(now()).toISOString(), ...base, ...fields }, errorReplacer));
    },
    metric(name, value, unit = 'Count', dimensions = {}) {
      sink(
        JSON.stringify({
          _aws: {
            Timestamp: now(),
            CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [Object.keys(dimensions)], Metrics: [{ Name: name, Unit: unit }] }],
          },
          ...dimensions,
          [name]: value,
        }),
      );
    },
  };
}

/** A logger that keeps lines in memory, for tests and the sandbox. */
export function memoryLogger(): Logger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const inner = jsonLogger({ sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>), minLevel: 'debug' });
  return { ...inner, lines };
}

/**
 * The logger, `fields` added to every line (a line's own fields win). Per record or request, not
 * Powertools' appendKeys: a batch's records run at once over one logger, and each line must carry
 * its own record's correlation id.
 */
export function withFields(log: Logger, fields: Record<string, unknown>): Logger {
  return {
    log: (level, event, own = {}) => log.log(level, event, { ...fields, ...own }),
    metric: (name, value, unit, dimensions) => log.metric(name, value, unit, dimensions),
  };
}

export const silentLogger: Logger = { log: () => undefined, metric: () => undefined };

/** Field names whose values are credentials, in any case: logged as `[redacted]`. */
const SECRET_KEYS = new Set(['authorization', 'token', 'pathparameters', 'x-podroute-signature', 'cookie', 'cookies', 'secret', 'signingkey', 'kubeconfig']);
/** The webhook's token route (`/webhook/{token}`): the segment after it is a credential. */
const TOKEN_PATH = /(\/webhook\/)[^/?#\s"]+/g;

/**
 * Errors as `{ name, message, cause }`, bigints as text, and credentials redacted: whatever a
 * caller hands the logger (even a whole event by mistake), no token reaches a log line.
 */
function errorReplacer(key: string, value: unknown): unknown {
  if (SECRET_KEYS.has(key.toLowerCase())) return '[redacted]';
  if (typeof value === 'string') return value.replace(TOKEN_PATH, '$1[redacted]');
  if (value instanceof Error) {
    return { name: value.name, message: value.message, ...(value.cause instanceof Error ? { cause: value.cause.message } : {}) };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}
