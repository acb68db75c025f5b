/* global module, require, __dirname, __filename */
'use strict';

/**
 * A cluster's params, read from one file and checked before anything is packaged.
 *
 * serverless.yml's `params.default` is `${file(./infra/serverless/params.cjs):params}`: the
 * defaults in `custom.paramDefaults`, with the cluster's file laid over them. The file is
 * `infra/params/<stage>.json`, or the one `--param="paramsFile=<path>"` names (two clusters in one
 * stage). A `--param` given on the command line still wins over both, as the framework's param
 * source has it, and is checked with them.
 *
 * The check is lib/config.ts's loadConfig, the code every function runs at cold start, over the
 * environment serverless.yml gives the functions (ENVIRONMENT below; a test compares the two). So a
 * value a function would refuse (`clusterCidrs=10.244.0.0/33`, `mode=prefix`), a param without a
 * default left out (`mode`), a key no param has (`modes`) or a missing file fails `osls package`
 * and `osls deploy` with one line that names the file, before a stack changes. The deployment
 * settings no function reads (`workerMaxConcurrency=1`, `logRetentionDays=31`) get a rule each here.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS file the framework require()s */
const { existsSync, readFileSync } = require('node:fs');
const { isAbsolute, join, relative } = require('node:path');
const { vpcParams } = require('./vpc.cjs');
/* eslint-enable @typescript-eslint/no-require-imports */

const REPOSITORY = join(__dirname, '..', '..');

/**
 * The environment variable each param sets in serverless.yml (provider.environment, and the
 * webhook's own environment), for the params that lib/config.ts reads. The others are deployment
 * settings (schedule, throttling, alarms, VPC, retention) that no function reads; DEPLOYMENT_RULES
 * below checks those.
 */
const ENVIRONMENT = {
  clusterName: 'CLUSTER_NAME',
  clusterCidrs: 'CLUSTER_CIDRS',
  nodeMaskSizeIpv4: 'NODE_MASK_SIZE_IPV4',
  nodeMaskSizeIpv6: 'NODE_MASK_SIZE_IPV6',
  migrationMaskSizes: 'MIGRATION_MASK_SIZES',
  mode: 'MODE',
  nodeSyncMode: 'NODE_SYNC_MODE',
  prefixReservationDescription: 'PREFIX_RESERVATION_DESCRIPTION',
  routeTableIds: 'ROUTE_TABLE_IDS',
  kubeAuth: 'KUBE_AUTH',
  eksClusterName: 'EKS_CLUSTER_NAME',
  kubeSecretArn: 'KUBE_SECRET_ID',
  webhookSecretSource: 'WEBHOOK_SECRET_SOURCE',
  webhookSecretArn: 'WEBHOOK_SECRET_ID',
  webhookSigningSecretArn: 'WEBHOOK_SIGNING_SECRET_ID',
  maxDeleteShare: 'MAX_DELETE_SHARE',
  minDeletesForGuard: 'MIN_DELETES_FOR_GUARD',
  leaseGraceSeconds: 'LEASE_GRACE_SECONDS',
  blockedNodeSeconds: 'BLOCKED_NODE_SECONDS',
  routeQuota: 'ROUTE_QUOTA',
  nodeSelector: 'NODE_SELECTOR',
  writes: 'WRITES',
};

/** Params that are not written in serverless.yml's defaults: `eksClusterName` falls back to `clusterName` there. */
const OPTIONAL_WITHOUT_DEFAULT = ['eksClusterName'];

/** What the params without a default hold, for the line that says one is missing. */
const REQUIRED_HINT = { clusterName: 'the Kubernetes cluster name', clusterCidrs: 'its pod CIDRs, comma-separated', mode: 'routes or prefixes' };

/** A param only this file reads: where the cluster's params live. */
const PARAMS_FILE = 'paramsFile';

/**
 * What the stack gives a function for a secret it generates, so that the config sees an id as
 * deployed. The stack generates Secrets Manager secrets only: with source ssm both ids must be given.
 */
const GENERATED = { webhookSecretArn: '<generated webhook token>', webhookSigningSecretArn: '<generated signing key>' };

