/**
 * EC2 throttling is counted per throttled attempt, including attempts the SDK's retry recovers
 * from: the real EC2 client (podroute's adaptive retry settings) against the EC2 emulator with a
 * one-token bucket for DescribeRouteTables.
 */
import { DescribeRouteTablesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { ec2ClientConfig } from '../../lib/aws/ec2-client.ts';
import { countEc2Throttles } from '../../lib/aws/ec2-throttle-count.ts';

let ec2: Ec2Emulator;
beforeAll(async () => {
  ec2 = await startEc2Emulator({ throttle: { actions: { DescribeRouteTables: { capacity: 1, refillPerSecond: 2 } } } });
});
afterAll(async () => {
  await ec2.close();
});

const client = (endpoint = ec2.url) => new EC2Client(ec2ClientConfig({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));

describe('countEc2Throttles', () => {
  it('counts throttled attempts that the retry then recovered from', async () => {
    const seen: string[] = [];
    const ec2Client = countEc2Throttles(client(), (action) => seen.push(action));
    // Whether every retry then finds a token depends on the machine's pace; the contract is one count
    // per throttled attempt, recovered or not, so the count must equal what the emulator refused.
    const settled = await Promise.allSettled([1, 2, 3].map(() => ec2Client.send(new DescribeRouteTablesCommand({}))));
    for (const outcome of settled) if (outcome.status === 'rejected') expect((outcome.reason as Error).name).toBe('RequestLimitExceeded');
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBe(ec2.stats.throttled);
    expect(new Set(seen)).toEqual(new Set(['DescribeRouteTablesCommand']));
    ec2Client.destroy();
  });

  it('counts nothing when EC2 does not throttle, and is added once however often it is applied', async () => {
    const unthrottled = await startEc2Emulator({ throttle: false });
    const seen: string[] = [];
    const ec2Client = countEc2Throttles(countEc2Throttles(client(unthrottled.url), (action) => seen.push(action)), (action) => seen.push(action));
    await Promise.all([1, 2, 3].map(() => ec2Client.send(new DescribeRouteTablesCommand({}))));
    expect(seen).toEqual([]);
    expect(ec2Client.middlewareStack.identify().filter((entry) => entry.startsWith('podrouteEc2ThrottleCounter'))).toHaveLength(1);
    ec2Client.destroy();
    await unthrottled.close();
  });
});
