/**
 * The permissions policy of each function's role, as standalone IAM policy documents generated
 * from serverless.yml: infra/iam/<function>.json for routes mode (the default params) and
 * infra/iam/prefixes/<function>.json for MODE=prefixes. For a team that creates roles itself, or
 * reviews them before a deploy; test/infra/iam-policies.test.ts checks the files match the template.
 *
 *   node --import tsx infra/scripts/iam-policies.ts      (rewrites infra/iam/; run after editing a role)
 *
 * The stack's conditions are evaluated with the default params (generated secrets, no kubeconfig
 * secret, no KMS key), and what only a deployment knows stays a placeholder in CloudFormation's
 * Fn::Sub syntax: ${AWS::Region}, ${AWS::AccountId}, ${AWS::Partition}, ${ClusterName},
 * ${EksClusterName}, and ${<Resource>.Arn} or ${<Resource>} for a resource of the stack
 * (infra/iam/README.md lists them).
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';

const root = join(import.meta.dirname, '..', '..');

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const objectAt = (value: unknown, what: string): Obj => {
  if (!isObj(value)) throw new Error(`serverless.yml: ${what} is not a mapping`);
  return value;
};

/** The functions and their roles, with the file name each policy gets. */
const FUNCTIONS = [
  { file: 'reconcile', role: 'ReconcileRole' },
  { file: 'route-worker', role: 'RouteWorkerRole' },
  { file: 'node-webhook', role: 'NodeWebhookRole' },
  { file: 'cloud-events', role: 'CloudEventsRole' },
] as const;

export const MODES = ['routes', 'prefixes'] as const;
export type Mode = (typeof MODES)[number];

/** A valid cluster name that the file sources accept, replaced by the placeholder afterwards. */
const CLUSTER_SENTINEL = 'podroute-cluster-name-placeholder';

const require = createRequire(import.meta.url);
const clusterTag = require('../serverless/cluster-tag-condition.cjs') as { clusterTagCondition: (name: string) => unknown };
const fullTag = require('../serverless/route-table-full-tag-condition.cjs') as { routeTableFullTagCondition: (name: string) => unknown };

/** The file sources the roles use, called as the framework would with the cluster name. */
const FILE_SOURCES: Record<string, () => unknown> = {
  './infra/serverless/cluster-tag-condition.cjs': () => clusterTag.clusterTagCondition(CLUSTER_SENTINEL),
  './infra/serverless/route-table-full-tag-condition.cjs': () => fullTag.routeTableFullTagCondition(CLUSTER_SENTINEL),
};

const placeholderOf = (param: string): string => `\${${param.charAt(0).toUpperCase()}${param.slice(1)}}`;

/** Evaluates serverless.yml variables and CloudFormation intrinsics into a policy document's JSON. */
function evaluator(sls: Obj, mode: Mode): (value: unknown) => unknown {
  const resources = objectAt(sls.resources, 'resources');
  const parameters = objectAt(resources.Parameters, 'resources.Parameters');
  const conditions = objectAt(resources.Conditions, 'resources.Conditions');
  const stackResources = objectAt(resources.Resources, 'resources.Resources');
  const params: Obj = { ...objectAt(objectAt(sls.custom, 'custom').paramDefaults, 'custom.paramDefaults'), mode };

  const variables = (text: string): unknown => {
    const file = /^\$\{file\(([^)]+)\)\}$/.exec(text);
    if (file?.[1] !== undefined) {
      const source = FILE_SOURCES[file[1]];
      if (!source) throw new Error(`serverless.yml: no rule for the file source ${file[1]} in a role`);
      return source();
    }
    return text.replace(/\$\{param:([^},]+)[^}]*\}/g, (_whole, param: string) => {
      const value = params[param];
      return value === undefined ? placeholderOf(param) : String(value);
    });
  };

  const ev = (value: unknown): unknown => {
    if (typeof value === 'string') return variables(value);
    if (Array.isArray(value)) return value.map(ev).filter((item) => item !== undefined);
    if (!isObj(value)) return value;
    if ('Ref' in value) {
      const name = String(value.Ref);
      if (name === 'AWS::NoValue') return undefined;
      if (name.startsWith('AWS::')) return `\${${name}}`;
      if (name in parameters) return ev(objectAt(parameters[name], name).Default);
      if (name in stackResources) return `\${${name}}`;
      throw new Error(`serverless.yml: Ref to unknown ${name}`);
    }
    if ('Fn::GetAtt' in value) {
      const [resource, attribute] = value['Fn::GetAtt'] as [string, string];
      return `\${${resource}.${attribute}}`;
    }
    if ('Fn::Sub' in value && typeof value['Fn::Sub'] === 'string') return ev(value['Fn::Sub']);
    if ('Fn::If' in value) {
      const [condition, yes, no] = value['Fn::If'] as [string, unknown, unknown];
      return ev(ev(conditions[condition]) === true ? yes : no);
    }
    if ('Fn::Equals' in value) {
      const [left, right] = value['Fn::Equals'] as [unknown, unknown];
      return ev(left) === ev(right);
    }
    if ('Fn::Not' in value) return ev((value['Fn::Not'] as unknown[])[0]) !== true;
    const keys = Object.keys(value).filter((key) => key.startsWith('Fn::'));
    if (keys.length > 0) throw new Error(`serverless.yml: no rule for ${keys.join(', ')} in a role`);
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, ev(item)]).filter(([, item]) => item !== undefined));
  };
  return ev;
}

/** The policy documents of every function in `mode`, keyed by the file name under infra/iam/. */
export function iamPolicies(serverlessYml: string, mode: Mode): Record<string, string> {
  const sls = objectAt(load(serverlessYml), 'the file');
  const stackResources = objectAt(objectAt(sls.resources, 'resources').Resources, 'resources.Resources');
  const ev = evaluator(sls, mode);
  const out: Record<string, string> = {};
  for (const { file, role } of FUNCTIONS) {
    const policies = objectAt(objectAt(stackResources[role], role).Properties, `${role}.Properties`).Policies;
    if (!Array.isArray(policies) || policies.length !== 1) throw new Error(`serverless.yml: ${role} must have one policy`);
    const document = ev(objectAt(policies[0], `${role} policy`).PolicyDocument);
    const text = JSON.stringify(document, null, 2).replaceAll(CLUSTER_SENTINEL, '${ClusterName}');
    out[`${mode === 'routes' ? '' : `${mode}/`}${file}.json`] = `${text}\n`;
  }
  return out;
}

/** Every generated file (path under infra/iam/ -> text), for both modes. */
export function allIamPolicies(): Record<string, string> {
  const text = readFileSync(join(root, 'serverless.yml'), 'utf8');
  return Object.assign({}, ...MODES.map((mode) => iamPolicies(text, mode))) as Record<string, string>;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  return script !== undefined && realpathSync(fileURLToPath(import.meta.url)) === realpathSync(script);
}

if (isEntryPoint()) {
  for (const [path, text] of Object.entries(allIamPolicies())) {
    const target = join(root, 'infra', 'iam', path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`wrote infra/iam/${path}\n`);
  }
}
