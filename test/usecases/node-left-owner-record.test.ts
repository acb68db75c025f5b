/**
 * A node's leave reads its owner record, not the lease table (issue 9 goal 5): against dynalite
 * through the deployed DynamoDB store, counting the DynamoDB requests of one release.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbCidrStore } from '../../lib/aws/dynamodb-cidr-store.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { releaseIfGone } from '../../lib/usecases/node-left.ts';
import { PAST_GRACE, node, nodeSource } from './node-left-fakes.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { countCommands } from '../support/world.ts';

let local: LocalDynamo;
let client: DynamoDBClient;
let counter: ReturnType<typeof countCommands>;
let sets = 0;

beforeAll(async () => {
  local = await startDynalite();
  client = local.client();
  counter = countCommands(client);
});
afterAll(async () => {
  await local.close();
});


async function dynamoSet(clusterCidr: string, nodeMaskSize: number): Promise<CidrSet> {
  const store = new DynamoDbCidrStore({ client, tableName: local.tableName, setId: `node-left-${++sets}`, clock: () => 1 });
  return createCidrSet({ clusterCidr, nodeMaskSize, store });
}

const count = (name: string): number => counter.counts.get(`${name}Command`) ?? 0;

describe('node-left reads the owner record', () => {
  it('releases a gone node’s block with keyed reads only: no Query or Scan of the lease table, whatever its size', async () => {
    const set = await dynamoSet('10.8.0.0/16', 24);
    const names = Array.from({ length: 60 }, (_, i) => `node-${i}`);
    for (const name of names) await set.allocateNext(name);
    const live = names.filter((name) => name !== 'node-7').map((name, i) => node(name, `10.8.${i >= 7 ? i + 1 : i}.0/24`));
    counter.reset();

    const nodes = nodeSource(live);
    const result = await releaseIfGone('node-7', { nodes, leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), ...PAST_GRACE });

    expect(result).toEqual({ kind: 'released', cidrs: ['10.8.7.0/24'], kept: [], held: [] });
    expect(nodes.count('listNodes')).toBe(0);
    expect(count('Query')).toBe(0);
    expect(count('Scan')).toBe(0);
    // The record and the block it names, then the release's own read of the record before it deletes.
    expect(count('GetItem')).toBe(3);
    expect(count('DeleteItem')).toBe(2);
    expect((await set.leases()).map((l) => l.owner)).not.toContain('node-7');
    expect(await set.allocateNext('node-60')).toBe('10.8.60.0/24');
  });

  it('reads one record per set and lists nothing for a node that holds no lease', async () => {
    const [v4, v6] = [await dynamoSet('10.9.0.0/16', 24), await dynamoSet('fd00:9::/48', 64)];
    await v4.allocateNext('node-a');
    await v6.allocateNext('node-a');
    const nodes = nodeSource([node('node-a', '10.9.0.0/24')]);
    counter.reset();

    expect(await releaseIfGone('node-z', { nodes, leaseSets: async () => [v4, v6], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), ...PAST_GRACE })).toEqual({ kind: 'released', cidrs: [], kept: [], held: [] });
    expect(count('GetItem')).toBe(2);
    expect(count('Query') + count('Scan')).toBe(0);
    expect(nodes.count('listNodes')).toBe(0);
  });
});
