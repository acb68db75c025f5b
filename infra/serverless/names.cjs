/* global module, require */
'use strict';

/**
 * Physical names of one podroute deployment, all built from the cluster name and the stage, so
 * that two clusters deploy side by side in one account and region (whatever the stage) and a
 * name in the console says which cluster it belongs to.
 *
 * serverless.yml reads them with `${file(./infra/serverless/names.cjs):<key>}`.
 *
 * Every name is a `base` plus a suffix. The base uses only letters, digits and `-`, the alphabet
 * that every name below accepts, and is at most BASE_MAX characters long:
 *  - CloudFormation stack name: [a-zA-Z][-a-zA-Z0-9]*, at most 128 (AWS::CloudFormation docs,
 *    CreateStack StackName);
 *  - Lambda function name: [a-zA-Z0-9-_]+, at most 64 (Lambda API CreateFunction FunctionName);
 *  - IAM role name: [\w+=,.@-]+, at most 64 (IAM API CreateRole RoleName);
 *  - SQS queue name: alphanumerics, `-` and `_`, at most 80 (SQS API CreateQueue QueueName);
 *  - EventBridge rule name: [.\-_A-Za-z0-9]+, at most 64 (EventBridge API PutRule Name);
 *  - CloudWatch dashboard name: A-Z a-z 0-9 `-` `_`, at most 255 (PutDashboard DashboardName);
 *  - DynamoDB table name: [a-zA-Z0-9_.-]+, 3 to 255 (CreateTable TableName);
 *  - Secrets Manager secret name: letters, digits and /_+=.@-, at most 512 (CreateSecret Name).
 * The longest suffix is `-route-worker` (13), so a function or role name is at most 53 characters.
 *
 * A cluster name may contain `_` and `.` (lib/config.ts) and be 100 characters long; then the base
 * keeps a readable prefix and ends in 8 hex digits of SHA-256 over cluster and stage, so two
 * clusters whose names differ only there still get different names.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file the framework require()s
const { createHash } = require('node:crypto');

const CLUSTER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const STAGE = /^[A-Za-z0-9-]{1,32}$/;
const BASE_MAX = 40;

function physicalNames(clusterName, stage) {
  if (typeof clusterName !== 'string' || !CLUSTER_NAME.test(clusterName)) {
    throw new Error(`podroute: clusterName ${JSON.stringify(clusterName)} is not a cluster name (letters, digits, - _ .)`);
  }
  if (typeof stage !== 'string' || !STAGE.test(stage)) {
    throw new Error(`podroute: stage ${JSON.stringify(stage)} must be 1 to 32 letters, digits or -`);
  }
  let base = `podroute-${clusterName}-${stage}`;
  if (!/^[A-Za-z0-9-]+$/.test(base) || base.length > BASE_MAX) {
    const hash = createHash('sha256').update(`${clusterName}\0${stage}`).digest('hex').slice(0, 8);
    const readable = clusterName.replace(/[^A-Za-z0-9-]/g, '-').slice(0, BASE_MAX - 'podroute-'.length - 1 - hash.length);
    base = `podroute-${readable}-${hash}`.replace(/--+/g, '-');
  }
  return {
    base,
    stack: base,
    reconcile: `${base}-reconcile`,
    routeWorker: `${base}-route-worker`,
    nodeWebhook: `${base}-node-webhook`,
    queue: `${base}-work`,
    deadLetterQueue: `${base}-dlq`,
    table: `${base}-cidrs`,
    webhookSecret: `podroute/${base}/webhook-token`,
    schedule: `${base}-reconcile`,
    dashboard: base,
    httpApi: base,
    alarmPrefix: base,
  };
}

/** Serverless Framework file source: `${file(./infra/serverless/names.cjs):stack}` and so on. */
module.exports = async ({ resolveVariable }) =>
  physicalNames(await resolveVariable('param:clusterName'), await resolveVariable('sls:stage'));
module.exports.physicalNames = physicalNames;
module.exports.BASE_MAX = BASE_MAX;
