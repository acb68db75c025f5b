/**
 * A local Service Quotas endpoint for tests: the two reads `podroute doctor` makes, over the AWS
 * JSON 1.1 protocol (POST /, `Content-Type: application/x-amz-json-1.1`, `X-Amz-Target:
 * ServiceQuotasV20190624.<Action>`; Service Quotas API Reference, GetServiceQuota and
 * GetAWSDefaultServiceQuota). Each answers `{ Quota: { ServiceCode, QuotaCode, QuotaName, Value,
 * Unit, Adjustable, GlobalQuota } }` for a quota set in `state`; one not set is
 * NoSuchResourceException (the API Reference's error for a quota it does not retrieve). A test
 * may refuse a target with AccessDeniedException. Errors are HTTP 400 with `__type` and `message`.
 * Test infrastructure.
 */
import http from 'node:http';
import { listenLocal } from '../listen.ts';

const TARGET_PREFIX = 'ServiceQuotasV20190624.';
const ACTIONS = ['GetServiceQuota', 'GetAWSDefaultServiceQuota'] as const;
type Action = (typeof ACTIONS)[number];

interface QuotaValue {
  name: string;
  value: number;
}

export interface ServiceQuotasState {
  /** The quota's applied value (GetServiceQuota). */
  setApplied(serviceCode: string, quotaCode: string, quota: QuotaValue): void;
  /** The quota's AWS default (GetAWSDefaultServiceQuota). */
  setDefault(serviceCode: string, quotaCode: string, quota: QuotaValue): void;
  /** Answers AccessDeniedException to an action, as for a caller without `servicequotas:<Action>`. */
  deny(action: Action): void;
  /** Calls answered so far, as `<Action> <ServiceCode>/<QuotaCode>`. */
  calls(): string[];
  /** Forgets every quota and refusal. */
  clear(): void;
}

export interface ServiceQuotasEmulator {
  url: string;
  state: ServiceQuotasState;
  close(): Promise<void>;
}

type Reply = { status: number; body: unknown };

const error = (type: string, message: string): Reply => ({ status: 400, body: { __type: type, message } });

export async function startServiceQuotasEmulator(): Promise<ServiceQuotasEmulator> {
  const tables: Record<Action, Map<string, QuotaValue>> = { GetServiceQuota: new Map(), GetAWSDefaultServiceQuota: new Map() };
  const denied = new Set<Action>();
  const seen: string[] = [];

  const answer = (target: string, raw: string): Reply => {
    const action = target.startsWith(TARGET_PREFIX) ? (target.slice(TARGET_PREFIX.length) as Action) : undefined;
    if (!action || !ACTIONS.includes(action)) return error('UnknownOperationException', `unknown operation ${JSON.stringify(target)}`);
    let input: { ServiceCode?: unknown; QuotaCode?: unknown };
    try {
      input = JSON.parse(raw || '{}') as typeof input;
    } catch {
      return error('SerializationException', 'the request body is not JSON');
    }
    const { ServiceCode: service, QuotaCode: quota } = input;
    if (typeof service !== 'string' || typeof quota !== 'string') return error('IllegalArgumentException', 'ServiceCode and QuotaCode are required');
    seen.push(`${action} ${service}/${quota}`);
    if (denied.has(action)) return error('AccessDeniedException', `not authorized to perform servicequotas:${action}`);
    const found = tables[action].get(`${service}/${quota}`);
    if (!found) return error('NoSuchResourceException', `the quota ${service}/${quota} does not exist`);
    return {
      status: 200,
      body: { Quota: { ServiceCode: service, ServiceName: service, QuotaCode: quota, QuotaName: found.name, Value: found.value, Unit: 'None', Adjustable: true, GlobalQuota: false } },
    };
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const reply = req.method === 'POST' ? answer(String(req.headers['x-amz-target'] ?? ''), raw) : error('UnknownOperationException', 'POST only');
      res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `sq-${seen.length}` });
      res.end(JSON.stringify(reply.body));
    });
  });
  const { port, close } = await listenLocal(server);
  return {
    url: `http://127.0.0.1:${port}`,
    state: {
      setApplied: (service, quota, value) => void tables.GetServiceQuota.set(`${service}/${quota}`, value),
      setDefault: (service, quota, value) => void tables.GetAWSDefaultServiceQuota.set(`${service}/${quota}`, value),
      deny: (action) => void denied.add(action),
      calls: () => [...seen],
      clear: () => {
        for (const table of Object.values(tables)) table.clear();
        denied.clear();
      },
    },
    close,
  };
}
