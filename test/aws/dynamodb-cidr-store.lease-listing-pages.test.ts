/**
 * Review of "Suite: the 50-writer DynamoDB test takes 8 blocks per writer": with 1,000 leases that
 * test was the one DynamoDB test whose lease listing (`list` of every block, Query `Limit` 1,000:
 * lib/aws/dynamodb-cidr-store.ts MAX_PAGE) filled a page and followed LastEvaluatedKey. At 400 no
 * test lists more than one Query page of leases over dynalite. This puts that back: more blocks
 * than one page holds, every one listed once, counted and released.
 */
import { describe, expect, it } from 'vitest';
import { DynamoDbCidrStore } from '../../lib/aws/dynamodb-cidr-store.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { useFreshCidrTables } from '../support/dynalite.ts';

const freshTable = useFreshCidrTables();

describe('the lease listing past one Query page', () => {
  it('lists, counts and frees 1,024 blocks (more than the 1,000 one page holds)', async () => {
    const store = new DynamoDbCidrStore({ ...(await freshTable()), setId: 'pages-1024' });
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/12', nodeMaskSize: 24, store });
    await set.occupy('10.0.0.0/14'); // blocks 0..1023, ownerless
    expect(await set.usage()).toEqual({ used: 1024, total: 4096 });
    const leases = await set.leases();
    expect(leases).toHaveLength(1024);
    expect(new Set(leases.map(({ cidr }) => cidr)).size).toBe(1024);
    expect(leases.at(-1)?.cidr).toBe('10.3.255.0/24');
    // The next allocation lands past the run the listing read.
    expect(await set.allocateNext('after')).toBe('10.4.0.0/24');
    await set.release('10.0.0.0/14');
    expect(await set.usage()).toEqual({ used: 1, total: 4096 });
  }, 120_000);
});
