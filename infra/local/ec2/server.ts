/**
 * A local EC2 Query API endpoint for tests and the sandbox: node:http, form-encoded requests,
 * XML answers in the 2016-11-15 namespace, EC2's error envelope, per-action token-bucket
 * throttling, a route quota per table, optional latency and injected faults.
 *
 *   const ec2 = await startEc2Emulator();
 *   const client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials });
 */
import http from 'node:http';
import { listenLocal } from '../listen.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { ACTIONS as CORE_ACTIONS } from './actions.ts';
import { SUBNET_ACTIONS } from './subnet-actions.ts';
import { Ec2ApiError, Ec2State } from './state.ts';
import { render } from './xml.ts';
import { TokenBuckets } from './throttle.ts';
import type { ThrottleOptions } from './throttle.ts';
import type { RouteTargetFields } from './records.ts';
import { ROUTE_WRITE_ACTIONS, callerOf, instanceStateEvent, routeWriteEvent } from './cloud-events.ts';
import { Ec2Permissions } from './permissions.ts';

const ACTIONS = { ...CORE_ACTIONS, ...SUBNET_ACTIONS };

export const EC2_NAMESPACE = 'http://ec2.amazonaws.com/doc/2016-11-15/';

export type FaultKind = 'InternalError' | 'RequestLimitExceeded' | 'ServiceUnavailable';

export interface Ec2EmulatorOptions {
  /** Routes per table (CreateRoute-made, the local route not counted). Default 50 (AWS's default); at most MAX_ROUTE_LIMIT. */
  routeLimit?: number;
  /** EC2's request-rate buckets; `false` turns throttling off. Default: mutating 50 + 5/s, others 100 + 20/s. */
  throttle?: false | ThrottleOptions;
  /** Clock in milliseconds for buckets and timestamps. Default `Date.now`. */
  now?: () => number;
  /** Delay before each answer, in milliseconds. */
  latencyMs?: number;
  /** Fails a share of the calls that passed throttling with one of the given errors. */
  faults?: { share: number; kinds: FaultKind[]; random?: () => number };
  /** Port to listen on (127.0.0.1); default 0, any free port. */
  port?: number;
  /**
   * For this many ms (on `now`) after a launch, the instance and its interfaces answer NotFound to
   * Describe*, Modify*, CreateRoute and ReplaceRoute, as EC2's eventual consistency allows (EC2
   * Developer Guide, "Eventual consistency in the Amazon EC2 API"). Default 0: visible at once.
   */
  notFoundAfterLaunchMs?: number;
  /**
   * Which target fields DescribeRouteTables shows for a route to an attached interface: `both`
   * (default, as real EC2 is observed to answer) or `as-created` (only the field the route was made
   * with). records.ts, RouteTargetFields, names the sources.
   */
  routeTargetFields?: RouteTargetFields;
  /**
   * Receives the EventBridge events EC2 and CloudTrail would send (./cloud-events.ts): an instance's
   * state changes, and every route write that reached an action (the caller from its access key id).
   */
  onCloudEvent?: (event: Record<string, unknown>) => void;
}

export class Ec2EmulatorStats {
  /** Requests received per action, including throttled and failed ones. */
  calls: Record<string, number> = {};
  /** Requests refused with RequestLimitExceeded by the token buckets. */
  throttled = 0;
  /** Faults injected, in total and per kind. */
  faults = 0;
  faultsByKind: Partial<Record<FaultKind, number>> = {};

  count(action: string): number {
    return this.calls[action] ?? 0;
  }

  reset(): void {
    this.calls = {};
    this.throttled = 0;
    this.faults = 0;
    this.faultsByKind = {};
  }
}

export interface Ec2Emulator {
  url: string;
  port: number;
  state: Ec2State;
  stats: Ec2EmulatorStats;
  /** The caller's permissions; a request with DryRun=true is answered here (./permissions.ts). */
  permissions: Ec2Permissions;
  close(): Promise<void>;
}

const FAULT_STATUS: Record<FaultKind, number> = { InternalError: 500, RequestLimitExceeded: 503, ServiceUnavailable: 503 };
const FAULT_MESSAGE: Record<FaultKind, string> = {
  InternalError: 'An internal error has occurred.',
  RequestLimitExceeded: 'Request limit exceeded.',
  ServiceUnavailable: 'The request has failed due to a temporary failure of the server.',
};

/** The emulator's ceiling for routes per table (AWS's own adjustable maximum is 1,000). */
export const MAX_ROUTE_LIMIT = 100_000;

