/**
 * The EventBridge events the emulator sends as EC2 and CloudTrail would (the sandbox's event bus
 * hands them to the cloud-events function):
 *
 * - `EC2 Instance State-change Notification` (Amazon EC2 User Guide, "State change events for
 *   Amazon EC2 instances"): source `aws.ec2`, the instance's ARN in `resources`, `detail` with
 *   `instance-id` and `state`;
 * - `AWS API Call via CloudTrail` for CreateRoute, ReplaceRoute and DeleteRoute (AWS CloudTrail User
 *   Guide, "CloudTrail record contents for management events", "CloudTrail userIdentity element"):
 *   the caller in `userIdentity` (an assumed role carries `sessionContext.sessionIssuer`), the
 *   call's parameters in camel case in `requestParameters`, `errorCode`/`errorMessage` for a call
 *   that failed (CloudTrail records those too).
 */
import { randomUUID } from 'node:crypto';
import { ACCOUNT_ID } from './records.ts';

const REGION = 'us-east-1';
export const ROUTE_WRITE_ACTIONS: readonly string[] = ['CreateRoute', 'ReplaceRoute', 'DeleteRoute'];

/** Who signed a request: an IAM user or an assumed role's session. */
export type CallerIdentity = { type: 'IAMUser'; arn: string } | { type: 'AssumedRole'; arn: string; roleArn: string };

/** The caller of an access key id: `role:<name>` keys are sessions of that role, any other key an IAM user of its name. */
export function callerOf(accessKeyId: string): CallerIdentity {
  if (accessKeyId.startsWith('role:')) {
    const role = accessKeyId.slice('role:'.length);
    return { type: 'AssumedRole', arn: `arn:aws:sts::${ACCOUNT_ID}:assumed-role/${role}/session`, roleArn: `arn:aws:iam::${ACCOUNT_ID}:role/${role}` };
  }
  return { type: 'IAMUser', arn: `arn:aws:iam::${ACCOUNT_ID}:user/${accessKeyId}` };
}

const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function instanceStateEvent(instanceId: string, state: string, nowMs: number): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'EC2 Instance State-change Notification',
    source: 'aws.ec2',
    account: ACCOUNT_ID,
    time: isoSeconds(nowMs),
    region: REGION,
    resources: [`arn:aws:ec2:${REGION}:${ACCOUNT_ID}:instance/${instanceId}`],
    detail: { 'instance-id': instanceId, state },
  };
}

/** The camel-case request parameters of a route call, as CloudTrail records them. */
function requestParameters(params: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name === 'Action' || name === 'Version') continue;
    out[name.charAt(0).toLowerCase() + name.slice(1)] = value;
  }
  return out;
}

export function routeWriteEvent(input: { action: string; params: ReadonlyMap<string, string>; caller: CallerIdentity; requestId: string; error?: { code: string; message: string }; nowMs: number }): Record<string, unknown> {
  const { caller } = input;
  const userIdentity =
    caller.type === 'AssumedRole'
      ? { type: 'AssumedRole', arn: caller.arn, accountId: ACCOUNT_ID, sessionContext: { sessionIssuer: { type: 'Role', arn: caller.roleArn, accountId: ACCOUNT_ID } } }
      : { type: 'IAMUser', arn: caller.arn, accountId: ACCOUNT_ID, userName: caller.arn.slice(caller.arn.lastIndexOf('/') + 1) };
  const time = isoSeconds(input.nowMs);
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'AWS API Call via CloudTrail',
    source: 'aws.ec2',
    account: ACCOUNT_ID,
    time,
    region: REGION,
    resources: [],
    detail: {
      eventVersion: '1.09',
      userIdentity,
      eventTime: time,
      eventSource: 'ec2.amazonaws.com',
      eventName: input.action,
      awsRegion: REGION,
      sourceIPAddress: '127.0.0.1',
      requestParameters: requestParameters(input.params),
      ...(input.error ? { errorCode: input.error.code, errorMessage: input.error.message } : { responseElements: { requestId: input.requestId, _return: true } }),
      requestID: input.requestId,
      eventID: randomUUID(),
      readOnly: false,
      eventType: 'AwsApiCall',
      managementEvent: true,
      recipientAccountId: ACCOUNT_ID,
    },
  };
}
