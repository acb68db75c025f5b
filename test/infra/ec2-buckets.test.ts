/**
 * EC2's throttling categories (EC2 API Reference, "Request throttling for the Amazon EC2 API"):
 * Describe*, List*, Search* and Get* actions are non-mutating; every other action mutates; a few
 * actions have buckets of their own.
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
    ['DeleteRoute', true],
  ])('%s mutates: %s, and draws from its category\'s bucket', (action, mutates) => {
    expect(isMutating(action)).toBe(mutates);
    expect(bucketFor(action)).toEqual(mutates ? DEFAULT_MUTATING : DEFAULT_NON_MUTATING);
  });

  // The page's "Uncategorized actions" table: their own buckets, though they mutate.
  it.each([
    ['AssignPrivateIpAddresses', { capacity: 100, refillPerSecond: 5 }],
    ['AssignIpv6Addresses', { capacity: 100, refillPerSecond: 5 }],
    ['ModifyNetworkInterfaceAttribute', { capacity: 100, refillPerSecond: 5 }],
    ['CreateTags', { capacity: 100, refillPerSecond: 10 }],
  ])('%s mutates, in a bucket of its own', (action, bucket) => {
    expect(isMutating(action)).toBe(true);
    expect(bucketFor(action)).toEqual(bucket);
  });
});
