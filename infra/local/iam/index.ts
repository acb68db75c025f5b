/**
 * A local IAM endpoint with the one read `podroute doctor` makes: SimulatePrincipalPolicy (IAM API
 * Reference), over the Query protocol (../aws-query/server.ts), for roles a test defines. A role
 * holds Allow statements (actions, a resource pattern with `*` and `?`, optionally the condition
 * `StringLike aws:ResourceTag/<key>: *` of serverless.yml's cluster-tag statements); anything no
 * statement allows is `implicitDeny`. As IAM documents: `PolicySourceArn` and `ActionNames` are
 * required; an unknown role is `NoSuchEntity` (HTTP 404); a condition key the request does not
 * give is listed in `MissingContextValues` and does not match; results come in pages of `MaxItems`
 * (default 100) with `IsTruncated` and `Marker`. Test infrastructure.
 */
import { ACCOUNT_ID } from '../ec2/records.ts';
import { QueryError, members, requiredParam, startQueryServer, xml } from '../aws-query/server.ts';

export interface IamAllow {
  actions: string[];
  /** Resource ARN pattern; default `*`. */
  resource?: string;
  /** The statement's condition: the resource carries this tag key (any value). */
  resourceTag?: string;
}

export interface IamState {
  /** Defines (or redefines) a role; returns its ARN. */
  putRole(name: string, allows: IamAllow[]): string;
  /** The caller may not simulate (AccessDenied, HTTP 403). */
  denySimulation(): void;
  clear(): void;
}

export interface IamEmulator {
  url: string;
  state: IamState;
  calls(): string[];
  close(): Promise<void>;
}

const NAMESPACE = 'https://iam.amazonaws.com/doc/2010-05-08/';

const pattern = (glob: string): RegExp => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);

/** `ContextEntries.member.N.ContextKeyName` → its values. */
function contextOf(params: URLSearchParams): Map<string, string[]> {
  const context = new Map<string, string[]>();
  for (let i = 1; params.has(`ContextEntries.member.${i}.ContextKeyName`); i += 1) {
    const key = params.get(`ContextEntries.member.${i}.ContextKeyName`) ?? '';
    const type = params.get(`ContextEntries.member.${i}.ContextKeyType`);
    if (type === null) throw new QueryError('InvalidInput', `ContextEntries.member.${i}.ContextKeyType is required`);
    context.set(key.toLowerCase(), members(params, `ContextEntries.member.${i}.ContextKeyValues`));
  }
  return context;
}

function evaluate(allows: IamAllow[], action: string, resource: string, context: Map<string, string[]>): { decision: string; missing: string[] } {
  const missing: string[] = [];
  for (const allow of allows) {
    if (!allow.actions.some((a) => pattern(a.toLowerCase()).test(action.toLowerCase()))) continue;
    if (!pattern(allow.resource ?? '*').test(resource)) continue;
    if (allow.resourceTag === undefined) return { decision: 'allowed', missing: [] };
    const key = `aws:ResourceTag/${allow.resourceTag}`;
    if ((context.get(key.toLowerCase()) ?? []).length > 0) return { decision: 'allowed', missing: [] };
    if (!context.has(key.toLowerCase())) missing.push(key);
  }
  return { decision: 'implicitDeny', missing };
}

export async function startIamEmulator(): Promise<IamEmulator> {
  const roles = new Map<string, IamAllow[]>();
  let simulationDenied = false;
  const simulatePrincipalPolicy = (params: URLSearchParams): string => {
    if (simulationDenied) throw new QueryError('AccessDenied', 'User is not authorized to perform: iam:SimulatePrincipalPolicy', 403);
    const source = requiredParam(params, 'PolicySourceArn');
    const allows = roles.get(source);
    if (!allows) throw new QueryError('NoSuchEntity', `The role with name ${source.split('/').pop() ?? source} cannot be found.`, 404);
    const actions = members(params, 'ActionNames');
    if (actions.length === 0) throw new QueryError('ValidationError', "Value null at 'actionNames' failed to satisfy constraint: Member must not be null");
    const resources = members(params, 'ResourceArns');
    const context = contextOf(params);
    const all = actions.flatMap((action) => (resources.length > 0 ? resources : ['*']).map((resource) => ({ action, resource, ...evaluate(allows, action, resource, context) })));
    const maxItems = Number(params.get('MaxItems') ?? '100');
    const start = Number(params.get('Marker') ?? '0');
    if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > 1000 || !Number.isInteger(start) || start < 0) throw new QueryError('InvalidInput', 'MaxItems or Marker is invalid');
    const page = all.slice(start, start + maxItems);
    const truncated = start + maxItems < all.length;
    const results = page.map((r) =>
      `<member>${xml('EvalActionName', r.action)}${xml('EvalResourceName', r.resource)}${xml('EvalDecision', r.decision)}<MatchedStatements/>` +
      `<MissingContextValues>${r.missing.map((m) => xml('member', m)).join('')}</MissingContextValues></member>`,
    );
    return `<EvaluationResults>${results.join('')}</EvaluationResults>${xml('IsTruncated', truncated)}${truncated ? xml('Marker', String(start + maxItems)) : ''}`;
  };
  const server = await startQueryServer({ version: '2010-05-08', namespace: NAMESPACE, actions: { SimulatePrincipalPolicy: simulatePrincipalPolicy } });
  return {
    url: server.url,
    calls: server.calls,
    close: server.close,
    state: {
      putRole: (name, allows) => {
        const arn = `arn:aws:iam::${ACCOUNT_ID}:role/${name}`;
        roles.set(arn, allows);
        return arn;
      },
      denySimulation: () => void (simulationDenied = true),
      clear: () => {
        roles.clear();
        simulationDenied = false;
      },
    },
  };
}
