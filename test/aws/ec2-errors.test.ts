import {
  AssignPrivateIpAddressesCommand,
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeInstancesCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  EC2ServiceException,
  ModifyInstanceAttributeCommand,
  ModifyNetworkInterfaceAttributeCommand,
  ReplaceRouteCommand,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Ec2Error, Ec2NotFoundError, RouteConflictError, RouteTableFullError, classifyEc2Error, mayBeLaunchLag, toPodrouteError } from '../../lib/aws/ec2-errors.ts';
import { Ec2EniPrefixes } from '../../lib/aws/ec2-prefixes.ts';
import { Ec2RouteTables } from '../../lib/aws/ec2-route-tables.ts';
import { Ec2RouteTargets } from '../../lib/aws/ec2-route-targets.ts';
import { PodrouteError } from '../../lib/errors.ts';
import { PrefixUnavailableError } from '../../lib/usecases/port-errors.ts';

const ec2Mock = mockClient(EC2Client);
// The stub sits on the client class's prototype, and test files share a worker (vitest.config.ts):
// every later file's clients of that class would get it too.
afterAll(() => ec2Mock.restore());
afterEach(() => ec2Mock.reset());

/** An error shaped as the SDK throws it for an EC2 error response: the code is the name. */
function ec2Error(code: string, status = 400): EC2ServiceException {
  return new EC2ServiceException({
    name: code,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status, requestId: 'req-1', attempts: 1, totalRetryDelay: 0 },
    message: `message text that must not matter (${code})`,
  });
}

const client = () => new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
const tables = () => new Ec2RouteTables(client(), { clusterName: 'alpha' });
const targets = () => new Ec2RouteTargets(client());
const spec = { routeTableId: 'rtb-1', destinationCidr: '10.244.1.0/24', networkInterfaceId: 'eni-1' };

describe('classifyEc2Error', () => {
  it.each([
    ['RouteAlreadyExists', 400, 'conflict'],
    ['InvalidRoute.NotFound', 400, 'not-found'],
    ['RouteLimitExceeded', 400, 'quota'],
    ['PrivateIpAddressLimitExceeded', 400, 'quota'],
    ['InsufficientCidrBlocks', 400, 'quota'],
    ['RequestLimitExceeded', 503, 'throttled'],
    ['RequestLimitExceeded', 400, 'throttled'],
    ['Throttling', 400, 'throttled'],
    ['InternalError', 500, 'server'],
    ['ServiceUnavailable', 503, 'server'],
    ['Unavailable', 503, 'server'],
    ['InvalidRouteTableID.NotFound', 400, 'not-found'],
    ['InvalidInstanceID.NotFound', 400, 'not-found'],
    ['InvalidNetworkInterfaceID.NotFound', 400, 'not-found'],
    // "There are multiple interfaces attached to instance ...": no suffix, not a NotFound.
    ['InvalidInstanceID', 400, 'rejected'],
    ['InvalidInstanceID.Malformed', 400, 'invalid'],
    ['InvalidParameterValue', 400, 'invalid'],
    ['InvalidParameterCombination', 400, 'invalid'],
    ['MissingParameter', 400, 'invalid'],
    ['IncorrectState', 400, 'rejected'],
    ['UnauthorizedOperation', 403, 'denied'],
  ] as const)('%s (HTTP %i) is %s', (code, status, kind) => {
    expect(classifyEc2Error(ec2Error(code, status))).toBe(kind);
  });

  it.each([
    [Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'transport'],
    [Object.assign(new Error('timed out'), { name: 'TimeoutError' }), 'transport'],
    [new TypeError('a bug'), 'rejected'],
    ['a string', 'rejected'],
  ])('a non-service failure %# is %s', (error, kind) => {
    expect(classifyEc2Error(error)).toBe(kind);
  });

  it('never reads the message: a throttling message on another code is not throttling', () => {
    const error = ec2Error('InvalidParameterValue');
    error.message = 'Request limit exceeded.';
    expect(classifyEc2Error(error)).toBe('invalid');
  });
});

describe('toPodrouteError', () => {
  it.each([
    ['RequestLimitExceeded', 503, Ec2Error, true],
    ['Throttling', 400, Ec2Error, true],
    ['InternalError', 500, Ec2Error, true],
    ['RouteLimitExceeded', 400, RouteTableFullError, false],
    ['InvalidInstanceID.NotFound', 400, Ec2NotFoundError, false],
    ['InvalidParameterValue', 400, Ec2Error, false],
  ] as const)('%s -> %s, retryable %s, with the cause', (code, status, type, retryable) => {
    const cause = ec2Error(code, status);
    const mapped = toPodrouteError(cause, { operation: 'CreateRoute', routeTableId: 'rtb-1' });
    expect(mapped).toBeInstanceOf(type);
    expect(mapped).toBeInstanceOf(PodrouteError);
    expect(mapped.retryable).toBe(retryable);
    expect(mapped.cause).toBe(cause);
    expect((mapped as Ec2Error).code).toBe(code);
  });
});

