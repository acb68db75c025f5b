/**
 * The wiring counts allocation conflicts: every conditional CIDR-table write that lost to another
 * writer is one `AllocationConflicts` metric (the dashboard's allocation-conflict graph).
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { NodeSource } from '../../lib/usecases/ports.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { freshCidrTable, unusedSqsClient } from '../support/world.ts';

let local: LocalDynamo;
beforeAll(async () => {
  local = await startDynalite();
});
afterAll(async () => {
  await local.close();
});

const conflicts = (lines: Array<Record<string, unknown>>): unknown[] => lines.filter((line) => '_aws' in line && 'AllocationConflicts' in line).map((line) => line.AllocationConflicts);

describe('AllocationConflicts', () => {
  it('is counted once per conditional write that lost, and not for writes that won', async () => {
    const client = local.client();
    const tableName = await freshCidrTable(client);
    const config = loadConfig({ CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16', CIDR_TABLE_NAME: tableName, QUEUE_URL: 'http://127.0.0.1:9/q' });
    const log = memoryLogger();
    const wiring = await buildWiring(config, { ec2: new EC2Client({ region: 'us-east-1' }), sqs: unusedSqsClient(), dynamodb: client }, {} as NodeSource, async () => 'unused', { log });
    const [set] = wiring.cidrSets;
    if (!set) throw new Error('no CIDR set');
    const cidr = await set.allocateNext('node-a');
    expect(conflicts(log.lines)).toEqual([]);
    // Another owner claims the same block: its conditional write loses.
    await set.occupy(cidr, 'node-b').catch(() => undefined);
    expect(conflicts(log.lines).length).toBeGreaterThanOrEqual(1);
    expect(conflicts(log.lines).every((value) => value === 1)).toBe(true);
  });
});
