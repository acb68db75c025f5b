/**
 * Reads the real serverless.yml (and infra/kubernetes manifests) and checks the properties a
 * deployment depends on: runtime, queue/DLQ wiring, table safety, least-privilege IAM, config.
 * The file is plain YAML (long-form intrinsics), so js-yaml parses it without CloudFormation tags.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '../../lib/config.ts';
import { ClaimProtocolStore, MemoryClaimStore, createCidrSet } from '../../lib/ipam/index.ts';
import { NodeNotFoundError } from '../../lib/kube/kube-errors.ts';
import { silentLogger } from '../../lib/log.ts';
import { checkNodeLeft } from '../../lib/usecases/node-left.ts';
import { WORK_QUEUE_VISIBILITY_SECONDS, WORKER_TIMEOUT_SECONDS } from '../../lib/messages/work-queue.ts';
import { type Obj, isObj } from '../support/mapping.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): unknown => load(readFileSync(`${root}${path}`, 'utf8'));


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
/** The ci stage's params as infra/serverless/params.cjs gives them: the defaults with infra/params/ci.json over them. */
const params: Obj = { ...objAt(sls, 'custom', 'paramDefaults'), ...objAt(JSON.parse(readFileSync(`${root}infra/params/ci.json`, 'utf8'))) };
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

interface Statement {
  role: string; sid: string; actions: string[]; resource: unknown; condition: unknown; when?: string;
  /** An Action chosen by `Fn::If`: its condition and both lists (`actions` holds their union). */
  actionsIf?: { condition: string; yes: string[]; no: string[] };
}

/**
 * Every statement of every role, with both branches of an `Fn::If` statement (`when` names its
 * condition, `!<condition>` for the second branch).
 */
function statements(): Statement[] {
  const out: Statement[] = [];
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (!isObj(resource) || resource.Type !== 'AWS::IAM::Role') continue;
    for (const policy of listAt(resource, 'Properties', 'Policies')) {
      const pending: { statement: unknown; when?: string }[] = listAt(policy, 'PolicyDocument', 'Statement').map((statement) => ({ statement }));
      while (pending.length > 0) {
        const { statement, when } = pending.shift() ?? {};
        if (isObj(statement) && 'Fn::If' in statement) {
          const [condition, ...branches] = listAt(statement, 'Fn::If');
          pending.push(...branches.map((branch, index) => ({ statement: branch, when: `${index === 0 ? '' : '!'}${String(condition)}` })).filter(({ statement: branch }) => !(isObj(branch) && 'Ref' in branch)));
          continue;
        }
        if (!isObj(statement)) throw new Error(`${logicalId}: a statement is not a mapping`);
        expect(statement, `${logicalId}: no NotAction/NotResource`).not.toHaveProperty('NotAction');
        expect(statement).not.toHaveProperty('NotResource');
        expect(statement.Effect, `${logicalId}: Allow only`).toBe('Allow');
        const rawAction = statement.Action;
        const chosen = isObj(rawAction) && 'Fn::If' in rawAction ? listAt(rawAction, 'Fn::If') : null;
        const strings = (value: unknown): string[] => [value].flat().map((action) => String(action));
        const actions = [...new Set(chosen ? chosen.slice(1).flatMap(strings) : strings(rawAction))];
        const actionsIf = chosen ? { condition: String(chosen[0]), yes: strings(chosen[1]), no: strings(chosen[2]) } : undefined;
        out.push({
          role: logicalId, sid: String(statement.Sid ?? '?'), actions, resource: statement.Resource, condition: statement.Condition,
          ...(when === undefined ? {} : { when }), ...(actionsIf === undefined ? {} : { actionsIf }),
        });
      }
    }
  }
  return out;
}