const whole = (min, max) => (value) => (/^(0|[1-9][0-9]*)$/.test(value) && Number(value) >= min && Number(value) <= max
  ? undefined : `must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
const emptyOr = (rule, what) => (value) => (value === '' ? undefined : rule(value) === undefined ? undefined : `must be ${what}, or empty, got ${JSON.stringify(value)}`);
const matching = (pattern, what) => (value) => (pattern.test(value) ? undefined : `must be ${what}, got ${JSON.stringify(value)}`);

/** CloudWatch Logs API Reference, PutRetentionPolicy: the values retentionInDays may take. */
const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

/**
 * EventBridge User Guide, "Rate expressions reference": rate(value unit), value a positive whole
 * number, the unit singular for 1 and plural above; "Cron expressions": cron(fields), six fields
 * separated by white space.
 */
function scheduleProblem(value) {
  const rate = /^rate\(([1-9][0-9]*) (minute|hour|day)(s?)\)$/.exec(value);
  if (rate) return (rate[1] === '1') === (rate[3] === '') ? undefined : `must name the unit singular for 1 and plural otherwise (rate(1 minute), rate(5 minutes)), got ${JSON.stringify(value)}`;
  if (/^cron\([0-9A-Za-z,*?/#-]+( [0-9A-Za-z,*?/#-]+){5}\)$/.test(value)) return undefined;
  return `must be rate(<n> <unit>) or cron(<six fields>), got ${JSON.stringify(value)}`;
}

const nonNegative = (value) => (/^[0-9]+(\.[0-9]+)?$/.test(value) ? undefined : `must be a non-negative number, got ${JSON.stringify(value)}`);
const SNS_TOPIC = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,251}(\.fifo)?$/;

/**
 * A rule for each deployment setting (the params no function reads: lib/config.ts checks the
 * others), so that a value CloudFormation or the service would refuse fails packaging instead of a
 * deploy. Each returns what is wrong, or undefined. The stack parameters' AllowedPattern in
 * serverless.yml accepts every value these accept.
 */
const DEPLOYMENT_RULES = {
  reconcileSchedule: scheduleProblem,
  // Lambda API Reference, ScalingConfig: MaximumConcurrency, minimum 2, maximum 1000.
  workerMaxConcurrency: whole(2, 1000),
  // AWS::ApiGatewayV2::Stage RouteSettings: ThrottlingRateLimit a Double, ThrottlingBurstLimit an Integer.
  webhookThrottleRate: nonNegative,
  webhookThrottleBurst: whole(0, Number.MAX_SAFE_INTEGER),
  webhookReservedConcurrency: emptyOr(whole(1, 9999), 'a whole number from 1 to 9999'),
  reconcileReservedConcurrency: matching(/^1?$/, '1 (one reconcile at a time) or empty (no reservation)'),
  cloudEventsReservedConcurrency: emptyOr(whole(1, 9999), 'a whole number from 1 to 9999'),
  logRetentionDays: (value) => (LOG_RETENTION_DAYS.map(String).includes(value) ? undefined : `must be one of CloudWatch Logs' retention values (${LOG_RETENTION_DAYS.join(', ')}), got ${JSON.stringify(value)}`),
  pageTopicArn: emptyOr(matching(SNS_TOPIC, ''), 'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)'),
  ticketTopicArn: emptyOr(matching(SNS_TOPIC, ''), 'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)'),
  secretsKmsKeyArn: emptyOr(matching(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key\/[A-Za-z0-9-]+$/, ''), 'a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)'),
};
/** Deployment settings infra/serverless/vpc.cjs checks, as a pair. */
const VPC_PARAMS = ['subnetIds', 'securityGroupIds'];

/** What is wrong with the deployment settings of `params`, in param terms, or undefined. */
function deploymentProblem(params) {
  const secretSource = String(params.webhookSecretSource ?? 'secretsmanager');
  if (secretSource === 'ssm' && Object.keys(GENERATED).some((key) => String(params[key] ?? '') === '')) {
    return 'webhookSecretSource=ssm needs webhookSecretArn and webhookSigningSecretArn';
  }
  for (const [param, rule] of Object.entries(DEPLOYMENT_RULES)) {
    if (params[param] === undefined) continue;
    const problem = rule(String(params[param]));
    if (problem !== undefined) return `${param} ${problem}`;
  }
  try {
    vpcParams(params.subnetIds, params.securityGroupIds);
  } catch (error) {
    return String(error instanceof Error ? error.message : error).replace(/^podroute: /, '');
  }
  return undefined;
}

/** The `--param` values of the command line, parsed as the framework's param source parses them. */
function cliParams(options) {
  const given = options && options.param;
  const items = given === undefined ? [] : Array.isArray(given) ? given : [given];
  const params = {};
  for (const item of items) {
    const match = /^([^=]+)=(.+)$/.exec(String(item));
    if (match) params[match[1]] = match[2].trimEnd();
  }
  return params;
}

/**
 * Throws the one line. The framework prints a failed file source's `stack` when it has one; this
 * error's stack is its message, so the line is not buried under frames of the framework's resolver.
 */
const fail = (message) => {
  const error = new Error(`podroute: ${message}`);
  error.stack = error.message;
  throw error;
};