describe('Ec2RouteTables error mapping (mocked client)', () => {
  it('CreateRoute RouteAlreadyExists with the same target re-reads and succeeds', async () => {
    ec2Mock.on(CreateRouteCommand).rejects(ec2Error('RouteAlreadyExists'));
    ec2Mock.on(DescribeRouteTablesCommand, { RouteTableIds: ['rtb-1'] }).resolves({
      RouteTables: [{ RouteTableId: 'rtb-1', Routes: [{ DestinationCidrBlock: '10.244.1.0/24', NetworkInterfaceId: 'eni-1', InstanceId: 'i-1', State: 'active' }] }],
    });
    expect(await tables().createRoute(spec)).toBe('exists');
    expect(ec2Mock.commandCalls(DescribeRouteTablesCommand)).toHaveLength(1);
  });

  it('CreateRoute RouteAlreadyExists with another target is a RouteConflictError', async () => {
    ec2Mock.on(CreateRouteCommand).rejects(ec2Error('RouteAlreadyExists'));
    ec2Mock.on(DescribeRouteTablesCommand).resolves({
      RouteTables: [{ RouteTableId: 'rtb-1', Routes: [{ DestinationCidrBlock: '10.244.1.0/24', NetworkInterfaceId: 'eni-2', InstanceId: 'i-2', State: 'active' }] }],
    });
    const error = await tables().createRoute(spec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouteConflictError);
    expect(error).toMatchObject({ retryable: false, existing: { networkInterfaceId: 'eni-2', instanceId: 'i-2' } });
  });

  it('CreateRoute RouteAlreadyExists for a route gone on re-read is retryable', async () => {
    ec2Mock.on(CreateRouteCommand).rejects(ec2Error('RouteAlreadyExists'));
    ec2Mock.on(DescribeRouteTablesCommand).resolves({ RouteTables: [{ RouteTableId: 'rtb-1', Routes: [] }] });
    await expect(tables().createRoute(spec)).rejects.toMatchObject({ retryable: true });
  });

  it.each([
    ['RequestLimitExceeded', 503, { retryable: true, kind: 'throttled' }],
    ['Throttling', 400, { retryable: true, kind: 'throttled' }],
    ['InternalError', 500, { retryable: true, kind: 'server' }],
    ['ServiceUnavailable', 503, { retryable: true, kind: 'server' }],
    ['RouteLimitExceeded', 400, { retryable: false, name: 'RouteTableFullError', routeTableId: 'rtb-1' }],
    ['InvalidRouteTableID.NotFound', 400, { retryable: false, name: 'Ec2NotFoundError' }],
    ['InvalidNetworkInterfaceID.NotFound', 400, { retryable: false, name: 'Ec2NotFoundError' }],
    ['InvalidParameterValue', 400, { retryable: false, name: 'Ec2Error', kind: 'invalid' }],
  ] as const)('CreateRoute %s maps to %j', async (code, status, expected) => {
    const cause = ec2Error(code, status);
    ec2Mock.on(CreateRouteCommand).rejects(cause);
    const error = await tables().createRoute(spec).catch((e: unknown) => e);
    expect(error).toMatchObject({ ...expected, code });
    expect((error as Error).cause).toBe(cause);
  });

  it('sends IPv6 destinations as DestinationIpv6CidrBlock', async () => {
    ec2Mock.on(CreateRouteCommand).resolves({ Return: true });
    ec2Mock.on(DeleteRouteCommand).resolves({});
    await tables().createRoute({ ...spec, destinationCidr: 'fd00:1::/80' });
    await tables().deleteRoute({ routeTableId: 'rtb-1', destinationCidr: 'fd00:1::/80' });
    expect(ec2Mock.commandCalls(CreateRouteCommand)[0]?.args[0].input).toEqual({ RouteTableId: 'rtb-1', DestinationIpv6CidrBlock: 'fd00:1::/80', NetworkInterfaceId: 'eni-1' });
    expect(ec2Mock.commandCalls(DeleteRouteCommand)[0]?.args[0].input).toEqual({ RouteTableId: 'rtb-1', DestinationIpv6CidrBlock: 'fd00:1::/80' });
  });

  it('DeleteRoute InvalidRoute.NotFound is success; other failures are mapped', async () => {
    ec2Mock.on(DeleteRouteCommand).rejectsOnce(ec2Error('InvalidRoute.NotFound')).rejectsOnce(ec2Error('RequestLimitExceeded', 503));
    expect(await tables().deleteRoute({ routeTableId: 'rtb-1', destinationCidr: '10.244.1.0/24' })).toBe('absent');
    await expect(tables().deleteRoute({ routeTableId: 'rtb-1', destinationCidr: '10.244.1.0/24' })).rejects.toMatchObject({ retryable: true });
  });

  it('ReplaceRoute and DescribeRouteTables failures are mapped the same way', async () => {
    ec2Mock.on(ReplaceRouteCommand).rejects(ec2Error('InvalidInstanceID.NotFound'));
    ec2Mock.on(DescribeRouteTablesCommand).rejects(ec2Error('RequestLimitExceeded', 503));
    await expect(tables().replaceRoute(spec)).rejects.toBeInstanceOf(Ec2NotFoundError);
    await expect(tables().listRouteTables()).rejects.toMatchObject({ retryable: true, code: 'RequestLimitExceeded' });
  });

  it.each([
    ['no route on re-read: the route vanished', [], 'RouteMissingError'],
    ['the route still there on re-read: an error of its own', [{ DestinationCidrBlock: spec.destinationCidr, NetworkInterfaceId: 'eni-9', State: 'active' as const }], 'Ec2Error'],
  ])('ReplaceRoute InvalidParameterValue with %s', async (_what, routes, name) => {
    ec2Mock.on(ReplaceRouteCommand).rejects(ec2Error('InvalidParameterValue'));
    ec2Mock.on(DescribeRouteTablesCommand).resolves({ RouteTables: [{ RouteTableId: spec.routeTableId, Routes: routes }] });
    await expect(tables().replaceRoute(spec)).rejects.toMatchObject({ name, retryable: false });
    expect(ec2Mock.commandCalls(DescribeRouteTablesCommand)).toHaveLength(1);
  });

  it('rejects a malformed destination before calling EC2', async () => {
    await expect(tables().createRoute({ ...spec, destinationCidr: '10.244.1.0/33' })).rejects.toMatchObject({ name: 'InvalidInputError' });
    expect(ec2Mock.calls()).toHaveLength(0);
  });

  it('maps DescribeInstances and prefix assignment failures', async () => {
    ec2Mock.on(DescribeInstancesCommand).rejectsOnce(ec2Error('InvalidInstanceID.NotFound')).resolves({
      Reservations: [{ Instances: [{ InstanceId: 'i-1', NetworkInterfaces: [{ NetworkInterfaceId: 'eni-1', Attachment: { DeviceIndex: 0 } }] }] }],
    });
    ec2Mock.on(AssignPrivateIpAddressesCommand).rejects(ec2Error('InsufficientCidrBlocks'));
    await expect(targets().nodeTarget('i-1')).rejects.toMatchObject({ name: 'Ec2NotFoundError', code: 'InvalidInstanceID.NotFound' });
    await expect(new Ec2EniPrefixes(client()).assignPrefix('eni-1', '10.0.0.16/28')).rejects.toMatchObject({ code: 'InsufficientCidrBlocks', retryable: false });
    ec2Mock.on(DescribeInstancesCommand).rejects(ec2Error('RequestLimitExceeded'));
    await expect(new Ec2EniPrefixes(client()).describeInterfaces(['i-1'])).rejects.toMatchObject({ retryable: true });
  });

  it('a named prefix EC2 answers InvalidParameterValue for is a PrefixUnavailableError (the block is held elsewhere)', async () => {
    ec2Mock.on(AssignPrivateIpAddressesCommand).rejects(ec2Error('InvalidParameterValue'));
    const refused = new Ec2EniPrefixes(client()).assignPrefix('eni-1', '10.0.0.16/28');
    await expect(refused).rejects.toBeInstanceOf(PrefixUnavailableError);
    await expect(refused).rejects.toMatchObject({ prefix: '10.0.0.16/28', retryable: false });
    ec2Mock.on(AssignPrivateIpAddressesCommand).rejects(ec2Error('RequestLimitExceeded'));
    await expect(new Ec2EniPrefixes(client()).assignPrefix('eni-1', '10.0.0.16/28')).rejects.not.toBeInstanceOf(PrefixUnavailableError);
  });
});