const ROUTE_WRITES = ['ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute'];
const EC2_WRITES = [...ROUTE_WRITES, 'ec2:ModifyNetworkInterfaceAttribute', 'ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses'];
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
    expect(esbuild).toMatchObject({ bundle: true, minify: true, sourcemap: true, target: 'node22', platform: 'node', format: 'esm', splitting: true, outputFileExtension: '.mjs', exclude: [] });
    expect(at(esbuild, 'banner', 'js')).toBe("import{createRequire}from'module';const require=createRequire(import.meta.url);");
  });

  it('protects the stack from deletion and prunes old versions, keeping those an alias names', () => {
    expect(at(sls, 'provider', 'deletionProtection')).toBe(true);
    expect(at(sls, 'provider', 'versionFunctions')).toBe(true);
    expect(at(sls, 'provider', 'pruneFunctionVersions')).toEqual({ number: 10 });
  });

  it.each([
    ['reconcile', 'functions/reconcile.handler', 512, 60],
    ['routeWorker', 'functions/route-worker.handler', 256, 30],
    ['nodeWebhook', 'functions/node-webhook.handler', 256, 10],
    ['cloudEvents', 'functions/cloud-events.handler', 256, 30],
  ])('%s: handler %s, %i MB, %i s, its own IAM role', (name, handler, memory, timeout) => {
    expect(fn(name).handler).toBe(handler);
    expect(fn(name).memorySize).toBe(memory);
    expect(fn(name).timeout).toBe(timeout);
    const role = String(at(fn(name), 'role'));
    expect(objAt(resources, role).Type).toBe('AWS::IAM::Role');
    const roles = ['reconcile', 'routeWorker', 'nodeWebhook', 'cloudEvents'].map((other) => at(fn(other), 'role'));
    expect(new Set(roles).size).toBe(4);
  });

  it('reconcile runs on a schedule, one at a time (a reservation of 1 from a param, or none when it is empty)', () => {
    expect(fn('reconcile')).not.toHaveProperty('reservedConcurrency');
    const reserved = at(objAt(sls, 'resources', 'extensions', 'ReconcileLambdaFunction', 'Properties'), 'ReservedConcurrentExecutions');
    expect(reserved).toEqual({ 'Fn::If': ['HasReconcileReservedConcurrency', { Ref: 'ReconcileReservedConcurrency' }, { Ref: 'AWS::NoValue' }] });
    expect(num(reserved)).toBe(1);
    expect(String(at(cfnParameters, 'ReconcileReservedConcurrency', 'AllowedPattern'))).toBe('^1?$');
    const saved = params.reconcileReservedConcurrency;
    params.reconcileReservedConcurrency = '';
    try {
      expect(evaluate(reserved)).toBeUndefined();
    } finally {
      params.reconcileReservedConcurrency = saved;
    }
    const schedule = objAt(fn('reconcile'), 'events', 0, 'schedule');
    expect(listAt(schedule, 'rate').map(evaluate)).toEqual(['rate(1 minute)']);
  });

  it('cloudEvents takes the two EventBridge rules, filtered to leaving states and route writes, each with the events DLQ', () => {
    const rules = listAt(fn('cloudEvents'), 'events').map((event) => objAt(event, 'eventBridge'));
    expect(rules.map((rule) => at(rule, 'pattern'))).toEqual([
      { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'], detail: { state: ['shutting-down', 'terminated', 'stopping', 'stopped'] } },
      { source: ['aws.ec2'], 'detail-type': ['AWS API Call via CloudTrail'], detail: { eventSource: ['ec2.amazonaws.com'], eventName: ['CreateRoute', 'ReplaceRoute', 'DeleteRoute'] } },
    ]);
    for (const rule of rules) expect(at(rule, 'deadLetterQueueArn')).toEqual({ 'Fn::GetAtt': ['EventsDeadLetterQueue', 'Arn'] });
    expect(at(fn('cloudEvents'), 'destinations', 'onFailure', 'arn')).toEqual({ 'Fn::GetAtt': ['EventsDeadLetterQueue', 'Arn'] });
    const policy = objAt(resources, 'EventsDeadLetterQueuePolicy', 'Properties', 'PolicyDocument');
    expect(objAt(policy, 'Statement', 0, 'Principal')).toEqual({ Service: 'events.amazonaws.com' });
    expect(listAt(objAt(policy, 'Statement', 0, 'Condition', 'ArnEquals'), 'aws:SourceArn')).toHaveLength(2);
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

  it('deploys the visibility timeout and worker timeout that a message’s lifetime is computed from (lib/messages/work-queue.ts)', () => {
    expect(num(at(resources, 'WorkQueue', 'Properties', 'VisibilityTimeout'))).toBe(WORK_QUEUE_VISIBILITY_SECONDS);
    expect(num(at(fn('routeWorker'), 'timeout'))).toBe(WORKER_TIMEOUT_SECONDS);
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

  it('alarms on DLQ depth and on each function\'s errors, each on the page or the ticket topic', () => {
    const alarms = Object.values(resources).filter((resource) => isObj(resource) && resource.Type === 'AWS::CloudWatch::Alarm').map((alarm) => objAt(alarm, 'Properties'));
    const dlq = alarms.find((alarm) => alarm.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlq).toMatchObject({ Namespace: 'AWS/SQS', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    expect(at(dlq, 'Dimensions', 0, 'Value')).toEqual({ 'Fn::GetAtt': ['DeadLetterQueue', 'QueueName'] });
    const erroring = alarms.filter((alarm) => alarm.MetricName === 'Errors').map((alarm) => at(alarm, 'Dimensions', 0, 'Value'));
    expect(erroring).toEqual(expect.arrayContaining(['Reconcile', 'RouteWorker', 'NodeWebhook'].map((id) => ({ Ref: `${id}LambdaFunction` }))));
    const topics = ['Page', 'Ticket'].map((severity) => [{ 'Fn::If': [`Create${severity}Topic`, { Ref: `${severity}Topic` }, { Ref: `${severity}TopicArn` }] }]);
    for (const alarm of alarms) {
      expect(topics, String(alarm.AlarmName)).toContainEqual(alarm.AlarmActions);
      expect(alarm.OKActions, String(alarm.AlarmName)).toEqual(alarm.AlarmActions);
    }
  });

  it('outputs the webhook URL, queue URL and table name', () => {
    expect(Object.keys(objAt(sls, 'resources', 'Outputs'))).toEqual(expect.arrayContaining(['WebhookUrl', 'QueueUrl', 'CidrTableName']));
  });
});

describe('serverless.yml: least-privilege IAM', () => {
  const all = statements();

  it('has one role per function and statements in each', () => {
    expect(new Set(all.map((statement) => statement.role))).toEqual(new Set(['ReconcileRole', 'RouteWorkerRole', 'NodeWebhookRole', 'CloudEventsRole']));
  });

  it('never grants a wildcard action', () => {
    for (const { role, sid, actions } of all) {
      for (const action of actions) expect(action, `${role}/${sid}`).toMatch(/^[a-z0-9-]+:[A-Za-z0-9]+$/);
    }
  });

  // GetSubnetCidrReservations is a read of reservations only; it is on '*' because its resource-level
  // support could not be checked against the Service Authorization Reference here.
  // The X-Ray trace uploads of active tracing take no resource either (AWS Lambda Developer Guide, X-Ray).
  it('uses Resource "*" only for EC2 reads (Describe actions have no resource-level permissions) and trace uploads', () => {
    for (const { role, sid, actions, resource } of all) {
      if (resource === '*' || (Array.isArray(resource) && resource.includes('*'))) {
        for (const action of actions) expect(action, `${role}/${sid}`).toMatch(/^(ec2:(Describe[A-Za-z]+|GetSubnetCidrReservations)|xray:(PutTraceSegments|PutTelemetryRecords))$/);
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

  it('lets only the worker turn the source/dest check off, per network interface, never with the instance-level call', () => {
    // EC2 refuses ModifyInstanceAttribute SourceDestCheck on an instance with several interfaces;
    // the worker calls ModifyNetworkInterfaceAttribute on the node's primary interface instead.
    expect(all.filter((statement) => statement.actions.includes('ec2:ModifyInstanceAttribute'))).toEqual([]);
    const modifiers = all.filter((statement) => statement.actions.includes('ec2:ModifyNetworkInterfaceAttribute'));
    expect(modifiers.map((statement) => statement.role)).toEqual(['RouteWorkerRole']);
    for (const statement of modifiers) {
      expect(statement.actions).toEqual(['ec2:ModifyNetworkInterfaceAttribute']);
      expect(statement.resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:network-interface/*' });
    }
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
    // The one exception: cloud-events' onFailure destination, the events DLQ (its own line below).
    const scoped = all.filter((statement) => statement.actions.some((action) => action.startsWith(prefix)) && !(statement.role === 'CloudEventsRole' && statement.sid === 'FailedEvents'));
    expect(scoped.length).toBeGreaterThan(0);
    for (const statement of scoped) expect(statement.resource, `${statement.role}/${statement.sid}`).toEqual(resource);
  });

  it.each([
    // each function's calls, from the code: lib/usecases and functions/
    ['ReconcileRole', ['ec2:DescribeRouteTables', 'ec2:DescribeInstances', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:GetSubnetCidrReservations', 'ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses', 'ec2:DeleteTags', 'sqs:SendMessage', 'sqs:GetQueueAttributes', 'dynamodb:Query', 'dynamodb:PutItem']],
    ['RouteWorkerRole', ['ec2:DescribeRouteTables', 'ec2:DescribeInstances', 'ec2:DescribeSubnets', 'ec2:DescribeNetworkInterfaces', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses', 'ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute', 'ec2:ModifyNetworkInterfaceAttribute', 'ec2:CreateTags', 'ec2:DeleteTags', 'sqs:ChangeMessageVisibility', 'dynamodb:GetItem', 'dynamodb:DeleteItem']],
    // The webhook: prefixes mode's interface read (DescribeInstances), subnet read and delegation;
    // the claim protocol's allocate, release and lease listing; the queue; both secrets.
    ['NodeWebhookRole', ['ec2:DescribeInstances', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:GetSubnetCidrReservations', 'ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses', 'sqs:SendMessage', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'secretsmanager:GetSecretValue']],
    // cloud-events: an instance's state, the tables, the leases (lib/usecases/cloud-events.ts), the queue.
    ['CloudEventsRole', ['ec2:DescribeInstances', 'ec2:DescribeRouteTables', 'dynamodb:Query', 'sqs:SendMessage']],
  ])('%s may make every call its code makes', (role, needed) => {
    const granted = new Set(all.filter((statement) => statement.role === role).flatMap((statement) => statement.actions));
    for (const action of needed) expect(granted.has(action), `${role} lacks ${action}`).toBe(true);
  });

  /** One statement as one line: `[if <condition>: ]<Sid> <actions> on <resource>[ when <condition file>]`. */
  const render = ({ sid, actions, actionsIf, resource, condition, when }: Statement): string => {
    const shortResource = (value: unknown): string => {
      if (typeof value === 'string') return value;
      if (Array.isArray(value)) return value.map(shortResource).join(' + ');
      if (isObj(value) && 'Fn::GetAtt' in value) return String(listAt(value, 'Fn::GetAtt')[0]);
      if (isObj(value) && 'Ref' in value) return `Ref ${String(value.Ref)}`;
      if (isObj(value) && typeof value['Fn::Sub'] === 'string') {
        return value['Fn::Sub'].replace('arn:${AWS::Partition}:', '').replace(':${AWS::Region}:${AWS::AccountId}:', ':');
      }
      if (isObj(value) && 'Fn::If' in value) {
        const [test, yes, no] = listAt(value, 'Fn::If');
        return `(${String(test)} ? ${shortResource(yes)} : ${shortResource(no)})`;
      }
      return JSON.stringify(value);
    };
    const file = typeof condition === 'string' ? /^\$\{file\(\.\/infra\/serverless\/([\w-]+)\.cjs\)\}$/.exec(condition)?.[1] : undefined;
    const shortCondition = condition === undefined ? '' : ` when ${file ?? JSON.stringify(condition)}`;
    const sorted = (list: string[]): string => [...list].sort().join(' ');
    const shownActions = actionsIf && actionsIf.condition !== 'WebhookSecretInSsm'
      ? `(${actionsIf.condition} ? ${sorted(actionsIf.yes)} : ${sorted(actionsIf.no)})`
      : sorted(actions);
    return `${when === undefined ? '' : `if ${when}: `}${sid} ${shownActions} on ${shortResource(resource)}${shortCondition}`;
  };

  // Exactly what each role may do: adding or removing an action, a resource or a condition in
  // serverless.yml fails here until the line below says so too (one line per statement).
  it.each([
    ['ReconcileRole', [
      'CidrTable dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem on CidrTable',
      'Ec2Read (PrefixesMode ? ec2:DescribeInstances ec2:DescribeNetworkInterfaces ec2:DescribeSubnets : ec2:DescribeInstances ec2:DescribeNetworkInterfaces ec2:DescribeRouteTables ec2:DescribeSubnets) on *',
      'EksCluster eks:DescribeCluster on eks:cluster/${param:eksClusterName, param:clusterName}',
      'if PrefixesMode: SubnetReservations ec2:GetSubnetCidrReservations on *',
      'if PrefixesMode: EniPrefixes ec2:AssignIpv6Addresses ec2:AssignPrivateIpAddresses ec2:UnassignIpv6Addresses ec2:UnassignPrivateIpAddresses on ec2:network-interface/* when cluster-tag-condition',
      'Enqueue sqs:GetQueueAttributes sqs:SendMessage on WorkQueue',
      'Logs logs:CreateLogStream logs:PutLogEvents on ReconcileLogGroup',
      'XRayTraces xray:PutTelemetryRecords xray:PutTraceSegments on *',
      'if !PrefixesMode: RouteTableFullMark ec2:DeleteTags on ec2:route-table/* when route-table-full-tag-condition',
      'if HasKubeSecret: KubeconfigSecret secretsmanager:GetSecretValue on Ref KubeSecretArn',
      'if HasSecretsKmsKey: SecretsKey kms:Decrypt on Ref SecretsKmsKeyArn',
    ]],
    ['RouteWorkerRole', [
      'CidrTable dynamodb:DeleteItem dynamodb:GetItem on CidrTable',
      'Consume sqs:ChangeMessageVisibility sqs:DeleteMessage sqs:GetQueueAttributes sqs:ReceiveMessage on WorkQueue',
      'Ec2Read (PrefixesMode ? ec2:DescribeInstances ec2:DescribeNetworkInterfaces ec2:DescribeSubnets : ec2:DescribeInstances ec2:DescribeNetworkInterfaces ec2:DescribeRouteTables) on *',
      'EksCluster eks:DescribeCluster on eks:cluster/${param:eksClusterName, param:clusterName}',
      'if PrefixesMode: EniPrefixes ec2:AssignIpv6Addresses ec2:AssignPrivateIpAddresses ec2:UnassignIpv6Addresses ec2:UnassignPrivateIpAddresses on ec2:network-interface/* when cluster-tag-condition',
      'Logs logs:CreateLogStream logs:PutLogEvents on RouteWorkerLogGroup',
      'XRayTraces xray:PutTelemetryRecords xray:PutTraceSegments on *',
      'if !PrefixesMode: RouteTableFullMark ec2:CreateTags ec2:DeleteTags on ec2:route-table/* when route-table-full-tag-condition',
      'if !PrefixesMode: RouteWrites ec2:CreateRoute ec2:DeleteRoute ec2:ReplaceRoute on ec2:route-table/* when cluster-tag-condition',
      'if !PrefixesMode: SourceDestCheck ec2:ModifyNetworkInterfaceAttribute on ec2:network-interface/* when cluster-tag-condition',
      'if HasKubeSecret: KubeconfigSecret secretsmanager:GetSecretValue on Ref KubeSecretArn',
      'if HasSecretsKmsKey: SecretsKey kms:Decrypt on Ref SecretsKmsKeyArn',
    ]],
    ['NodeWebhookRole', [
      'CidrTable dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem on CidrTable',
      'if PrefixesMode: Ec2Read ec2:DescribeInstances ec2:DescribeNetworkInterfaces ec2:DescribeSubnets on *',
      'EksCluster eks:DescribeCluster on eks:cluster/${param:eksClusterName, param:clusterName}',
      'if PrefixesMode: SubnetReservations ec2:GetSubnetCidrReservations on *',
      'if PrefixesMode: EniPrefixes ec2:AssignIpv6Addresses ec2:AssignPrivateIpAddresses ec2:UnassignIpv6Addresses ec2:UnassignPrivateIpAddresses on ec2:network-interface/* when cluster-tag-condition',
      'Enqueue sqs:SendMessage on WorkQueue',
      'Logs logs:CreateLogStream logs:PutLogEvents on NodeWebhookLogGroup',
      'XRayTraces xray:PutTelemetryRecords xray:PutTraceSegments on *',
      'WebhookToken secretsmanager:GetSecretValue ssm:GetParameter on (CreateWebhookSecret ? Ref WebhookSecret : Ref WebhookSecretArn) + (CreateWebhookSigningSecret ? Ref WebhookSigningSecret : Ref WebhookSigningSecretArn)',
      'if HasKubeSecret: KubeconfigSecret secretsmanager:GetSecretValue on Ref KubeSecretArn',
      'if HasSecretsKmsKey: SecretsKey kms:Decrypt on Ref SecretsKmsKeyArn',
    ]],
    ['CloudEventsRole', [
      'CidrTable dynamodb:Query on CidrTable',
      'Ec2Read (PrefixesMode ? ec2:DescribeInstances : ec2:DescribeInstances ec2:DescribeRouteTables) on *',
      'EksCluster eks:DescribeCluster on eks:cluster/${param:eksClusterName, param:clusterName}',
      'Enqueue sqs:SendMessage on WorkQueue',
      'FailedEvents sqs:SendMessage on EventsDeadLetterQueue',
      'Logs logs:CreateLogStream logs:PutLogEvents on CloudEventsLogGroup',
      'XRayTraces xray:PutTelemetryRecords xray:PutTraceSegments on *',
      'if HasKubeSecret: KubeconfigSecret secretsmanager:GetSecretValue on Ref KubeSecretArn',
      'if HasSecretsKmsKey: SecretsKey kms:Decrypt on Ref SecretsKmsKeyArn',
    ]],
  ])('%s grants exactly these statements', (role, expected) => {
    expect(all.filter((statement) => statement.role === role).map(render).sort()).toEqual([...expected].sort());
  });

  it('gives the worker exactly the DynamoDB calls its node-left check makes over the deployed claim protocol', async () => {
    // Recorded, not listed by hand: the release path of the store the stack deploys (the claim
    // protocol over DynamoDB), each primitive mapped to the DynamoDB action its adapter sends.
    const action: Record<string, string> = {
      get: 'dynamodb:GetItem', putIfAbsent: 'dynamodb:PutItem', putIfVersion: 'dynamodb:PutItem',
      deleteIf: 'dynamodb:DeleteItem', increment: 'dynamodb:UpdateItem', list: 'dynamodb:Query', count: 'dynamodb:Query',
    };
    const calls = new Set<string>();
    const claims = new MemoryClaimStore();
    const recording = new Proxy(claims, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.add(action[String(prop)] ?? `unmapped:${String(prop)}`);
          return Reflect.apply(value, target, args);
        };
      },
    });
    const set = await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24, store: new ClaimProtocolStore(recording) });
    await set.allocateNext('gone');
    calls.clear();
    const gone = async (name: string): Promise<never> => {
      throw new NodeNotFoundError(name);
    };
    expect(await checkNodeLeft('gone', { nodes: { getNode: gone }, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: silentLogger, now: () => 3_600_000, leaseGraceSeconds: 600 })).toBe('released:10.244.0.0/24');
    const dynamo = all.filter((statement) => statement.role === 'RouteWorkerRole').flatMap((statement) => statement.actions).filter((a) => a.startsWith('dynamodb:'));
    expect(dynamo.sort()).toEqual([...calls].sort());
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

  it('lets only the worker consume the queue, and only reconcile, webhook and cloud-events send to it', () => {
    const roles = (action: string) => all.filter((statement) => statement.actions.includes(action) && statement.sid !== 'FailedEvents').map((statement) => statement.role).sort();
    expect(roles('sqs:SendMessage')).toEqual(['CloudEventsRole', 'NodeWebhookRole', 'ReconcileRole']);
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage']) expect(roles(action)).toEqual(['RouteWorkerRole']);
    expect(roles('sqs:GetQueueAttributes')).toEqual(['ReconcileRole', 'RouteWorkerRole']);
  });

  it.each([
    ['ReconcileRole', 'ReconcileLogGroup'],
    ['RouteWorkerRole', 'RouteWorkerLogGroup'],
    ['NodeWebhookRole', 'NodeWebhookLogGroup'],
    ['CloudEventsRole', 'CloudEventsLogGroup'],
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
    const variables = Object.keys(configSchema().shape);
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
    expect(config.webhookSecret).toEqual({ source: 'secretsmanager', id: '<WebhookSecret>', signingKeyId: '<WebhookSigningSecret>' });
  });
});

describe('serverless.yml: exposure of the webhook', () => {
  const all = statements();
  const extension = (logicalId: string): Obj => objAt(sls, 'resources', 'extensions', logicalId, 'Properties');
  const conditionHolds = (name: string, overrides: Obj = {}): boolean => {
    const saved = { ...params };
    Object.assign(params, overrides);
    try {
      return evaluate(objAt(sls, 'resources', 'Conditions', name)) === true;
    } finally {
      for (const key of Object.keys(params)) delete params[key];
      Object.assign(params, saved);
    }
  };

  it('throttles every route of the HTTP API (stage default route settings, from params)', () => {
    const settings = objAt(extension('HttpApiStage'), 'DefaultRouteSettings');
    expect(num(settings.ThrottlingRateLimit)).toBe(50);
    expect(num(settings.ThrottlingBurstLimit)).toBe(100);
  });

  it('reserves the webhook function\'s concurrency from a param, and none when it is empty', () => {
    const reserved = at(extension('NodeWebhookLambdaFunction'), 'ReservedConcurrentExecutions');
    expect(reserved).toEqual({ 'Fn::If': ['HasWebhookReservedConcurrency', { Ref: 'WebhookReservedConcurrency' }, { Ref: 'AWS::NoValue' }] });
    expect(num(reserved)).toBe(10);
    const parameter = objAt(cfnParameters, 'WebhookReservedConcurrency');
    expect(String(parameter.AllowedPattern)).toBe('^([1-9][0-9]{0,3})?$');
    expect(conditionHolds('HasWebhookReservedConcurrency')).toBe(true);
    expect(conditionHolds('HasWebhookReservedConcurrency', { webhookReservedConcurrency: '' })).toBe(false);
  });

  it('reserves the cloud-events function\'s concurrency from a param (a mass termination queues), and none when it is empty', () => {
    const reserved = at(extension('CloudEventsLambdaFunction'), 'ReservedConcurrentExecutions');
    expect(reserved).toEqual({ 'Fn::If': ['HasCloudEventsReservedConcurrency', { Ref: 'CloudEventsReservedConcurrency' }, { Ref: 'AWS::NoValue' }] });
    expect(num(reserved)).toBe(5);
    expect(String(objAt(cfnParameters, 'CloudEventsReservedConcurrency').AllowedPattern)).toBe('^([1-9][0-9]{0,3})?$');
    expect(conditionHolds('HasCloudEventsReservedConcurrency')).toBe(true);
    expect(conditionHolds('HasCloudEventsReservedConcurrency', { cloudEventsReservedConcurrency: '' })).toBe(false);
  });

  it('keeps the URL token and the event signing key in two secrets, both read by the webhook only', () => {
    expect(objAt(resources, 'WebhookSigningSecret')).toMatchObject({ Type: 'AWS::SecretsManager::Secret', Condition: 'CreateWebhookSigningSecret' });
    expect(at(resources, 'WebhookSigningSecret', 'Properties', 'Name')).not.toBe(at(resources, 'WebhookSecret', 'Properties', 'Name'));
    expect(objAt(fn('nodeWebhook'), 'environment').WEBHOOK_SIGNING_SECRET_ID).toEqual({ 'Fn::If': ['CreateWebhookSigningSecret', { Ref: 'WebhookSigningSecret' }, { Ref: 'WebhookSigningSecretArn' }] });
    const readers = all.filter((statement) => statement.actions.includes('secretsmanager:GetSecretValue') && JSON.stringify(statement.resource).includes('WebhookSigningSecret'));
    expect(readers.map((statement) => statement.role)).toEqual(['NodeWebhookRole']);
  });

  it('gives routes mode\'s roles no prefix action, and routes mode\'s webhook no EC2 action at all', () => {
    const prefixActions = ['ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses', 'ec2:GetSubnetCidrReservations'];
    const holding = all.filter((statement) => statement.actions.some((action) => prefixActions.includes(action)));
    expect(holding.length).toBeGreaterThan(0);
    for (const statement of holding) expect(statement.when, `${statement.role}/${statement.sid}`).toBe('PrefixesMode');
    const webhookEc2 = all.filter((statement) => statement.role === 'NodeWebhookRole' && statement.actions.some((action) => action.startsWith('ec2:')));
    for (const statement of webhookEc2) expect(statement.when, statement.sid).toBe('PrefixesMode');
    expect(conditionHolds('PrefixesMode')).toBe(false);
    expect(conditionHolds('PrefixesMode', { mode: 'prefixes' })).toBe(true);
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
  // rbac.yaml: test/infra/kubernetes-manifests.test.ts compares it with the adapter's calls.
});

// ------------------------------------------------------------------------------------------------
// Names, VPC, alias, alarms and dashboard, checked on templates packaged offline (osls package, as
// infra/scripts/package-check.sh runs it): two clusters, one of them in a VPC.

type NamesHelper = ((input: { resolveVariable: (name: string) => Promise<unknown> }) => Promise<Record<string, string>>) & {
  physicalNames?: unknown;
  BASE_MAX?: unknown;
};
const namesModule: unknown = createRequire(import.meta.url)('../../infra/serverless/names.cjs');
const vpcModule: unknown = createRequire(import.meta.url)('../../infra/serverless/vpc.cjs');
const dashboardModule: unknown = createRequire(import.meta.url)('../../infra/serverless/dashboard.cjs');
const physicalNames = (isObj(namesModule) || typeof namesModule === 'function') ? (namesModule as NamesHelper).physicalNames : undefined;
if (typeof physicalNames !== 'function') throw new Error('names.cjs must export physicalNames');
const names = (cluster: unknown, stage: unknown, region: unknown = 'us-east-1'): Record<string, string> => {
  const result: unknown = physicalNames(cluster, stage, region);
  if (!isObj(result)) throw new Error('physicalNames must return a mapping');
  return Object.fromEntries(Object.entries(result).map(([key, value]) => [key, String(value)]));
};
const vpcParams = (vpcModule as { vpcParams?: unknown }).vpcParams;
if (typeof vpcParams !== 'function') throw new Error('vpc.cjs must export vpcParams');
const PODROUTE_METRICS: unknown = (dashboardModule as { PODROUTE_METRICS?: unknown }).PODROUTE_METRICS;

/** The names that live account-wide, not per region: IAM roles (IAM CreateRole) and dashboards (CloudWatch PutDashboard). */
const ACCOUNT_WIDE = ['reconcileRole', 'routeWorkerRole', 'nodeWebhookRole', 'dashboard'];

describe('infra/serverless/names.cjs: physical names from the cluster name, the stage and the region', () => {
  it('gives the same cluster and stage in two regions different role and dashboard names', () => {
    const us = names('prod', 'prod', 'us-east-1');
    const eu = names('prod', 'prod', 'eu-west-1');
    for (const key of ACCOUNT_WIDE) expect(us[key], key).not.toBe(eu[key]);
    expect(us.routeWorkerRole).toBe('podroute-prod-prod-us-east-1-route-worker');
    expect(eu.dashboard).toBe('podroute-prod-prod-eu-west-1');
    // Regional names stay as they were: the function, queue, table and stack of one region.
    for (const key of ['stack', 'reconcile', 'routeWorker', 'nodeWebhook', 'queue', 'table', 'webhookSecret']) expect(us[key], key).toBe(eu[key]);
  });

  it.each([
    ['x'.repeat(100), 'production-eu-west-1'],
    ['prod-eu', 'production-eu-west-1'],
    ['a_b.c', 'prod'],
    ['A'.repeat(31), 'a'.repeat(32)],
  ])('%s / %s: role and dashboard names stay apart across regions within 64 characters', (cluster, stage) => {
    const regions = ['us-east-1', 'eu-west-1', 'ap-southeast-5', 'us-gov-west-1', 'eusc-de-east-1'];
    for (const key of ACCOUNT_WIDE) {
      const all = regions.map((region) => names(cluster, stage, region)[key]);
      expect(new Set(all).size, key).toBe(regions.length);
      for (const name of all) expect(name).toMatch(key === 'dashboard' ? /^[A-Za-z0-9_-]{1,255}$/ : /^[\w+=,.@-]{1,64}$/);
    }
  });

  it.each([[''], ['EU-WEST-1'], ['eu_west_1'], ['eu-west'], ['x'.repeat(40) + '-1'], [null]])('rejects the region %j', (region) => {
    expect(() => names('prod-eu', 'prod', region)).toThrow(/region/);
  });

  it('gives two clusters names with nothing in common, whatever the stage', () => {
    const a = Object.values(names('prod-eu', 'prod'));
    const b = Object.values(names('prod-us', 'prod'));
    expect(a.filter((name) => b.includes(name))).toEqual([]);
    expect(names('prod-eu', 'prod').stack).toBe('podroute-prod-eu-prod');
  });

  it.each([
    ['a_b', 'a-b'],
    ['a.b', 'a-b'],
    ['x'.repeat(100), 'x'.repeat(99)],
    ['x'.repeat(100), 'x'.repeat(100).slice(0, 30) + 'y'],
  ])('keeps %s and %s apart although their readable forms may be equal', (left, right) => {
    expect(names(left, 'prod').base).not.toBe(names(right, 'prod').base);
  });

  it.each([['prod-eu'], ['a_b.c'], ['x'.repeat(100)], ['A'.repeat(31)]])('%s: every name fits every service limit', (cluster) => {
    const all = names(cluster, 'production-eu-west-1');
    expect(String(all.base).length).toBeLessThanOrEqual(Number((namesModule as NamesHelper).BASE_MAX));
    expect(all.stack).toMatch(/^[A-Za-z][A-Za-z0-9-]{0,127}$/);           // CloudFormation stack
    for (const key of ['reconcile', 'routeWorker', 'nodeWebhook']) expect(all[key]).toMatch(/^[A-Za-z0-9_-]{1,64}$/); // Lambda
    for (const key of ['reconcileRole', 'routeWorkerRole', 'nodeWebhookRole']) expect(all[key]).toMatch(/^[\w+=,.@-]{1,64}$/); // IAM role
    for (const key of ['queue', 'deadLetterQueue']) expect(all[key]).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(all.schedule).toMatch(/^[.\-_A-Za-z0-9]{1,64}$/);
    expect(all.dashboard).toMatch(/^[A-Za-z0-9_-]{1,255}$/);
    for (const key of ['pageTopic', 'ticketTopic']) expect(all[key]).toMatch(/^[A-Za-z0-9_-]{1,256}$/); // SNS CreateTopic Name
  });

  it.each([[''], ['a/b'], ['*'], [undefined]])('rejects the cluster name %j', (cluster) => {
    expect(() => names(cluster, 'prod')).toThrow(/not a cluster name/);
  });

  it.each([[''], ['a_b'], [undefined]])('rejects the stage %j', (stage) => {
    expect(() => names('prod-eu', stage)).toThrow(/stage/);
  });
});

describe('infra/serverless/vpc.cjs: the VPC params', () => {
  it.each([
    ['', '', { subnetIds: '', securityGroupIds: '' }],
    ['subnet-0abc,subnet-0def', 'sg-0123', { subnetIds: 'subnet-0abc,subnet-0def', securityGroupIds: 'sg-0123' }],
  ])('accepts subnets %j with groups %j', (subnets, groups, expected) => {
    expect(vpcParams(subnets, groups)).toEqual(expected);
  });

  it.each([
    ['subnet-0abc', '', /both be set/],
    ['', 'sg-0123', /both be set/],
    ['subnet-0abc, subnet-0def', 'sg-0123', /not a comma-separated list of subnet ids/],
    ['subnet-0abc', 'default', /not a comma-separated list of security group ids/],
  ])('refuses subnets %j with groups %j', (subnets, groups, message) => {
    expect(() => vpcParams(subnets, groups)).toThrow(message);
  });
});

/**
 * Runs `osls package` into a temporary directory with extra params; returns the template and stack name.
 * The suite's one packaging test file: serverless-esbuild builds in the repo's `.esbuild/` and deletes
 * it after, so a second file packaging at the same time (vitest runs files side by side) would break it.
 */
function packageWith(extraParams: Record<string, string>): { template: Obj; stackName: string } {
  const out = mkdtempSync(join(tmpdir(), 'podroute-template-'));
  try {
    const args = ['--no-install', 'osls', 'package', '--stage', 'ci', '--region', 'us-east-1', '--package', out,
      ...Object.entries(extraParams).map(([key, value]) => `--param=${key}=${value}`)];
    execFileSync('npx', args, {
      cwd: root,
      env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const template = objAt(JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8')));
    const state: unknown = JSON.parse(readFileSync(join(out, 'serverless-state.json'), 'utf8'));
    return { template, stackName: String(at(state, 'service', 'provider', 'stackName')) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The resource types podroute names, and the property that holds each one's physical name. */
const NAME_PROPERTY: Record<string, string> = {
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::Events::Rule': 'Name',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::ApiGatewayV2::Api': 'Name',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::Logs::QueryDefinition': 'Name',
};

/**
 * Evaluates a packaged template's conditions and intrinsics with every parameter at its default,
 * or at the value `given` names, as a deployment that passes that stack parameter would.
 */
function evaluateIn(template: Obj, value: unknown, given: Record<string, string> = {}): unknown {
  const parameters = objAt(template, 'Parameters');
  const conditions = objAt(template, 'Conditions');
  const ev = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(ev).filter((item) => item !== undefined);
    if (!isObj(v)) return v;
    if ('Ref' in v) {
      const name = String(v.Ref);
      if (name === 'AWS::NoValue') return undefined;
      if (name === 'AWS::Partition') return 'aws';
      if (name in given) return given[name];
      if (name in parameters) return at(parameters, name, 'Default');
      return `<${name}>`;
    }
    if ('Fn::If' in v) {
      const [condition, yes, no] = listAt(v, 'Fn::If');
      return ev(ev(at(conditions, String(condition))) === true ? yes : no);
    }
    if ('Fn::Equals' in v) {
      const [left, right] = listAt(v, 'Fn::Equals');
      return ev(left) === ev(right);
    }
    if ('Fn::Not' in v) return ev(listAt(v, 'Fn::Not')[0]) !== true;
    if ('Fn::Split' in v) {
      const [separator, text] = listAt(v, 'Fn::Split');
      return String(ev(text)).split(String(separator));
    }
    if ('Fn::Sub' in v && typeof v['Fn::Sub'] === 'string') return v['Fn::Sub'].replace('${AWS::Partition}', 'aws');
    return Object.fromEntries(Object.entries(v).map(([key, item]) => [key, ev(item)]).filter(([, item]) => item !== undefined));
  };
  return ev(value);
}

/** A dashboard's body: the JSON of its `Fn::Sub`, in partition aws and account 123456789012. */
const dashboardBodyOf = (dashboard: unknown): unknown => {
  const text = String(at(dashboard, 'Properties', 'DashboardBody', 'Fn::Sub'));
  const substituted = text.replaceAll('${AWS::Partition}', 'aws').replaceAll('${AWS::AccountId}', '123456789012');
  expect(substituted).not.toContain('${');
  return JSON.parse(substituted);
};

const resourcesOf = (template: Obj, type: string): [string, Obj][] =>
  Object.entries(objAt(template, 'Resources')).flatMap(([id, resource]) => (isObj(resource) && resource.Type === type ? [[id, resource]] : []));

describe('serverless.yml packaged: one cluster, one stack; VPC; alias; alarms; dashboard', () => {
  // One packaging (about 10-70 s on a busy machine), shared by every test below. `.ci/run` packages
  // and lints both VPC branches in full (infra/scripts/package-check.sh); here the VPC choice is
  // checked through the stack parameters that carry it.
  const CLUSTER = 'alpha.prod_1';
  const VPC = { subnetIds: 'subnet-0aaa1111,subnet-0bbb2222', securityGroupIds: 'sg-0ccc3333' };
  const packaged: { value?: { template: Obj; stackName: string } } = {};
  beforeAll(() => {
    packaged.value = packageWith({ clusterName: CLUSTER, ...VPC });
  }, 300_000);
  const stack = () => { if (!packaged.value) throw new Error('not packaged'); return packaged.value; };

  const physical = ({ template, stackName }: { template: Obj; stackName: string }): string[] => {
    const found = [stackName];
    for (const [type, property] of Object.entries(NAME_PROPERTY)) {
      for (const [id, resource] of resourcesOf(template, type)) {
        const name = at(resource, 'Properties', property);
        expect(typeof name, `${id}.${property} is a plain name`).toBe('string');
        found.push(String(name));
      }
    }
    return found;
  };

  it('names the stack and every named resource after the cluster, so two clusters share no name', () => {
    const own = names(CLUSTER, 'ci');
    const found = physical(stack());
    expect(found.length).toBeGreaterThan(20);
    expect(stack().stackName).toBe(own.stack);
    for (const name of found) expect(name).toContain(own.base);
    // Another cluster's names (names.cjs, whose tests keep two clusters' bases apart) are not here.
    const other = Object.values(names('beta', 'ci', 'us-east-1')).map(String);
    expect(found.filter((name) => other.includes(name) || name.includes(String(names('beta', 'ci').base)))).toEqual([]);
    // The account-wide names carry the packaging region (--region us-east-1).
    for (const type of ['AWS::IAM::Role', 'AWS::CloudWatch::Dashboard']) {
      const named = resourcesOf(stack().template, type).map(([, resource]) => String(at(resource, 'Properties', NAME_PROPERTY[type] ?? '')));
      expect(named.length, type).toBeGreaterThan(0);
      for (const name of named) expect(name).toContain('-us-east-1');
    }
    expect(resourcesOf(stack().template, 'AWS::IAM::Role').map(([, r]) => at(r, 'Properties', 'RoleName')).sort()).toEqual(
      ['cloudEventsRole', 'nodeWebhookRole', 'reconcileRole', 'routeWorkerRole'].map((key) => names(CLUSTER, 'ci', 'us-east-1')[key]).sort(),
    );
  });

  it('takes the VPC params only as the defaults of the SubnetIds and SecurityGroupIds stack parameters', () => {
    // So the packaged template is one for both branches, and the parameter values decide (below).
    const parameters = objAt(stack().template, 'Parameters');
    expect(at(parameters, 'SubnetIds', 'Default')).toBe(VPC.subnetIds);
    expect(at(parameters, 'SecurityGroupIds', 'Default')).toBe(VPC.securityGroupIds);
    const text = readFileSync(`${root}serverless.yml`, 'utf8');
    expect(text.match(/param:(subnetIds|securityGroupIds)/g) ?? []).toEqual([]);
    expect(text.match(/vpc\.cjs/g)).toHaveLength(2);
    expect(at(cfnParameters, 'SubnetIds', 'Default')).toBe('${file(./infra/serverless/vpc.cjs):subnetIds}');
    expect(at(cfnParameters, 'SecurityGroupIds', 'Default')).toBe('${file(./infra/serverless/vpc.cjs):securityGroupIds}');
  });

  it('puts every function in the VPC, with the ENI policy on its role, only when the params are given', () => {
    const { template } = stack();
    for (const [given, inVpc] of [[{}, true], [{ SubnetIds: '', SecurityGroupIds: '' }, false]] as const) {
      const functions = resourcesOf(template, 'AWS::Lambda::Function');
      expect(functions).toHaveLength(4);
      for (const [id, fnResource] of functions) {
        const vpcConfig = evaluateIn(template, at(fnResource, 'Properties'), given) as Obj;
        if (inVpc) expect(vpcConfig.VpcConfig, id).toEqual({ SubnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'], SecurityGroupIds: ['sg-0ccc3333'] });
        else expect(vpcConfig, id).not.toHaveProperty('VpcConfig');
        const role = String(at(fnResource, 'Properties', 'Role', 'Fn::GetAtt', 0));
        const managed = (evaluateIn(template, at(template, 'Resources', role, 'Properties'), given) as Obj).ManagedPolicyArns;
        if (inVpc) expect(managed, role).toEqual(['arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole']);
        else expect(managed, role).toBeUndefined();
      }
    }
  });

  it('traces every function actively, and lets each role upload its traces', () => {
    const { template } = stack();
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(4);
    for (const [id, fnResource] of functions) {
      expect(at(fnResource, 'Properties', 'TracingConfig'), id).toEqual({ Mode: 'Active' });
      const role = String(at(fnResource, 'Properties', 'Role', 'Fn::GetAtt', 0));
      const policies = listAt(template, 'Resources', role, 'Properties', 'Policies');
      const uploads = policies.flatMap((policy) => listAt(policy, 'PolicyDocument', 'Statement')).filter((statement) => isObj(statement) && statement.Sid === 'XRayTraces');
      expect(uploads, role).toEqual([{ Sid: 'XRayTraces', Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' }]);
    }
  });

  it('publishes versions and points an alias `live` at each', () => {
    const { template } = stack();
    const aliases = resourcesOf(template, 'AWS::Lambda::Alias');
    expect(aliases.map(([, alias]) => at(alias, 'Properties', 'FunctionName', 'Ref')).sort()).toEqual(['CloudEventsLambdaFunction', 'NodeWebhookLambdaFunction', 'ReconcileLambdaFunction', 'RouteWorkerLambdaFunction']);
    for (const [, alias] of aliases) {
      expect(at(alias, 'Properties', 'Name')).toBe('live');
      const [version, attribute] = listAt(alias, 'Properties', 'FunctionVersion', 'Fn::GetAtt');
      expect(attribute).toBe('Version');
      expect(at(template, 'Resources', String(version), 'Type')).toBe('AWS::Lambda::Version');
    }
  });

  it('makes every trigger (schedule, SQS mapping, HTTP API, invoke permissions, async config) target the alias', () => {
    const { template } = stack();
    const functionIds = resourcesOf(template, 'AWS::Lambda::Function').map(([id]) => id);
    const seen: string[] = [];
    const isAliasArn = (value: Obj): boolean => {
      const join = value['Fn::Join'];
      if (!Array.isArray(join) || join[0] !== ':' || !Array.isArray(join[1]) || join[1].length !== 2 || join[1][1] !== 'live') return false;
      const getAtt = isObj(join[1][0]) ? join[1][0]['Fn::GetAtt'] : undefined;
      return Array.isArray(getAtt) && functionIds.includes(String(getAtt[0])) && getAtt[1] === 'Arn';
    };
    // Any reference to a function from a resource that invokes it must be the alias ARN.
    const visit = (owner: string, value: unknown): void => {
      if (Array.isArray(value)) { for (const item of value) visit(owner, item); return; }
      if (!isObj(value)) return;
      if (isAliasArn(value)) { seen.push(owner); return; }
      for (const ref of [value['Fn::GetAtt'], value.Ref]) {
        const target = Array.isArray(ref) ? String(ref[0]) : (typeof ref === 'string' ? ref : '');
        expect(functionIds.includes(target), `${owner} names ${target} unqualified, not its alias`).toBe(false);
      }
      for (const item of Object.values(value)) visit(owner, item);
    };
    const triggers = ['AWS::Events::Rule', 'AWS::Lambda::EventSourceMapping', 'AWS::ApiGatewayV2::Integration', 'AWS::Lambda::Permission'];
    for (const type of triggers) {
      const found = resourcesOf(template, type);
      expect(found.length, type).toBeGreaterThan(0);
      for (const [id, resource] of found) visit(id, at(resource, 'Properties'));
    }
    expect(new Set(seen)).toEqual(new Set(triggers.flatMap((type) => resourcesOf(template, type).map(([id]) => id))));
    for (const [id, config] of resourcesOf(template, 'AWS::Lambda::EventInvokeConfig')) expect(at(config, 'Properties', 'Qualifier'), id).toBe('live');
  });

  it('alarms on the DLQ, each function\'s errors and podroute\'s own metrics with their cluster and function', () => {
    const { template } = stack();
    const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm').map(([, alarm]) => objAt(alarm, 'Properties'));
    const key = (alarm: Obj) => `${String(alarm.Namespace)}/${String(alarm.MetricName)}`;
    expect(alarms.map(key).sort()).toEqual([
      'AWS/Lambda/Errors', 'AWS/Lambda/Errors', 'AWS/Lambda/Errors', 'AWS/SQS/ApproximateNumberOfMessagesVisible', 'AWS/SQS/ApproximateNumberOfMessagesVisible',
      'podroute/DeletionsWithheld', 'podroute/MessagesRejected', 'podroute/NodesBlocked', 'podroute/ReconcileCompleted', 'podroute/ReconcileRefused',
      'podroute/RouteTableFull', 'podroute/RouteTableHeadroom', 'podroute/WebhookDenied', 'podroute/WebhookFailures',
    ]);
    for (const alarm of alarms.filter((a) => a.Namespace === 'podroute')) {
      // The function that publishes each metric (infra/serverless/dashboard.cjs, PODROUTE_METRICS).
      const publishers = at(PODROUTE_METRICS, String(alarm.MetricName));
      expect(alarm.Dimensions, key(alarm)).toEqual([{ Name: 'cluster', Value: CLUSTER }, { Name: 'function', Value: at(publishers, 0) }]);
      expect(publishers, key(alarm)).toHaveLength(1);
    }
    const errorsOf = alarms.filter((a) => a.MetricName === 'Errors').map((a) => at(a, 'Dimensions', 0, 'Value'));
    expect(errorsOf).toEqual(expect.arrayContaining(['Reconcile', 'RouteWorker', 'NodeWebhook'].map((id) => ({ Ref: `${id}LambdaFunction` }))));
  });

  it('shows every alarmed metric on the dashboard, and every alarm in its alarm-status widget', () => {
    const { template } = stack();
    const [[, dashboard] = ['', {}]] = resourcesOf(template, 'AWS::CloudWatch::Dashboard');
    const body = dashboardBodyOf(dashboard);
    const widgets = listAt(body, 'widgets');
    // A metric as `namespace metric dim=value ...` (dimensions sorted), from a template dimension
    // list (its Ref and GetAtt resolved to the physical names in the template) or a dashboard line.
    const physicalOf = (value: unknown): string => {
      if (typeof value === 'string') return value;
      if (isObj(value) && typeof value.Ref === 'string') return String(at(template, 'Resources', value.Ref, 'Properties', 'FunctionName'));
      const [id, attribute] = isObj(value) ? listAt(value, 'Fn::GetAtt') : [];
      if (attribute === 'QueueName') return String(at(template, 'Resources', String(id), 'Properties', 'QueueName'));
      throw new Error(`cannot resolve ${JSON.stringify(value)}`);
    };
    const metricKey = (namespace: unknown, metric: unknown, dimensions: Array<[string, string]>): string =>
      [String(namespace), String(metric), ...dimensions.map(([name, value]) => `${name}=${value}`).sort()].join(' ');
    const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm').map(([, alarm]) => objAt(alarm, 'Properties'));
    const alarmed = alarms.map((alarm) => metricKey(alarm.Namespace, alarm.MetricName,
      listAt(alarm, 'Dimensions').map((dimension) => [String(at(dimension, 'Name')), physicalOf(at(dimension, 'Value'))])));
    const shown = widgets.filter((widget) => at(widget, 'type') === 'metric').flatMap((widget) => listAt(widget, 'properties', 'metrics')).flatMap((line) => {
      if (!Array.isArray(line) || typeof line[0] !== 'string') return [];
      const parts = line.filter((part): part is string => typeof part === 'string');
      const pairs: Array<[string, string]> = [];
      for (let i = 2; i + 1 < parts.length; i += 2) pairs.push([parts[i] ?? '', parts[i + 1] ?? '']);
      return [metricKey(parts[0], parts[1], pairs)];
    });
    expect(alarmed.length).toBeGreaterThan(10);
    for (const metric of alarmed) expect(shown, metric).toContain(metric);
    // The alarm-status widget lists every alarm of the stack, by ARN, and nothing else.
    const statusWidgets = widgets.filter((widget) => at(widget, 'type') === 'alarm');
    expect(statusWidgets).toHaveLength(1);
    const listed = listAt(statusWidgets[0], 'properties', 'alarms').map(String);
    expect(listed.sort()).toEqual(alarms.map((alarm) => `arn:aws:cloudwatch:us-east-1:123456789012:alarm:${String(alarm.AlarmName)}`).sort());
  });

  it('has a dashboard: nodes ready vs total, routes pending, queue depth and age, throttles, conflicts, webhook latency', () => {
    const { template } = stack();
    const [[, dashboard] = ['', {}]] = resourcesOf(template, 'AWS::CloudWatch::Dashboard');
    const body = dashboardBodyOf(dashboard);
    const metrics = listAt(body, 'widgets').filter((widget) => at(widget, 'type') === 'metric').flatMap((widget) => listAt(widget, 'properties', 'metrics'));
    const lines = metrics.map((line) => {
      if (!Array.isArray(line)) throw new Error('a metric line is an array');
      const options = line.at(-1);
      const parts = line.slice(0, -1).map(String);
      return `${parts.join(' ')}${isObj(options) && options.stat !== undefined ? ` ${String(options.stat)}` : ''}`;
    });
    const n = names(CLUSTER, 'ci');
    const own = (metric: string, fn: string) => `podroute ${metric} cluster ${CLUSTER} function ${fn}`;
    expect(lines).toEqual(expect.arrayContaining([
      `${own('NodesReady', 'reconcile')} Minimum`, `${own('NodesTotal', 'reconcile')} Maximum`, `${own('RoutesPending', 'reconcile')} Maximum`,
      `AWS/SQS ApproximateNumberOfMessagesVisible QueueName ${n.queue} Maximum`, `AWS/SQS ApproximateAgeOfOldestMessage QueueName ${n.queue} Maximum`,
      `${own('EC2Throttled', 'route-worker')} Sum`, `AWS/Lambda Throttles FunctionName ${n.routeWorker} Sum`,
      `${own('AllocationConflicts', 'node-webhook')} Sum`,
      `AWS/Lambda Duration FunctionName ${n.nodeWebhook} p50`, `AWS/Lambda Duration FunctionName ${n.nodeWebhook} p99`,
    ]));
    // Every podroute metric line names a metric of the published table; the expression line finds
    // each table's headroom (the metric with the extra dimension RouteTableId) in this cluster only.
    expect(metrics).toContainEqual([expect.objectContaining({ expression: `SEARCH('{podroute,RouteTableId,cluster,function} MetricName="RouteTableHeadroom" cluster="${CLUSTER}"', 'Maximum', 300)` })]);
    for (const line of metrics.filter((l) => Array.isArray(l) && l[0] === 'podroute')) {
      expect(Object.keys(objAt(PODROUTE_METRICS))).toContain((line as unknown[])[1]);
    }
  });
});
