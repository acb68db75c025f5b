/* global module, require */
'use strict';

/**
 * Physical names of one podroute deployment, built from the cluster name, the stage and the
 * region, so that two clusters deploy side by side in one account (whatever the stage and region)
 * and a name in the console says which cluster it belongs to.
 *
 * Most names are regional (a Lambda function, queue, table, secret, rule or stack of the same name
 * may exist in each region) and are built from cluster and stage. Two kinds are account-wide and
 * also carry the region, so that a cluster `prod` in us-east-1 and one in eu-west-1 do not collide:
 *  - IAM roles: IAM names are unique within the account, whatever the region (IAM API CreateRole,
 *    RoleName: "names must be unique within the account"; IAM ARNs carry no region);
 *  - CloudWatch dashboards: "All dashboards in your account are global, not region-specific"
 *    (CloudWatch API PutDashboard), and PutDashboard on an existing name replaces that dashboard.
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
 *  - Secrets Manager secret name: letters, digits and /_+=.@-, at most 512 (CreateSecret Name);
 *  - SNS topic name: letters, digits, `_` and `-`, 1 to 256 (SNS API CreateTopic Name).
 * The longest suffix is `-route-worker` (13), so a function name is at most 53 characters. A role
 * name is `<base>-<region>-<function>`; when that would pass 64 characters, its `<base>-<region>`
 * part becomes, like the base above, `podroute-` and a readable prefix of the cluster name ending
 * in 8 hex digits of SHA-256, here over cluster, stage and region.
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
// An AWS region name: lowercase words and digits joined by `-` (us-east-1, ap-southeast-5, us-gov-west-1).
const REGION = /^[a-z]{2,}(-[a-z0-9]+)*-[0-9]+$/;
const ROLE_MAX = 64;
const LONGEST_SUFFIX = '-route-worker';

const hash8 = (...parts) => createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 8);

function physicalNames(clusterName, stage, region) {
  if (typeof clusterName !== 'string' || !CLUSTER_NAME.test(clusterName)) {
    throw new Error(`podroute: clusterName ${JSON.stringify(clusterName)} is not a cluster name (letters, digits, - _ .)`);
  }
  if (typeof stage !== 'string' || !STAGE.test(stage)) {
    throw new Error(`podroute: stage ${JSON.stringify(stage)} must be 1 to 32 letters, digits or -`);
  }
  if (typeof region !== 'string' || region.length > 32 || !REGION.test(region)) {
    throw new Error(`podroute: region ${JSON.stringify(region)} is not an AWS region name (like eu-west-1)`);
  }
  let base = `podroute-${clusterName}-${stage}`;
  if (!/^[A-Za-z0-9-]+$/.test(base) || base.length > BASE_MAX) {
    const hash = hash8(clusterName, stage);
    const readable = clusterName.replace(/[^A-Za-z0-9-]/g, '-').slice(0, BASE_MAX - 'podroute-'.length - 1 - hash.length);
    base = `podroute-${readable}-${hash}`.replace(/--+/g, '-');
  }
  // Account-wide names: the base and the region, within a role name's 64 characters.
  let global = `${base}-${region}`;
  const globalMax = ROLE_MAX - LONGEST_SUFFIX.length;
  if (global.length > globalMax) {
    const hash = hash8(clusterName, stage, region);
    const readable = clusterName.replace(/[^A-Za-z0-9-]/g, '-').slice(0, globalMax - 'podroute-'.length - 1 - hash.length);
    global = `podroute-${readable}-${hash}`.replace(/--+/g, '-');
  }
  return {
    base,
    global,
    stack: base,
    reconcile: `${base}-reconcile`,
    routeWorker: `${base}-route-worker`,
    nodeWebhook: `${base}-node-webhook`,
    cloudEvents: `${base}-cloud-events`,
    instanceStateRule: `${base}-instance-state`,
    routeWritesRule: `${base}-route-writes`,
    eventsDeadLetterQueue: `${base}-events-dlq`,
    queue: `${base}-work`,
    deadLetterQueue: `${base}-dlq`,
    table: `${base}-cidrs`,
    webhookSecret: `podroute/${base}/webhook-token`,
    webhookSigningSecret: `podroute/${base}/webhook-signing-key`,
    schedule: `${base}-reconcile`,
    reconcileRole: `${global}-reconcile`,
    routeWorkerRole: `${global}-route-worker`,
    nodeWebhookRole: `${global}-node-webhook`,
    cloudEventsRole: `${global}-cloud-events`,
    dashboard: global,
    httpApi: base,
    alarmPrefix: base,
    // The alarms' two SNS topics, when the stack creates them (serverless.yml PageTopic, TicketTopic).
    pageTopic: `${base}-page`,
    ticketTopic: `${base}-ticket`,
  };
}

/** Serverless Framework file source: `${file(./infra/serverless/names.cjs):stack}` and so on. */
module.exports = async ({ resolveVariable }) =>
  physicalNames(await resolveVariable('param:clusterName'), await resolveVariable('sls:stage'), await resolveVariable('self:provider.region'));
module.exports.physicalNames = physicalNames;
module.exports.BASE_MAX = BASE_MAX;
