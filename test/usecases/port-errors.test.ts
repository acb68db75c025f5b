/** Port errors belong to the ports; the adapters throw them (and re-export them for their callers). */
import { describe, expect, it } from 'vitest';
import * as ec2Errors from '../../lib/aws/ec2-errors.ts';
import * as kubeErrors from '../../lib/kube/kube-errors.ts';
import * as ports from '../../lib/usecases/port-errors.ts';

const ec2Failure = (name: string) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: 400 } });

describe('port errors', () => {
  it('the adapters re-export the port classes themselves', () => {
    expect(kubeErrors.NodeNotFoundError).toBe(ports.NodeNotFoundError);
    expect(ec2Errors.RouteConflictError).toBe(ports.RouteConflictError);
    expect(ec2Errors.RouteTableFullError).toBe(ports.RouteTableFullError);
    expect(ec2Errors.mayBeLaunchLag).toBe(ports.mayBeLaunchLag);
  });

  it.each([
    ['InvalidInstanceID.NotFound', true],
    ['InvalidNetworkInterfaceID.NotFound', true],
    ['InvalidRouteTableID.NotFound', false],
  ])('EC2 %s is a ResourceNotFoundError; launch lag: %s', (code, lag) => {
    const error = ec2Errors.toPodrouteError(ec2Failure(code), { operation: 'DescribeInstances' });
    expect(error).toBeInstanceOf(ports.ResourceNotFoundError);
    expect(error).toMatchObject({ code, operation: 'DescribeInstances', mayBeLaunchLag: lag, retryable: false });
    expect(ports.mayBeLaunchLag(error)).toBe(lag);
  });

  it('EC2 RouteLimitExceeded is the port RouteTableFullError, with the table', () => {
    const error = ec2Errors.toPodrouteError(ec2Failure('RouteLimitExceeded'), { operation: 'CreateRoute', routeTableId: 'rtb-1' });
    expect(error).toBeInstanceOf(ports.RouteTableFullError);
    expect(error).toMatchObject({ routeTableId: 'rtb-1', code: 'RouteLimitExceeded', retryable: false });
  });
});
