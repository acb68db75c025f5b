/**
 * A local endpoint of an AWS Query protocol service (IAM, CloudFormation): POST / with a
 * form-encoded body carrying `Action` and `Version`, a SigV4 `Authorization` header, XML answers
 * `<ActionResponse xmlns=...><ActionResult>...</ActionResult><ResponseMetadata>` and errors as
 * `<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>` (AWS
 * Query protocol, as the Smithy awsQuery specification describes it). Test infrastructure.
 */
import http from 'node:http';
import { listenLocal } from '../listen.ts';
import { escapeXml } from '../ec2/xml.ts';

export class QueryError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** An action: the request's form parameters in, the inner XML of `<ActionResult>` out, or a QueryError. */
export type QueryAction = (params: URLSearchParams) => string;

export interface QueryService {
  /** The API version the SDK sends (`Version`); another one is refused. */
  version: string;
  /** The response namespace. */
  namespace: string;
  actions: Readonly<Record<string, QueryAction>>;
}

export const xml = (name: string, value: string | number | boolean): string => `<${name}>${escapeXml(String(value))}</${name}>`;

/** `Name.member.N` (the Query protocol's list encoding), in order, from 1 up to the first gap. */
export function members(params: URLSearchParams, name: string): string[] {
  const values: string[] = [];
  for (let i = 1; params.has(`${name}.member.${i}`); i += 1) values.push(params.get(`${name}.member.${i}`) ?? '');
  return values;
}

export function requiredParam(params: URLSearchParams, name: string): string {
  const value = params.get(name);
  if (value === null || value === '') throw new QueryError('ValidationError', `1 validation error detected: Value null at '${name}' failed to satisfy constraint: Member must not be null`);
  return value;
}

export async function startQueryServer(service: QueryService): Promise<{ url: string; calls: () => string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  let requests = 0;
  const answer = (req: http.IncomingMessage, body: string): { status: number; body: string } => {
    requests += 1;
    const requestId = `00000000-0000-4000-9000-${requests.toString(16).padStart(12, '0')}`;
    const failure = (error: QueryError) => ({
      status: error.status,
      body: `<ErrorResponse xmlns="${service.namespace}"><Error><Type>Sender</Type>${xml('Code', error.code)}${xml('Message', error.message)}</Error>${xml('RequestId', requestId)}</ErrorResponse>`,
    });
    if (req.method !== 'POST') return failure(new QueryError('InvalidAction', 'POST only'));
    if (!/^AWS4-HMAC-SHA256 Credential=\S+/.test(req.headers.authorization ?? '')) return failure(new QueryError('MissingAuthenticationToken', 'Request is missing Authentication Token', 403));
    const params = new URLSearchParams(body);
    const action = params.get('Action') ?? '';
    const handler = Object.hasOwn(service.actions, action) ? service.actions[action] : undefined;
    if (!handler) return failure(new QueryError('InvalidAction', `Could not find operation ${action || '(none)'}`));
    if (params.get('Version') !== service.version) return failure(new QueryError('InvalidParameterValue', `Version ${params.get('Version') ?? '(none)'} is not ${service.version}`));
    seen.push(action);
    try {
      const result = handler(params);
      return {
        status: 200,
        body: `<${action}Response xmlns="${service.namespace}"><${action}Result>${result}</${action}Result><ResponseMetadata>${xml('RequestId', requestId)}</ResponseMetadata></${action}Response>`,
      };
    } catch (error) {
      if (error instanceof QueryError) return failure(error);
      return failure(new QueryError('InternalFailure', error instanceof Error ? error.message : String(error), 500));
    }
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = answer(req, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(reply.status, { 'content-type': 'text/xml' });
      res.end(reply.body);
    });
  });
  const { port, close } = await listenLocal(server);
  return { url: `http://127.0.0.1:${port}`, calls: () => [...seen], close };
}
