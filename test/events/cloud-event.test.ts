/** The cloud-events schema (lib/events/cloud-event.ts) over the documented event shapes and their corruptions. */
import { describe, expect, it } from 'vitest';
import { FailedCallEvent, parseCloudEvent } from '../../lib/events/cloud-event.ts';
import { InvalidInputError } from '../../lib/errors.ts';

import { edited, eventFixture } from '../support/event-fixtures.ts';

const instance = eventFixture('instance-state-change.json');
const routeWrite = eventFixture('cloudtrail-delete-route.json');

describe('parseCloudEvent: accepted events', () => {
  it.each([
    ['an instance termination', instance, { kind: 'instance-state', instanceId: 'i-0123456789abcdef0', state: 'terminated' }],
    ['an instance stopping', edited(instance, { 'detail.state': 'stopping' }), { kind: 'instance-state', state: 'stopping' }],
    ['a DeleteRoute by an assumed role', routeWrite, { kind: 'route-write', eventName: 'DeleteRoute', routeTableId: 'rtb-0123456789abcdef0', destinationCidr: '100.64.1.0/24', principals: ['arn:aws:sts::123456789012:assumed-role/network-admin/operator', 'arn:aws:iam::123456789012:role/network-admin'] }],
    ['a CreateRoute of an IPv6 destination by an IAM user', edited(routeWrite, {
      'detail.eventName': 'CreateRoute',
      'detail.userIdentity': { type: 'IAMUser', arn: 'arn:aws:iam::123456789012:user/alice' },
      'detail.requestParameters': { routeTableId: 'rtb-0123456789abcdef0', destinationIpv6CidrBlock: 'fd00:1::/80', networkInterfaceId: 'eni-0123456789abcdef0' },
    }), { kind: 'route-write', eventName: 'CreateRoute', destinationCidr: 'fd00:1::/80', principals: ['arn:aws:iam::123456789012:user/alice'] }],
    ['a destination with host bits, canonical as EC2 stores it', edited(routeWrite, { 'detail.requestParameters.destinationCidrBlock': '100.64.1.7/24' }), { destinationCidr: '100.64.1.0/24' }],
  ])('%s', (_name, event, want) => {
    expect(parseCloudEvent(event)).toMatchObject(want);
  });
});

describe('parseCloudEvent: rejected events (InvalidInputError, one line naming the problem)', () => {
  it.each([
    ['not an object', [], /want a JSON object/],
    ['another detail type', edited(instance, { 'detail-type': 'EC2 Spot Instance Interruption Warning' }), /is not EC2 Instance State-change Notification/],
    ['a forged source', edited(instance, { source: 'my.app' }), /source/],
    ['an instance id that is not one', edited(instance, { 'detail.instance-id': 'i-xyz' }), /instance id/],
    ['an unknown state', edited(instance, { 'detail.state': 'exploded' }), /state/],
    ['no event id', edited(instance, { id: undefined }), /id/],
    ['another event source', edited(routeWrite, { 'detail.eventSource': 'apigateway.amazonaws.com' }), /eventSource/],
    ['another EC2 call', edited(routeWrite, { 'detail.eventName': 'CreateRouteTable' }), /eventName/],
    ['a bad route table id', edited(routeWrite, { 'detail.requestParameters.routeTableId': 'igw-1' }), /route table id/],
    ['both destinations', edited(routeWrite, { 'detail.requestParameters.destinationIpv6CidrBlock': 'fd00::/80' }), /exactly one/],
    ['a prefix-list destination', edited(routeWrite, { 'detail.requestParameters': { routeTableId: 'rtb-0123456789abcdef0', destinationPrefixListId: 'pl-1' } }), /exactly one/],
    ['an IPv6 CIDR in the IPv4 parameter', edited(routeWrite, { 'detail.requestParameters.destinationCidrBlock': 'fd00::/80' }), /not an IPv4 CIDR/],
    ['no userIdentity', edited(routeWrite, { 'detail.userIdentity': undefined }), /userIdentity/],
  ])('%s', (_name, event, message) => {
    expect(() => parseCloudEvent(event)).toThrow(InvalidInputError);
    expect(() => parseCloudEvent(event)).toThrow(message);
  });

  it('a call that failed (errorCode) is a FailedCallEvent: nothing changed', () => {
    const event = edited(routeWrite, { 'detail.errorCode': 'Client.UnauthorizedOperation', 'detail.errorMessage': 'not allowed' });
    expect(() => parseCloudEvent(event)).toThrow(FailedCallEvent);
  });
});
