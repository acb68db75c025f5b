/**
 * Reads the real serverless.yml (and infra/kubernetes manifests) and checks the properties a
 * deployment depends on: runtime, queue/DLQ wiring, table safety, least-privilege IAM, config.
 * The file is plain YAML (long-form intrinsics), so js-yaml parses it without CloudFormation tags.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '../../lib/config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): unknown => load(readFileSync(`${root}${path}`, 'utf8'));

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Walks a parsed document; fails the test with the path when a step is missing. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const [index, key] of path.entries()) {
    const next = typeof key === 'number'
      ? (Array.isArray(current) ? current[key] : undefined)
      : (isObj(current) ? current[key] : undefined);
    if (next === undefined) throw new Error(`missing ${path.slice(0, index + 1).join('.')}`);
    current = next;
  }
  return current;
}
const objAt = (value: unknown, ...path: (string | number)[]): Obj => {
  const found = at(value, ...path);
  if (!isObj(found)) throw new Error(`${path.join('.')} is not a mapping`);
  return found;
};
const listAt = (value: unknown, ...path: (string | number)[]): unknown[] => {
  const found = at(value, ...path);
  if (!Array.isArray(found)) throw new Error(`${path.join('.')} is not a list`);
  return found;
};

const sls = objAt(read('serverless.yml'));
const params = { ...objAt(sls, 'params', 'default'), ...objAt(sls, 'params', 'ci') };
const resources = objAt(sls, 'resources', 'Resources');
const cfnParameters = objAt(sls, 'resources', 'Parameters');

/** Resolves `${param:a, param:b}` (the only variable source the file uses besides file/opt/sls). */
function resolveVariables(text: string): unknown {
  const whole = /^\$\{([^}]+)\}$/.exec(text);
  const lookup = (sources: string): unknown => {
    for (const source of sources.split(',').map((part) => part.trim())) {
      const param = /^param:(\w+)$/.exec(source);
      if (param?.[1] !== undefined && params[param[1]] !== undefined) return params[param[1]];
    }
    throw new Error(`unresolved variable \${${sources}}`);
  };
  if (whole?.[1] !== undefined) return lookup(whole[1]);
  return text.replace(/\$\{([^}]+)\}/g, (_, sources: string) => String(lookup(sources)));
}

/** Evaluates the intrinsics the environment uses, with stack parameters at their defaults. */
function evaluate(value: unknown): unknown {
  if (typeof value === 'string') return resolveVariables(value);
  if (!isObj(value)) return value;
  if ('Ref' in value) {
    const name = String(value.Ref);
    if (name === 'AWS::NoValue') return undefined;
    if (name in cfnParameters) return evaluate(at(cfnParameters, name, 'Default'));
    if (name in resources) return `<${name}>`;
    throw new Error(`Ref to unknown ${name}`);
  }
  if ('Fn::If' in value) {
    const [condition, yes, no] = listAt(value, 'Fn::If');
    return evaluate(evaluate(objAt(sls, 'resources', 'Conditions', String(condition))) === true ? yes : no);
  }
  if ('Fn::Equals' in value) {
    const [left, right] = listAt(value, 'Fn::Equals');
    return evaluate(left) === evaluate(right);
  }
  if ('Fn::Not' in value) return evaluate(listAt(value, 'Fn::Not')[0]) !== true;
  if ('Fn::And' in value) return listAt(value, 'Fn::And').every((part) => evaluate(part) === true);
  throw new Error(`cannot evaluate ${JSON.stringify(value)}`);
}

const fn = (name: string): Obj => objAt(sls, 'functions', name);
const num = (value: unknown): number => Number(evaluate(value));

interface Statement { role: string; sid: string; actions: string[]; resource: unknown; condition: unknown }

