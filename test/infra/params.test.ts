/**
 * infra/serverless/params.cjs: a cluster's params file, laid over serverless.yml's defaults and
 * checked with lib/config.ts before packaging. Pure cases call clusterParams on files written to a
 * temporary directory; one test runs `osls package` on a bad file and expects the one line.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '../../lib/config.ts';
import { type Obj, isObj, obj } from '../support/mapping.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));


interface ParamsModule {
  clusterParams: (input: { defaults: Obj; stage: string; cli?: Record<string, string>; repository?: string; loadConfig?: unknown }) => Obj;
  environmentOf: (params: Obj) => Record<string, string>;
  ENVIRONMENT: Record<string, string>;
  DEPLOYMENT_RULES: Record<string, unknown>;
  VPC_PARAMS: string[];
}
function checked(module: Partial<ParamsModule>): ParamsModule {
  if (typeof module.clusterParams !== 'function' || typeof module.environmentOf !== 'function' || !isObj(module.ENVIRONMENT)
    || !isObj(module.DEPLOYMENT_RULES) || !Array.isArray(module.VPC_PARAMS)) {
    throw new Error('params.cjs must export clusterParams, environmentOf, ENVIRONMENT, DEPLOYMENT_RULES and VPC_PARAMS');
  }
  return module as ParamsModule;
}
const { clusterParams, environmentOf, ENVIRONMENT, DEPLOYMENT_RULES, VPC_PARAMS } = checked(createRequire(import.meta.url)('../../infra/serverless/params.cjs') as Partial<ParamsModule>);

const sls = obj(load(readFileSync(join(root, 'serverless.yml'), 'utf8')), 'serverless.yml');
const defaults = obj(obj(sls.custom, 'custom').paramDefaults, 'custom.paramDefaults');

const scratch = mkdtempSync(join(tmpdir(), 'podroute-params-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let written = 0;
/** A repository-shaped directory whose infra/params/<stage>.json holds `content` (as is when a string). */
function repositoryWith(stage: string, content: unknown): string {
  const repository = join(scratch, `repo-${written++}`);
  mkdirSync(join(repository, 'infra', 'params'), { recursive: true });
  writeFileSync(join(repository, 'infra', 'params', `${stage}.json`), typeof content === 'string' ? content : JSON.stringify(content));
  return repository;
}

const GOOD = { clusterName: 'prod-eu', clusterCidrs: '10.244.0.0/16', mode: 'routes' };