/** The cluster's file as an object of params; every problem is one line naming the file. */
function readParamsFile(path, shown, known) {
  if (!existsSync(path)) {
    fail(`no params file ${shown}: write one for this cluster (infra/params/example.json shows every key; docs/deploy/eks.md)`);
  }
  let data;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fail(`${shown} is not JSON: ${String(error.message).split('\n')[0]}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail(`${shown} must hold one JSON object of params`);
  for (const [key, value] of Object.entries(data)) {
    if (key === PARAMS_FILE) fail(`${shown}: ${PARAMS_FILE} is a --param only (it names this file)`);
    if (!known.has(key)) fail(`${shown}: ${JSON.stringify(key)} is no podroute param (serverless.yml custom.paramDefaults lists them)`);
    if (typeof value !== 'string' && typeof value !== 'number') fail(`${shown}: ${key} must be a string or a number, got ${JSON.stringify(value)}`);
  }
  return data;
}

/**
 * The environment serverless.yml gives the functions for these params, as lib/config.ts reads it.
 * The queue URL and table name are the stack's own resources; placeholders stand in for them.
 */
function environmentOf(params) {
  const env = { QUEUE_URL: '<WorkQueue>', CIDR_TABLE_NAME: '<CidrTable>' };
  for (const [param, variable] of Object.entries(ENVIRONMENT)) {
    const value = params[param];
    if (value !== undefined) env[variable] = String(value);
  }
  if (env.EKS_CLUSTER_NAME === undefined) env.EKS_CLUSTER_NAME = env.CLUSTER_NAME;
  if (env.KUBE_SECRET_ID === '') delete env.KUBE_SECRET_ID;
  const generates = env.WEBHOOK_SECRET_SOURCE === undefined || env.WEBHOOK_SECRET_SOURCE === 'secretsmanager';
  for (const [param, placeholder] of Object.entries(GENERATED)) {
    if (generates && env[ENVIRONMENT[param]] === '') env[ENVIRONMENT[param]] = placeholder;
  }
  return env;
}

/** lib/config.ts's message with each variable named as the param that sets it. */
function inParamTerms(message) {
  const byLength = Object.entries(ENVIRONMENT).sort(([, a], [, b]) => b.length - a.length);
  return byLength.reduce((text, [param, variable]) => text.replace(new RegExp(`\\b${variable}\\b`, 'g'), param), message);
}

/** lib/config.ts, loaded from its TypeScript source (tsx, a dev dependency like osls itself). */
function loadConfigFunction() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file the framework require()s
  const { require: requireTs } = require('tsx/cjs/api');
  return requireTs('../../lib/config.ts', __filename).loadConfig;
}

/**
 * The params of one cluster: `defaults` with the file's over them; throws one line when the file,
 * or the file with `cli` over it, is not a configuration the functions would start with.
 */
function clusterParams({ defaults, stage, cli = {}, repository = REPOSITORY, loadConfig = loadConfigFunction() }) {
  const path = cli[PARAMS_FILE] !== undefined
    ? (isAbsolute(cli[PARAMS_FILE]) ? cli[PARAMS_FILE] : join(repository, cli[PARAMS_FILE]))
    : join(repository, 'infra', 'params', `${stage}.json`);
  const shown = relative(repository, path).startsWith('..') ? path : relative(repository, path);
  const known = new Set([...Object.keys(defaults), ...Object.keys(ENVIRONMENT)]);
  const file = readParamsFile(path, shown, known);
  for (const key of Object.keys(cli)) {
    if (key !== PARAMS_FILE && !known.has(key)) fail(`--param ${JSON.stringify(key)} is no podroute param (serverless.yml custom.paramDefaults lists them)`);
  }
  const merged = { ...defaults, ...file };
  const effective = { ...merged, ...cli };
  const withCli = Object.keys(cli).some((key) => key !== PARAMS_FILE) ? ' with the --param values' : '';
  const missing = [...known].filter((key) => effective[key] === undefined && !OPTIONAL_WITHOUT_DEFAULT.includes(key));
  if (missing.length > 0) {
    fail(`${shown} must set ${missing.map((key) => (REQUIRED_HINT[key] ? `${key} (${REQUIRED_HINT[key]})` : key)).join(', ')}: no default, on purpose`);
  }
  const problem = deploymentProblem(effective);
  if (problem !== undefined) fail(`${shown}${withCli}: ${problem}`);
  try {
    loadConfig(environmentOf(effective));
  } catch (error) {
    fail(`${shown}${withCli}: ${inParamTerms(error instanceof Error ? error.message : String(error))}`);
  }
  return merged;
}

/** Serverless Framework file source, resolved with the instance-independent variables (file, self, opt). */
module.exports = async ({ options, resolveVariable }) => {
  const stage = options && options.stage ? options.stage : await resolveVariable('self:provider.stage');
  const defaults = await resolveVariable('self:custom.paramDefaults');
  return { params: clusterParams({ defaults, stage, cli: cliParams(options) }) };
};
module.exports.clusterParams = clusterParams;
module.exports.environmentOf = environmentOf;
module.exports.ENVIRONMENT = ENVIRONMENT;
module.exports.DEPLOYMENT_RULES = DEPLOYMENT_RULES;
module.exports.VPC_PARAMS = VPC_PARAMS;