/** Every statement of every role, with both branches of an `Fn::If` statement. */
function statements(): Statement[] {
  const out: Statement[] = [];
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (!isObj(resource) || resource.Type !== 'AWS::IAM::Role') continue;
    for (const policy of listAt(resource, 'Properties', 'Policies')) {
      const pending = [...listAt(policy, 'PolicyDocument', 'Statement')];
      while (pending.length > 0) {
        const statement = pending.shift();
        if (isObj(statement) && 'Fn::If' in statement) {
          pending.push(...listAt(statement, 'Fn::If').slice(1).filter((branch) => !(isObj(branch) && 'Ref' in branch)));
          continue;
        }
        if (!isObj(statement)) throw new Error(`${logicalId}: a statement is not a mapping`);
        expect(statement, `${logicalId}: no NotAction/NotResource`).not.toHaveProperty('NotAction');
        expect(statement).not.toHaveProperty('NotResource');
        expect(statement.Effect, `${logicalId}: Allow only`).toBe('Allow');
        const rawAction = statement.Action;
        const actions = (isObj(rawAction) && 'Fn::If' in rawAction ? listAt(rawAction, 'Fn::If').slice(1).flat() : [rawAction].flat())
          .map((action) => String(action));
        out.push({ role: logicalId, sid: String(statement.Sid ?? '?'), actions, resource: statement.Resource, condition: statement.Condition });
      }
    }
  }
  return out;
}

const ROUTE_WRITES = ['ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute'];
const EC2_WRITES = [...ROUTE_WRITES, 'ec2:ModifyInstanceAttribute', 'ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses'];
const CLUSTER_TAG_CONDITION = '${file(./infra/serverless/cluster-tag-condition.cjs)}';

type ConditionSource = ((input: { resolveVariable: (name: string) => Promise<unknown> }) => Promise<unknown>) & {
  clusterTagCondition?: unknown;
};
const isConditionSource = (value: unknown): value is ConditionSource => typeof value === 'function';
const helper: unknown = createRequire(import.meta.url)('../../infra/serverless/cluster-tag-condition.cjs');
if (!isConditionSource(helper)) throw new Error('cluster-tag-condition.cjs must export a function');
const clusterTagCondition = helper.clusterTagCondition;
if (typeof clusterTagCondition !== 'function') throw new Error('cluster-tag-condition.cjs must export clusterTagCondition');

describe('serverless.yml: runtime and functions', () => {
  it('runs nodejs22.x on arm64 with source maps, bundled as ESM with the SDK inside', () => {
    expect(at(sls, 'service')).toBe('podroute');
    expect(at(sls, 'provider', 'runtime')).toBe('nodejs22.x');
    expect(at(sls, 'provider', 'architecture')).toBe('arm64');
    expect(at(sls, 'provider', 'environment', 'NODE_OPTIONS')).toBe('--enable-source-maps');
    expect(num(at(sls, 'provider', 'logRetentionInDays'))).toBeGreaterThan(0);
    expect(at(sls, 'package', 'individually')).toBe(true);
    expect(listAt(sls, 'plugins')).toContain('serverless-esbuild');
    const esbuild = objAt(sls, 'custom', 'esbuild');
    expect(esbuild).toMatchObject({ bundle: true, minify: true, sourcemap: true, target: 'node22', platform: 'node', format: 'esm', outputFileExtension: '.mjs', exclude: [] });
    expect(at(esbuild, 'banner', 'js')).toBe("import{createRequire}from'module';const require=createRequire(import.meta.url);");
  });

  it.each([
    ['reconcile', 'functions/reconcile.handler', 512, 60],
    ['routeWorker', 'functions/route-worker.handler', 256, 30],
    ['nodeWebhook', 'functions/node-webhook.handler', 256, 10],
  ])('%s: handler %s, %i MB, %i s, its own IAM role', (name, handler, memory, timeout) => {
    expect(fn(name).handler).toBe(handler);
    expect(fn(name).memorySize).toBe(memory);
    expect(fn(name).timeout).toBe(timeout);
    const role = String(at(fn(name), 'role'));
    expect(objAt(resources, role).Type).toBe('AWS::IAM::Role');
    const roles = ['reconcile', 'routeWorker', 'nodeWebhook'].map((other) => at(fn(other), 'role'));
    expect(new Set(roles).size).toBe(3);
  });

  it('reconcile runs on a schedule, one at a time', () => {
    expect(fn('reconcile').reservedConcurrency).toBe(1);
    const schedule = objAt(fn('reconcile'), 'events', 0, 'schedule');
    expect(listAt(schedule, 'rate').map(evaluate)).toEqual(['rate(1 minute)']);
  });

  it('routeWorker consumes the work queue with partial batch failures and a concurrency cap', () => {
    const sqs = objAt(fn('routeWorker'), 'events', 0, 'sqs');
    expect(at(sqs, 'arn')).toEqual({ 'Fn::GetAtt': ['WorkQueue', 'Arn'] });
    expect(sqs.batchSize).toBe(10);
    expect(sqs.functionResponseType).toBe('ReportBatchItemFailures');
    const cap = evaluate(at(sqs, 'maximumConcurrency'));
    expect(Number.isInteger(cap)).toBe(true);
    expect(cap).toBeGreaterThanOrEqual(2);
    expect(cap).toBe(5);
    expect(num(at(sqs, 'maximumBatchingWindow'))).toBeLessThanOrEqual(5);
  });

  it('nodeWebhook answers POST /webhook/{token} (and /webhook for bearer tokens) on the HTTP API', () => {
    const routes = listAt(fn('nodeWebhook'), 'events').map((event) => objAt(event, 'httpApi'));
    expect(routes.map((route) => `${String(route.method)} ${String(route.path)}`).sort()).toEqual(['POST /webhook', 'POST /webhook/{token}']);
  });
});

