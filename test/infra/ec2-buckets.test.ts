/**
 * EC2's throttling categories (EC2 API Reference, "Request throttling for the Amazon EC2 API"):
 * Describe*, List*, Search* and Get* actions are non-mutating; every other action mutates.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MUTATING, DEFAULT_NON_MUTATING, bucketFor, isMutating } from '../../infra/local/ec2/buckets.ts';

describe('EC2 throttling categories', () => {
  it.each([
    ['DescribeRouteTables', false],
    ['GetSubnetCidrReservations', false],
    ['ListImagesInRecycleBin', false],
    ['SearchTransitGatewayRoutes', false],
    ['CreateRoute', true],
    ['ModifyNetworkInterfaceAttribute', true],
    ['AssignPrivateIpAddresses', true],
  ])('%s mutates: %s', (action, mutates) => {
    expect(isMutating(action)).toBe(mutates);
    if (action !== 'AssignPrivateIpAddresses') expect(bucketFor(action)).toEqual(mutates ? DEFAULT_MUTATING : DEFAULT_NON_MUTATING);
  });
});