export async function startEc2Emulator(options: Ec2EmulatorOptions = {}): Promise<Ec2Emulator> {
  const routeLimit = options.routeLimit ?? 50;
  // AWS: 50 routes a table by default, adjustable to 1,000. Larger values exist here only so that
  // benchmarks can probe how reconcile scales past what one VPC table can hold.
  if (!Number.isInteger(routeLimit) || routeLimit < 1 || routeLimit > MAX_ROUTE_LIMIT) {
    throw new RangeError(`routeLimit ${routeLimit}: want an integer from 1 to ${MAX_ROUTE_LIMIT}`);
  }
  const faults = options.faults;
  if (faults && (!(faults.share >= 0 && faults.share <= 1) || faults.kinds.length === 0)) {
    throw new RangeError('faults: share must be within 0..1 and kinds must not be empty');
  }
  const notFoundAfterLaunchMs = options.notFoundAfterLaunchMs ?? 0;
  if (!Number.isFinite(notFoundAfterLaunchMs) || notFoundAfterLaunchMs < 0) {
    throw new RangeError(`notFoundAfterLaunchMs ${notFoundAfterLaunchMs}: want a number of milliseconds >= 0`);
  }
  const now = options.now ?? Date.now;
  const random = faults?.random ?? Math.random;
  const state = new Ec2State(routeLimit, now);
  state.notFoundAfterLaunchMs = notFoundAfterLaunchMs;
  state.routeTargetFields = options.routeTargetFields ?? 'both';
  const onCloudEvent = options.onCloudEvent;
  if (onCloudEvent) state.onInstanceState = (instanceId, instanceState) => onCloudEvent(instanceStateEvent(instanceId, instanceState, now()));
  const stats = new Ec2EmulatorStats();
  const permissions = new Ec2Permissions();
  const buckets = options.throttle === false ? null : new TokenBuckets(options.throttle ?? {}, now);
  let requestCounter = 0;

  const handle = async (req: http.IncomingMessage, body: string): Promise<{ status: number; xml: string; requestId: string }> => {
    requestCounter += 1;
    const requestId = `00000000-0000-4000-8000-${requestCounter.toString(16).padStart(12, '0')}`;
    const fail = (error: Ec2ApiError) => ({ status: error.status, xml: errorXml(error, requestId), requestId });
    const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
    const params = new Map<string, string>(req.method === 'POST' ? new URLSearchParams(body) : query);
    const action = params.get('Action') ?? '';
    if (!/^AWS4-HMAC-SHA256 Credential=\S+/.test(req.headers.authorization ?? '')) {
      return fail(new Ec2ApiError('AuthFailure', 'AWS was not able to validate the provided access credentials', 401));
    }
    const handler = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
    if (!handler) {
      return fail(new Ec2ApiError('InvalidAction', `The action ${action || '(none)'} is not valid for this web service.`));
    }
    stats.calls[action] = stats.count(action) + 1;
    if (buckets && !buckets.take(action)) {
      stats.throttled += 1;
      return fail(new Ec2ApiError('RequestLimitExceeded', FAULT_MESSAGE.RequestLimitExceeded, 503));
    }
    if (faults && faults.share > 0 && random() < faults.share) {
      const kind = faults.kinds[Math.min(faults.kinds.length - 1, Math.floor(random() * faults.kinds.length))] ?? 'InternalError';
      stats.faults += 1;
      stats.faultsByKind[kind] = (stats.faultsByKind[kind] ?? 0) + 1;
      return fail(new Ec2ApiError(kind, FAULT_MESSAGE[kind], FAULT_STATUS[kind]));
    }
    const trail = (error?: Ec2ApiError) => {
      if (!onCloudEvent || !ROUTE_WRITE_ACTIONS.includes(action)) return;
      const accessKeyId = /Credential=([^/,\s]+)/.exec(req.headers.authorization ?? '')?.[1] ?? 'unknown';
      onCloudEvent(routeWriteEvent({ action, params, caller: callerOf(accessKeyId), requestId, nowMs: now(), ...(error ? { error: { code: error.code, message: error.message } } : {}) }));
    };
    try {
      const refusal = permissions.refusal(action, params, state);
      if (refusal) return fail(refusal);
      const inner = render(handler(params, state));
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_NAMESPACE}"><requestId>${requestId}</requestId>${inner}</${action}Response>`;
      trail();
      return { status: 200, xml, requestId };
    } catch (error) {
      const apiError = error instanceof Ec2ApiError ? error : new Ec2ApiError('InternalError', `emulator failure: ${error instanceof Error ? error.message : String(error)}`, 500);
      trail(apiError);
      return fail(apiError);
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const answer = await handle(req, Buffer.concat(chunks).toString('utf8'));
        if (options.latencyMs !== undefined && options.latencyMs > 0) await sleep(options.latencyMs);
        res.writeHead(answer.status, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': answer.requestId });
        res.end(answer.xml);
      })();
    });
  });
  const listening = await listenLocal(server, options.port ?? 0);
  const port = listening.port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    state,
    stats,
    permissions,
    close: listening.close,
  };
}

function errorXml(error: Ec2ApiError, requestId: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Response><Errors><Error><Code>${escape(error.code)}</Code><Message>${escape(error.message)}</Message></Error></Errors>` +
    `<RequestID>${requestId}</RequestID></Response>`
  );
}

function escape(text: string): string {
  return render(text);
}