describe('serverless.yml: queue, DLQ, table', () => {
  it('gives the work queue a visibility timeout of at least 6x the worker timeout', () => {
    const visibility = num(at(resources, 'WorkQueue', 'Properties', 'VisibilityTimeout'));
    expect(visibility).toBeGreaterThanOrEqual(6 * num(at(fn('routeWorker'), 'timeout')));
  });

  it('redrives to an encrypted DLQ after 3 receives and keeps dead letters 14 days', () => {
    const queue = objAt(resources, 'WorkQueue', 'Properties');
    const redrive = objAt(queue, 'RedrivePolicy');
    expect(redrive.maxReceiveCount).toBe(3);
    const [dlq, attribute] = listAt(redrive, 'deadLetterTargetArn', 'Fn::GetAtt');
    expect(attribute).toBe('Arn');
    expect(at(resources, String(dlq), 'Type')).toBe('AWS::SQS::Queue');
    expect(at(resources, String(dlq), 'Properties', 'MessageRetentionPeriod')).toBe(14 * 24 * 3600);
    expect(num(at(resources, String(dlq), 'Properties', 'MessageRetentionPeriod'))).toBeGreaterThan(num(queue.MessageRetentionPeriod));
    expect(queue.SqsManagedSseEnabled).toBe(true);
    expect(at(resources, String(dlq), 'Properties', 'SqsManagedSseEnabled')).toBe(true);
  });

  it('makes the CIDR table recoverable and hard to delete', () => {
    const table = objAt(resources, 'CidrTable');
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    const props = objAt(table, 'Properties');
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(at(props, 'PointInTimeRecoverySpecification', 'PointInTimeRecoveryEnabled')).toBe(true);
    expect(props.DeletionProtectionEnabled).toBe(true);
    expect(at(props, 'SSESpecification', 'SSEEnabled')).toBe(true);
    expect(props.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }]);
    expect(props.AttributeDefinitions).toEqual([{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }]);
  });

  it('alarms on DLQ depth and on each function\'s errors, with the optional SNS topic', () => {
    const alarms = Object.values(resources).filter((resource) => isObj(resource) && resource.Type === 'AWS::CloudWatch::Alarm').map((alarm) => objAt(alarm, 'Properties'));
    const dlq = alarms.find((alarm) => alarm.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlq).toMatchObject({ Namespace: 'AWS/SQS', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    expect(at(dlq, 'Dimensions', 0, 'Value')).toEqual({ 'Fn::GetAtt': ['DeadLetterQueue', 'QueueName'] });
    const erroring = alarms.filter((alarm) => alarm.MetricName === 'Errors').map((alarm) => at(alarm, 'Dimensions', 0, 'Value'));
    expect(erroring).toEqual(expect.arrayContaining(['Reconcile', 'RouteWorker', 'NodeWebhook'].map((id) => ({ Ref: `${id}LambdaFunction` }))));
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual({ 'Fn::If': ['HasAlarmTopic', [{ Ref: 'AlarmTopicArn' }], { Ref: 'AWS::NoValue' }] });
    }
  });

  it('outputs the webhook URL, queue URL and table name', () => {
    expect(Object.keys(objAt(sls, 'resources', 'Outputs'))).toEqual(expect.arrayContaining(['WebhookUrl', 'QueueUrl', 'CidrTableName']));
  });
});

