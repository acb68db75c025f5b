/**
 * The EC2 emulator's EventBridge events (infra/local/ec2/cloud-events.ts): what it sends on an
 * instance's termination and on route calls, with the caller taken from the request's access key,
 * shaped so podroute's own schema (lib/events/cloud-event.ts) reads them.
 */
import { CreateRouteCommand, DeleteRouteCommand, DescribeRouteTablesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { parseCloudEvent } from '../../lib/events/cloud-event.ts';

describe('the EC2 emulator sends EventBridge events', () => {
  let ec2: Ec2Emulator;
  const events: Array<Record<string, unknown>> = [];
  const client = (accessKeyId: string) => new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 'x' }, maxAttempts: 1 });
  let tableId: string;
  let instanceId: string;
  beforeAll(async () => {
    ec2 = await startEc2Emulator({ throttle: false, onCloudEvent: (event) => events.push(event) });
    tableId = ec2.state.addRouteTable().id;
    instanceId = ec2.state.addInstance().id;
  });
  afterAll(() => ec2?.close());

  it('an instance termination: shutting-down, then terminated', () => {
    events.length = 0;
    const doomed = ec2.state.addInstance().id;
    ec2.state.terminateInstance(doomed);
    expect(events.map((e) => parseCloudEvent(e))).toMatchObject([
      { kind: 'instance-state', instanceId: doomed, state: 'shutting-down' },
      { kind: 'instance-state', instanceId: doomed, state: 'terminated' },
    ]);
  });

  it.each([
    ['an IAM user', 'operator', ['arn:aws:iam::123456789012:user/operator']],
    ['a session of a role', 'role:podroute-sandbox', ['arn:aws:sts::123456789012:assumed-role/podroute-sandbox/session', 'arn:aws:iam::123456789012:role/podroute-sandbox']],
  ])('a route call by %s names its caller', async (_who, accessKeyId, principals) => {
    events.length = 0;
    const eni = ec2.state.primaryInterface(instanceId)?.id;
    await client(accessKeyId).send(new CreateRouteCommand({ RouteTableId: tableId, DestinationCidrBlock: '100.64.7.0/24', NetworkInterfaceId: eni }));
    await client(accessKeyId).send(new DeleteRouteCommand({ RouteTableId: tableId, DestinationCidrBlock: '100.64.7.0/24' }));
    expect(events.map((e) => parseCloudEvent(e))).toMatchObject([
      { kind: 'route-write', eventName: 'CreateRoute', routeTableId: tableId, destinationCidr: '100.64.7.0/24', principals },
      { kind: 'route-write', eventName: 'DeleteRoute', routeTableId: tableId, destinationCidr: '100.64.7.0/24', principals },
    ]);
  });

  it('a call that failed carries its errorCode, as CloudTrail records it', async () => {
    events.length = 0;
    await expect(client('operator').send(new CreateRouteCommand({ RouteTableId: tableId, DestinationCidrBlock: '100.64.8.0/24', GatewayId: 'igw-0000000000000dead' }))).rejects.toThrow();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ detail: { eventName: 'CreateRoute', errorCode: expect.any(String) } });
    expect(() => parseCloudEvent(events[0])).toThrow(/the call failed/);
  });

  it('sends nothing for other calls', async () => {
    events.length = 0;
    await client('operator').send(new DescribeRouteTablesCommand({}));
    expect(events).toEqual([]);
  });
});
