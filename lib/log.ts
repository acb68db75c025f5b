/**
 * Structured logs and metrics as JSON lines: one line per applied action, one summary per run.
 * Metrics use CloudWatch's embedded metric format, so they need no client and no extra call.
 * Never log tokens, kubeconfigs or whole events.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
  metric(name: string, value: number, unit?: 'Count' | 'Milliseconds', dimensions?: Record<string, string>): void;
}

export interface JsonLoggerOptions {
  sink?: (line: string) => void;
  now?: () => number;
  namespace?: string;
  base?: Record<string, unknown>;
  minLevel?: LogLevel;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const now = options.now ?? Date.now;
  const namespace = options.namespace ?? 'podroute';
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

export const silentLogger: Logger = { log: () => undefined, metric: () => undefined };

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, ...(value.cause instanceof Error ? { cause: value.cause.message } : {}) };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}