describe('serverless.yml: least-privilege IAM', () => {
  const all = statements();

  it('has one role per function and statements in each', () => {
    expect(new Set(all.map((statement) => statement.role))).toEqual(new Set(['ReconcileRole', 'RouteWorkerRole', 'NodeWebhookRole']));
  });

  it('never grants a wildcard action', () => {
    for (const { role, sid, actions } of all) {
      for (const action of actions) expect(action, `${role}/${sid}`).toMatch(/^[a-z0-9-]+:[A-Za-z0-9]+$/);
    }
  });

  it('uses Resource "*" only for EC2 Describe actions (no resource-level permissions exist)', () => {
    for (const { role, sid, actions, resource } of all) {
      if (resource === '*' || (Array.isArray(resource) && resource.includes('*'))) {
        for (const action of actions) expect(action, `${role}/${sid}`).toMatch(/^ec2:Describe[A-Za-z]+$/);
      }
    }
  });

  it('gives only the worker EC2 route writes, on route tables, with the cluster-tag condition', () => {
    const writers = all.filter((statement) => statement.actions.some((action) => ROUTE_WRITES.includes(action)));
    expect(writers.map((statement) => statement.role)).toEqual(['RouteWorkerRole']);
    for (const statement of writers) {
      expect(statement.resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:route-table/*' });
    }
    expect(writers.flatMap((statement) => statement.actions).sort()).toEqual([...ROUTE_WRITES].sort());
  });

  it('puts the cluster-tag condition on every EC2 write', () => {
    const writes = all.filter((statement) => statement.actions.some((action) => EC2_WRITES.includes(action)));
    expect(writes.length).toBeGreaterThan(0);
    for (const { role, sid, condition } of writes) expect(condition, `${role}/${sid}`).toBe(CLUSTER_TAG_CONDITION);
  });

  it('resolves the cluster-tag condition to aws:ResourceTag/kubernetes.io/cluster/<clusterName>', async () => {
    const asked: string[] = [];
    const condition = await helper({ resolveVariable: async (name) => { asked.push(name); return evaluate(`\${${name}}`); } });
    expect(asked).toEqual(['param:clusterName']);
    expect(condition).toEqual({ StringLike: { 'aws:ResourceTag/kubernetes.io/cluster/ci-cluster': '*' } });
  });

  it.each([
    ['prod-eu', { StringLike: { 'aws:ResourceTag/kubernetes.io/cluster/prod-eu': '*' } }],
    ['a.b_c-1', { StringLike: { 'aws:ResourceTag/kubernetes.io/cluster/a.b_c-1': '*' } }],
  ])('clusterTagCondition(%s)', (name, expected) => {
    expect(clusterTagCondition(name)).toEqual(expected);
  });

  it.each([[''], ['*'], ['a/b'], ['-lead'], [undefined]])('clusterTagCondition rejects %j', (name) => {
    expect(() => clusterTagCondition(name)).toThrow(/not a cluster name/);
  });

  it.each([
    ['dynamodb:', { 'Fn::GetAtt': ['CidrTable', 'Arn'] }],
    ['sqs:', { 'Fn::GetAtt': ['WorkQueue', 'Arn'] }],
  ])('scopes every %s action to its one resource', (prefix, resource) => {
    const scoped = all.filter((statement) => statement.actions.some((action) => action.startsWith(prefix)));
    expect(scoped.length).toBeGreaterThan(0);
    for (const statement of scoped) expect(statement.resource, `${statement.role}/${statement.sid}`).toEqual(resource);
  });

  it.each([
    // each function's calls, from the code: lib/usecases and functions/
    ['ReconcileRole', ['ec2:DescribeRouteTables', 'ec2:DescribeInstances', 'ec2:DescribeNetworkInterfaces', 'ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:DeleteTags', 'sqs:SendMessage', 'sqs:GetQueueAttributes', 'dynamodb:Query', 'dynamodb:PutItem']],
    ['RouteWorkerRole', ['ec2:DescribeRouteTables', 'ec2:DescribeInstances', 'ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute', 'ec2:ModifyInstanceAttribute', 'ec2:CreateTags', 'ec2:DeleteTags', 'sqs:ChangeMessageVisibility']],
    ['NodeWebhookRole', ['ec2:DescribeRouteTables', 'ec2:DescribeNetworkInterfaces', 'ec2:AssignPrivateIpAddresses', 'sqs:SendMessage', 'dynamodb:PutItem', 'dynamodb:DeleteItem']],
  ])('%s may make every call its code makes', (role, needed) => {
    const granted = new Set(all.filter((statement) => statement.role === role).flatMap((statement) => statement.actions));
    for (const action of needed) expect(granted.has(action), `${role} lacks ${action}`).toBe(true);
  });

  it('allows tag writes only on cluster route tables, only for the route-table-full key, and never a keyless DeleteTags', async () => {
    const tagWrites = all.filter((statement) => statement.actions.some((action) => action === 'ec2:CreateTags' || action === 'ec2:DeleteTags'));
    expect(tagWrites.map((statement) => statement.role).sort()).toEqual(['ReconcileRole', 'RouteWorkerRole']);
    for (const statement of tagWrites) {
      expect(statement.condition).toBe('${file(./infra/serverless/route-table-full-tag-condition.cjs)}');
      expect(statement.resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:route-table/*' });
    }
    const source: unknown = createRequire(import.meta.url)('../../infra/serverless/route-table-full-tag-condition.cjs');
    if (!isConditionSource(source)) throw new Error('route-table-full-tag-condition.cjs exports no function');
    expect(await source({ resolveVariable: async () => 'alpha' })).toEqual({
      StringLike: { 'aws:ResourceTag/kubernetes.io/cluster/alpha': '*' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': ['podroute.io/route-table-full'] },
      Null: { 'aws:TagKeys': 'false' },
    });
  });

  it('lets only the worker consume the queue, and only reconcile and webhook send to it', () => {
    const roles = (action: string) => all.filter((statement) => statement.actions.includes(action)).map((statement) => statement.role).sort();
    expect(roles('sqs:SendMessage')).toEqual(['NodeWebhookRole', 'ReconcileRole']);
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage']) expect(roles(action)).toEqual(['RouteWorkerRole']);
    expect(roles('sqs:GetQueueAttributes')).toEqual(['ReconcileRole', 'RouteWorkerRole']);
  });

  it.each([
    ['ReconcileRole', 'ReconcileLogGroup'],
    ['RouteWorkerRole', 'RouteWorkerLogGroup'],
    ['NodeWebhookRole', 'NodeWebhookLogGroup'],
  ])('%s writes logs only to %s', (role, logGroup) => {
    const logs = all.filter((statement) => statement.role === role && statement.actions.some((action) => action.startsWith('logs:')));
    expect(logs.map((statement) => statement.resource)).toEqual([{ 'Fn::GetAtt': [logGroup, 'Arn'] }]);
  });
});

describe('serverless.yml: configuration', () => {
  const environment = (name: string): Record<string, unknown> => {
    const own = fn(name).environment;
    const merged = { ...objAt(sls, 'provider', 'environment'), ...(isObj(own) ? own : {}) };
    return merged;
  };
  /** The environment as Lambda would get it with the ci params (AWS::NoValue drops a key). */
  const resolvedEnvironment = (name: string): Record<string, string> => Object.fromEntries(
    Object.entries(environment(name)).flatMap(([key, value]) => {
      const resolved = evaluate(value);
      return resolved === undefined ? [] : [[key, String(resolved)]];
    }),
  );

  it('sets every variable lib/config.ts reads on the webhook, and all but the webhook secret elsewhere', () => {
    const variables = Object.keys(configSchema.shape);
    expect(Object.keys(environment('nodeWebhook'))).toEqual(expect.arrayContaining(variables));
    for (const name of ['reconcile', 'routeWorker']) {
      expect(Object.keys(environment(name))).toEqual(expect.arrayContaining(variables.filter((variable) => !variable.startsWith('WEBHOOK_'))));
    }
  });

  it('wires the queue URL and table name with CloudFormation refs', () => {
    expect(at(sls, 'provider', 'environment', 'QUEUE_URL')).toEqual({ Ref: 'WorkQueue' });
    expect(at(sls, 'provider', 'environment', 'CIDR_TABLE_NAME')).toEqual({ Ref: 'CidrTable' });
  });

  it('loads with lib/config.ts and keeps its defaults', () => {
    const stringEnv = resolvedEnvironment('nodeWebhook');
    expect(stringEnv).not.toHaveProperty('KUBE_SECRET_ID');
    const config = loadConfig(stringEnv);
    const bare = loadConfig({ CLUSTER_NAME: stringEnv.CLUSTER_NAME, CLUSTER_CIDRS: stringEnv.CLUSTER_CIDRS });
    expect({ ...config, queueUrl: '', cidrTableName: '', webhookSecret: bare.webhookSecret }).toEqual(bare);
    expect(config.queueUrl).toBe('<WorkQueue>');
    expect(config.cidrTableName).toBe('<CidrTable>');
    expect(config.webhookSecret).toEqual({ source: 'secretsmanager', id: '<WebhookSecret>' });
  });
});

describe('infra/kubernetes manifests', () => {
  const documents = (path: string): Obj[] =>
    readFileSync(`${root}${path}`, 'utf8').split(/^---$/m).map((text) => objAt(load(text)));

  it('webhook: nodes CREATE/DELETE, v1 reviews, never blocks a node', () => {
    const [config] = documents('infra/kubernetes/webhook.yaml');
    expect(config?.kind).toBe('MutatingWebhookConfiguration');
    const hook = objAt(config, 'webhooks', 0);
    expect(hook).toMatchObject({ admissionReviewVersions: ['v1'], sideEffects: 'NoneOnDryRun', failurePolicy: 'Ignore', timeoutSeconds: 5 });
    expect(listAt(hook, 'rules')).toEqual([{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'DELETE'], resources: ['nodes'], scope: 'Cluster' }]);
    expect(String(at(hook, 'clientConfig', 'url'))).toMatch(/^https:\/\/[^/?#]+\/webhook\/[^/?#]+$/);
  });

  it('rbac: the podroute group may read and patch nodes and write events, nothing else', () => {
    const [role, binding] = documents('infra/kubernetes/rbac.yaml');
    expect(role?.kind).toBe('ClusterRole');
    expect(listAt(role, 'rules')).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
    expect(binding?.kind).toBe('ClusterRoleBinding');
    expect(at(binding, 'roleRef', 'name')).toBe('podroute');
    expect(listAt(binding, 'subjects')).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podroute' }]);
  });
});
