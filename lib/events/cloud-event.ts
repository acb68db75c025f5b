/**
 * The two EventBridge events the cloud-events function takes, validated strictly and reduced to
 * what names the work (a hint, never the truth: lib/usecases/cloud-events.ts re-reads EC2).
 *
 * - `EC2 Instance State-change Notification` (source `aws.ec2`): `detail["instance-id"]` and
 *   `detail.state`, one of pending, running, stopping, stopped, shutting-down, terminated (Amazon
 *   EC2 User Guide, "State change events for Amazon EC2 instances").
 * - `AWS API Call via CloudTrail` (source `aws.ec2`, `detail.eventSource` `ec2.amazonaws.com`) for
 *   CreateRoute, ReplaceRoute and DeleteRoute: `detail.requestParameters` carries the call's own
 *   parameters in camel case (`routeTableId`, `destinationCidrBlock` or `destinationIpv6CidrBlock`),
 *   `detail.userIdentity` the caller (`arn`; for an assumed role `sessionContext.sessionIssuer.arn`
 *   is the role), and a failed call carries `errorCode` (AWS CloudTrail User Guide, "CloudTrail
 *   record contents for management events" and "CloudTrail userIdentity element"). EventBridge
 *   gets these only from an account with a trail that logs management events (Amazon EventBridge
 *   User Guide, "Events from AWS services": "To record events with a detail-type value of AWS API
 *   Call via CloudTrail, a CloudTrail trail with logging enabled is required").
 *
 * Anything else (another source, detail type, event name, a destination that is not one canonical
 * CIDR of the family its parameter names, a prefix-list destination) is `InvalidInputError`.
 */
import * as z from '../util/zod-mini.ts';
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { InvalidInputError } from '../errors.ts';
import { INSTANCE_ID, describeIssue } from '../nodes/node.ts';
import { ROUTE_TABLE_ID } from '../routes/index.ts';

export const INSTANCE_STATE_CHANGE = 'EC2 Instance State-change Notification';
export const API_CALL_VIA_CLOUDTRAIL = 'AWS API Call via CloudTrail';
/** The states the instance rule passes (serverless.yml): an instance that stops serving its routes. */
export const LEAVING_STATES = ['shutting-down', 'terminated', 'stopping', 'stopped'] as const;
export const ROUTE_WRITES = ['CreateRoute', 'ReplaceRoute', 'DeleteRoute'] as const;
const ALL_STATES = ['pending', 'running', ...LEAVING_STATES] as const;

export type InstanceState = (typeof ALL_STATES)[number];

export type CloudEvent =
  | { kind: 'instance-state'; id: string; time: string; instanceId: string; state: InstanceState }
  | {
      kind: 'route-write';
      id: string;
      time: string;
      eventName: (typeof ROUTE_WRITES)[number];
      routeTableId: string;
      destinationCidr: string;
      /** The caller: `userIdentity.arn`, and for an assumed role the role (`sessionIssuer.arn`). */
      principals: string[];
    };

const text = () => z.string().check(z.minLength(1, 'want a non-empty string'));
const envelope = () => ({ version: z.optional(z.string()), id: text(), account: z.optional(z.string()), time: text(), region: z.optional(z.string()), resources: z.optional(z.array(z.string())) });

const instanceStateSchema = z.onFirstUse(() => z.object({
  ...envelope(),
  'detail-type': z.literal(INSTANCE_STATE_CHANGE),
  source: z.literal('aws.ec2'),
  detail: z.object({
    'instance-id': z.string().check(z.regex(INSTANCE_ID, 'want an instance id such as i-0123456789abcdef0')),
    state: z.enum(ALL_STATES),
  }),
}));

const cidrText = () => z.optional(z.string());
const routeWriteSchema = z.onFirstUse(() => z.object({
  ...envelope(),
  'detail-type': z.literal(API_CALL_VIA_CLOUDTRAIL),
  source: z.literal('aws.ec2'),
  detail: z.object({
    eventSource: z.literal('ec2.amazonaws.com'),
    eventName: z.enum(ROUTE_WRITES),
    errorCode: z.optional(z.string()),
    userIdentity: z.object({
      arn: z.optional(z.string()),
      sessionContext: z.optional(z.object({ sessionIssuer: z.optional(z.object({ arn: z.optional(z.string()) })) })),
    }),
    requestParameters: z.object({
      routeTableId: z.string().check(z.regex(ROUTE_TABLE_ID, 'want a route table id such as rtb-0123456789abcdef0')),
      destinationCidrBlock: cidrText(),
      destinationIpv6CidrBlock: cidrText(),
    }),
  }),
}));

/** Why a well-formed event is not work: the call failed, so nothing changed. */
export class FailedCallEvent extends InvalidInputError {
  override name = 'FailedCallEvent';
}

/** Validates a decoded EventBridge event; throws `InvalidInputError` naming the first problem. */
export function parseCloudEvent(value: unknown): CloudEvent {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (record === null) throw new InvalidInputError('invalid cloud event: want a JSON object');
  if (record['detail-type'] === INSTANCE_STATE_CHANGE) {
    const parsed = instanceStateSchema().safeParse(value);
    if (!parsed.success) throw new InvalidInputError(`invalid instance state-change event: ${describeIssue(parsed.error)}`);
    const { id, time, detail } = parsed.data;
    return { kind: 'instance-state', id, time, instanceId: detail['instance-id'], state: detail.state };
  }
  if (record['detail-type'] === API_CALL_VIA_CLOUDTRAIL) {
    const parsed = routeWriteSchema().safeParse(value);
    if (!parsed.success) throw new InvalidInputError(`invalid route-write event: ${describeIssue(parsed.error)}`);
    const { id, time, detail } = parsed.data;
    if (detail.errorCode !== undefined) throw new FailedCallEvent(`route-write event ${id}: the call failed (${detail.errorCode}), nothing changed`);
    const principals = [detail.userIdentity.arn, detail.userIdentity.sessionContext?.sessionIssuer?.arn].filter((arn): arn is string => typeof arn === 'string' && arn !== '');
    return { kind: 'route-write', id, time, eventName: detail.eventName, routeTableId: detail.requestParameters.routeTableId, destinationCidr: destinationOf(detail.requestParameters), principals };
  }
  throw new InvalidInputError(`invalid cloud event: detail-type ${JSON.stringify(record['detail-type'])} is not ${INSTANCE_STATE_CHANGE} or ${API_CALL_VIA_CLOUDTRAIL}`);
}

/** The one destination of the call, canonical and of the family its parameter names. */
function destinationOf(params: { destinationCidrBlock?: string | undefined; destinationIpv6CidrBlock?: string | undefined }): string {
  const v4 = params.destinationCidrBlock;
  const v6 = params.destinationIpv6CidrBlock;
  if ((v4 === undefined) === (v6 === undefined)) {
    throw new InvalidInputError('invalid route-write event: want exactly one of destinationCidrBlock and destinationIpv6CidrBlock (a prefix-list route is not podroute\'s)');
  }
  const raw = v4 ?? v6 ?? '';
  const cidr = tryParseCidr(raw);
  if (!cidr || cidr.family !== (v4 !== undefined ? 4 : 6)) throw new InvalidInputError(`invalid route-write event: ${JSON.stringify(raw)} is not an IPv${v4 !== undefined ? 4 : 6} CIDR`);
  // EC2 canonicalises the destination it stores (EC2 API Reference, CreateRoute DestinationCidrBlock).
  return formatCidr(cidr);
}