describe('source/destination check and launch lag (mocked client)', () => {
  const instance = (primaryCheck: boolean) => ({
    Reservations: [
      {
        Instances: [
          {
            InstanceId: 'i-1',
            SourceDestCheck: true,
            NetworkInterfaces: [
              { NetworkInterfaceId: 'eni-2', SourceDestCheck: true, Attachment: { DeviceIndex: 1, NetworkCardIndex: 0 } },
              { NetworkInterfaceId: 'eni-1', SourceDestCheck: primaryCheck, Attachment: { DeviceIndex: 0, NetworkCardIndex: 0 } },
            ],
          },
        ],
      },
    ],
  });

  it('turns the check off on the primary interface with ModifyNetworkInterfaceAttribute, never per instance', async () => {
    ec2Mock.on(DescribeInstancesCommand).resolves(instance(true));
    ec2Mock.on(ModifyNetworkInterfaceAttributeCommand).resolves({});
    expect(await targets().prepareRouteTarget('i-1')).toEqual({ instanceId: 'i-1', primaryEniId: 'eni-1', sourceDestCheck: false, sourceDestCheckChanged: true });
    expect(ec2Mock.commandCalls(ModifyNetworkInterfaceAttributeCommand).map((c) => c.args[0].input)).toEqual([
      { NetworkInterfaceId: 'eni-1', SourceDestCheck: { Value: false } },
    ]);
    expect(ec2Mock.commandCalls(ModifyInstanceAttributeCommand)).toHaveLength(0);
  });

  it("reads the primary interface's own check, not the instance's", async () => {
    ec2Mock.on(DescribeInstancesCommand).resolves(instance(false));
    expect(await targets().prepareRouteTarget('i-1')).toMatchObject({ primaryEniId: 'eni-1', sourceDestCheckChanged: false });
    expect(ec2Mock.commandCalls(ModifyNetworkInterfaceAttributeCommand)).toHaveLength(0);
  });

  it.each([
    ['InvalidNetworkInterfaceID.NotFound', 400, { name: 'Ec2NotFoundError', retryable: false, operation: 'ModifyNetworkInterfaceAttribute' }, true],
    ['InvalidInstanceID.NotFound', 400, { name: 'Ec2NotFoundError', retryable: false }, true],
    ['UnauthorizedOperation', 403, { name: 'Ec2Error', kind: 'denied', retryable: false }, false],
    ['RequestLimitExceeded', 503, { name: 'Ec2Error', kind: 'throttled', retryable: true }, false],
  ] as const)('ModifyNetworkInterfaceAttribute %s maps to %j (launch lag: %s)', async (code, status, expected, lag) => {
    const cause = ec2Error(code, status);
    ec2Mock.on(DescribeInstancesCommand).resolves(instance(true));
    ec2Mock.on(ModifyNetworkInterfaceAttributeCommand).rejects(cause);
    const error = await targets().prepareRouteTarget('i-1').catch((e: unknown) => e);
    expect(error).toMatchObject({ ...expected, code });
    expect((error as Error).cause).toBe(cause);
    expect(mayBeLaunchLag(error)).toBe(lag);
  });

  it('only the instance and interface NotFound codes may be launch lag; a missing table or a described-away instance is not', async () => {
    expect(mayBeLaunchLag(toPodrouteError(ec2Error('InvalidInstanceID.NotFound'), { operation: 'DescribeInstances' }))).toBe(true);
    expect(mayBeLaunchLag(toPodrouteError(ec2Error('InvalidNetworkInterfaceID.NotFound'), { operation: 'CreateRoute' }))).toBe(true);
    expect(mayBeLaunchLag(toPodrouteError(ec2Error('InvalidRouteTableID.NotFound'), { operation: 'CreateRoute' }))).toBe(false);
    expect(mayBeLaunchLag(toPodrouteError(ec2Error('InvalidInstanceID'), { operation: 'CreateRoute' }))).toBe(false);
    expect(mayBeLaunchLag(new Error('InvalidInstanceID.NotFound'))).toBe(false);
    ec2Mock.on(DescribeInstancesCommand).resolves({ Reservations: [{ Instances: [{ InstanceId: 'i-1', State: { Name: 'terminated' }, NetworkInterfaces: [] }] }] });
    const terminated = await targets().prepareRouteTarget('i-1').catch((e: unknown) => e);
    expect(terminated).toBeInstanceOf(Ec2NotFoundError);
    expect(mayBeLaunchLag(terminated)).toBe(false);
  });
});