/** The one line clusterParams throws for this file (and command-line params), or the returned params. */
function outcome(content: unknown, cli: Record<string, string> = {}): { error?: string; params?: Obj } {
  const repository = repositoryWith('prod', content);
  try {
    return { params: clusterParams({ defaults, stage: 'prod', cli, repository, loadConfig }) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

describe('params.cjs: a cluster params file, checked with lib/config.ts', () => {
  it('lays the file over the defaults', () => {
    const { params, error } = outcome({ ...GOOD, mode: 'prefixes', workerMaxConcurrency: 8 });
    expect(error).toBeUndefined();
    expect(params).toEqual({ ...defaults, ...GOOD, mode: 'prefixes', workerMaxConcurrency: 8 });
  });

  it('reads infra/params/ci.json, the stage CI packages, without complaint', () => {
    const params = clusterParams({ defaults, stage: 'ci', loadConfig });
    expect(params.clusterName).toBe('ci-cluster');
    expect(params.mode).toBe('routes');
  });

  it('reads infra/params/example.json, the file the deploy guide copies, without complaint', () => {
    expect(clusterParams({ defaults, stage: 'example', loadConfig }).clusterName).toBe('prod-eu');
  });

  it.each([
    ['a prefix length past 32', { ...GOOD, clusterCidrs: '10.244.0.0/33' }, /^podroute: infra\/params\/prod\.json: invalid podroute configuration: clusterCidrs invalid CIDR "10\.244\.0\.0\/33"$/],
    ['a mode that does not exist', { ...GOOD, mode: 'prefix' }, /^podroute: infra\/params\/prod\.json: invalid podroute configuration: mode: .*"routes"\|"prefixes"$/],
    ['a forgotten mode', { clusterName: 'prod-eu', clusterCidrs: '10.244.0.0/16' }, /^podroute: infra\/params\/prod\.json must set mode \(routes or prefixes\): no default, on purpose$/],
    ['nothing at all', {}, /must set clusterName \(.*\), clusterCidrs \(.*\), mode \(routes or prefixes\)/],
    ['a misspelt param', { ...GOOD, modes: 'prefixes' }, /^podroute: infra\/params\/prod\.json: "modes" is no podroute param/],
    ['a list where a string goes', { ...GOOD, clusterCidrs: ['10.244.0.0/16'] }, /^podroute: infra\/params\/prod\.json: clusterCidrs must be a string or a number/],
    ['prefixes mode with routes-mode masks', { ...GOOD, mode: 'prefixes', nodeMaskSizeIpv4: '24' }, /mode=prefixes needs nodeMaskSizeIpv4=28 and nodeMaskSizeIpv6=80/],
    ['a bound crossed', { ...GOOD, leaseGraceSeconds: '60' }, /leaseGraceSeconds must be a whole number from 300 to 604800, got 60/],
    ['ssm as the secret source with no secrets named', { ...GOOD, webhookSecretSource: 'ssm' }, /^podroute: infra\/params\/prod\.json: webhookSecretSource=ssm needs webhookSecretArn and webhookSigningSecretArn$/],
    ['ssm as the secret source with the signing key unnamed', { ...GOOD, webhookSecretSource: 'ssm', webhookSecretArn: 'arn:aws:ssm:eu-west-1:123456789012:parameter/podroute/token' }, /^podroute: infra\/params\/prod\.json: webhookSecretSource=ssm needs webhookSecretArn and webhookSigningSecretArn$/],
    ['text that is not JSON', '{"clusterName": "prod-eu",', /^podroute: infra\/params\/prod\.json is not JSON: /],
    ['a JSON list', '[]', /^podroute: infra\/params\/prod\.json must hold one JSON object of params$/],
  ])('refuses %s in one line', (_what, content, message) => {
    const { error, params } = outcome(content);
    expect(params).toBeUndefined();
    expect(error).toMatch(message);
    expect(error).not.toContain('\n');
  });

  const SNS = 'arn:aws:sns:eu-west-1:123456789012:podroute-page';
  it.each([
    ['workerMaxConcurrency', 1, /workerMaxConcurrency must be a whole number from 2 to 1000, got "1"$/],
    ['workerMaxConcurrency', 1001, /workerMaxConcurrency must be a whole number from 2 to 1000, got "1001"$/],
    ['workerMaxConcurrency', '2.5', /workerMaxConcurrency must be a whole number/],
    ['logRetentionDays', 31, /logRetentionDays must be one of CloudWatch Logs' retention values \(1, 3, .*3653\), got "31"$/],
    ['logRetentionDays', 0, /logRetentionDays must be one of/],
    ['reconcileReservedConcurrency', '2', /reconcileReservedConcurrency must be 1 \(one reconcile at a time\) or empty \(no reservation\), got "2"$/],
    ['webhookReservedConcurrency', '0', /webhookReservedConcurrency must be a whole number from 1 to 9999, or empty, got "0"$/],
    ['webhookReservedConcurrency', '10000', /webhookReservedConcurrency must be a whole number from 1 to 9999/],
    ['reconcileSchedule', 'every minute', /reconcileSchedule must be rate\(<n> <unit>\) or cron\(<six fields>\), got "every minute"$/],
    ['reconcileSchedule', 'rate(5 minute)', /reconcileSchedule must name the unit singular for 1 and plural otherwise/],
    ['reconcileSchedule', 'rate(1 minutes)', /reconcileSchedule must name the unit singular/],
    ['reconcileSchedule', 'rate(0 minutes)', /reconcileSchedule must be rate/],
    ['reconcileSchedule', 'rate(1 second)', /reconcileSchedule must be rate/],
    ['reconcileSchedule', 'cron(0/5 * * * ?)', /reconcileSchedule must be rate/],
    ['webhookThrottleRate', -1, /webhookThrottleRate must be a non-negative number, got "-1"$/],
    ['webhookThrottleRate', 'fast', /webhookThrottleRate must be a non-negative number/],
    ['webhookThrottleBurst', 1.5, /webhookThrottleBurst must be a whole number/],
    ['pageTopicArn', 'podroute-page', /pageTopicArn must be an SNS topic ARN .*, or empty, got "podroute-page"$/],
    ['ticketTopicArn', SNS.replace(':sns:', ':sqs:'), /ticketTopicArn must be an SNS topic ARN/],
    ['secretsKmsKeyArn', 'alias/podroute', /secretsKmsKeyArn must be a KMS key ARN/],
    ['subnetIds', 'subnet-0abc', /^podroute: infra\/params\/prod\.json: subnetIds and securityGroupIds must both be set/],
  ])('refuses a deployment setting out of its rule: %s=%s', (param, value, message) => {
    const { error, params } = outcome({ ...GOOD, [param]: value });
    expect(params).toBeUndefined();
    expect(error).toMatch(/^podroute: infra\/params\/prod\.json: /);
    expect(error).toMatch(message);
    expect(error).not.toContain('\n');
  });

  it.each([
    ['workerMaxConcurrency', 2], ['workerMaxConcurrency', '1000'],
    ['logRetentionDays', 1], ['logRetentionDays', '3653'], ['logRetentionDays', 1096],
    ['reconcileReservedConcurrency', ''], ['webhookReservedConcurrency', ''], ['webhookReservedConcurrency', '9999'],
    ['reconcileSchedule', 'rate(1 minute)'], ['reconcileSchedule', 'rate(5 minutes)'], ['reconcileSchedule', 'rate(1 day)'],
    ['reconcileSchedule', 'cron(0/5 * * * ? *)'], ['reconcileSchedule', 'cron(0 8 ? * MON-FRI *)'],
    ['webhookThrottleRate', 0], ['webhookThrottleRate', '12.5'], ['webhookThrottleBurst', 0],
    ['pageTopicArn', SNS], ['ticketTopicArn', 'arn:aws-cn:sns:cn-north-1:123456789012:ticket.fifo'],
    ['secretsKmsKeyArn', 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'],
  ])('takes %s=%s', (param, value) => {
    expect(outcome({ ...GOOD, [param]: value }).error).toBeUndefined();
  });

  it('has a rule for every deployment setting, one for each param no function reads', () => {
    const deployment = Object.keys(defaults).filter((key) => !(key in ENVIRONMENT));
    expect([...Object.keys(DEPLOYMENT_RULES), ...VPC_PARAMS].sort()).toEqual(deployment.sort());
  });

  it.each([
    ['workerMaxConcurrency', '1'], ['logRetentionDays', '31'],
  ])('checks %s=%s on the command line', (param, value) => {
    expect(outcome(GOOD, { [param]: value }).error).toMatch(new RegExp(`with the --param values: ${param} must`));
  });

  it.each([
    ['a bad value on the command line', { clusterCidrs: '10.244.0.0/33' }, /^podroute: infra\/params\/prod\.json with the --param values: .*clusterCidrs invalid CIDR/],
    ['a bad mode on the command line', { mode: 'prefix' }, /with the --param values: .*mode: /],
  ])('checks the file with %s', (_what, cli, message) => {
    const { error } = outcome(GOOD, cli);
    expect(error).toMatch(message);
  });

  it.each([
    ['a misspelt param', { modes: 'prefixes' }],
    ['a misspelt param beside good ones', { paramsFile: 'infra/params/prod.json', mode: 'routes', clusterCidr: '10.0.0.0/16' }],
  ])('refuses %s on the command line, as in the file', (_what, cli) => {
    const { error, params } = outcome(GOOD, cli);
    expect(params).toBeUndefined();
    expect(error).toMatch(/^podroute: --param "(modes|clusterCidr)" is no podroute param \(serverless\.yml custom\.paramDefaults lists them\)$/);
  });

  it('takes a good value on the command line over a bad one in the file, as the framework applies it', () => {
    expect(outcome({ ...GOOD, mode: 'prefix' }, { mode: 'routes' }).error).toBeUndefined();
  });

  it('says which file is missing, and where to start one', () => {
    expect(() => clusterParams({ defaults, stage: 'nowhere', repository: scratch, loadConfig }))
      .toThrow(/^podroute: no params file infra\/params\/nowhere\.json: write one for this cluster \(infra\/params\/example\.json/);
  });

  it('reads the file --param paramsFile names instead of the stage\'s (two clusters in one stage)', () => {
    const repository = repositoryWith('prod', GOOD);
    writeFileSync(join(repository, 'batch.json'), JSON.stringify({ ...GOOD, clusterName: 'batch-eu' }));
    const params = clusterParams({ defaults, stage: 'prod', cli: { paramsFile: 'batch.json' }, repository, loadConfig });
    expect(params.clusterName).toBe('batch-eu');
  });
});

/** The params a value of serverless.yml reads: `${param:x}` in it, or in the default of a stack parameter it refers to. */
function paramsRead(value: unknown, parameters: Obj): string[] {
  const text = JSON.stringify(value);
  const direct = [...text.matchAll(/\$\{param:(\w+)/g)].map((match) => match[1] ?? '');
  const viaStack = [...text.matchAll(/"Ref":"(\w+)"/g)].flatMap((match) => {
    const parameter = parameters[match[1] ?? ''];
    return isObj(parameter) ? [...JSON.stringify(parameter.Default).matchAll(/\$\{param:(\w+)/g)].map((m) => m[1] ?? '') : [];
  });
  return [...new Set([...direct, ...viaStack])];
}

describe('params.cjs: the environment it checks is the one serverless.yml gives the functions', () => {
  const parameters = obj(obj(sls.resources, 'resources').Parameters, 'resources.Parameters');
  const provider = obj(obj(sls.provider, 'provider').environment, 'provider.environment');
  const webhook = obj(obj(obj(sls.functions, 'functions').nodeWebhook, 'nodeWebhook').environment, 'nodeWebhook.environment');
  const environment: Obj = { ...provider, ...webhook };
  const configVariables = Object.keys(configSchema().shape);

  it.each(Object.entries(ENVIRONMENT))('%s sets %s', (param, variable) => {
    expect(paramsRead(environment[variable], parameters)).toContain(param);
  });

  it('maps every config variable serverless.yml sets from a param, and none it sets otherwise', () => {
    const fromParams = configVariables.filter((variable) => paramsRead(environment[variable], parameters).length > 0);
    expect(Object.values(ENVIRONMENT).sort()).toEqual(fromParams.sort());
  });

  it('gives lib/config.ts what the functions get: the defaults load as the bare defaults do', () => {
    const env = environmentOf({ ...defaults, ...GOOD });
    const config = loadConfig(env);
    const bare = loadConfig({ CLUSTER_NAME: GOOD.clusterName, CLUSTER_CIDRS: GOOD.clusterCidrs });
    expect({ ...config, queueUrl: '', cidrTableName: '', webhookSecret: bare.webhookSecret }).toEqual(bare);
    expect(config.webhookSecret.id).not.toBe(config.webhookSecret.signingKeyId);
    expect(env).not.toHaveProperty('KUBE_SECRET_ID');
  });
});

describe('osls package with a bad params file', () => {
  it('fails before packaging, with the one line', async () => {
    const file = join(scratch, 'bad.json');
    writeFileSync(file, JSON.stringify({ ...GOOD, clusterCidrs: '10.244.0.0/33', mode: 'prefix' }));
    const out = mkdtempSync(join(scratch, 'package-'));
    const run = promisify(execFile)('npx', ['--no-install', 'osls', 'package', '--stage', 'ci', '--region', 'us-east-1', '--package', out, `--param=paramsFile=${file}`], {
      cwd: root,
      env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
    });
    const failure: unknown = await run.then(() => null, (error: unknown) => error);
    if (!isObj(failure)) throw new Error('osls package succeeded with a bad params file');
    const output = `${String(failure.stdout)}${String(failure.stderr)}`;
    const lines = output.split('\n').filter((line) => line.includes('podroute:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`podroute: ${file}: invalid podroute configuration: clusterCidrs invalid CIDR "10.244.0.0/33"; mode: `);
    expect(output).not.toMatch(/^\s+at /m);
  }, 120_000);
});
