import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DynamoDbCidrStore,
  blockKey,
  cidrSetId,
  cidrTableDefinition,
  ownerKey,
} from '../../lib/aws/dynamodb-cidr-store.ts';
import { PodrouteError } from '../../lib/errors.ts';
import { CidrSetError, MemoryCidrStore, createCidrSet, type CidrSet, type CidrStore } from '../../lib/ipam/index.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';

let local: LocalDynamo;
let client: DynamoDBClient;
let sets = 0;

beforeAll(async () => {
  local = await startDynalite();
  client = local.client();
});
afterAll(async () => {
  await local.close();
});

/** A store over a set no other test touches. */
function dynamoStore(extra: { clock?: () => number; sleep?: (ms: number) => Promise<void>; claimWaitMs?: number } = {}) {
  const setId = `test-${++sets}`;
  return { setId, store: new DynamoDbCidrStore({ client, tableName: local.tableName, setId, ...extra }) };
}

// ---- the CIDR set contract, the same rows for both stores --------------------------------------

type Step =
  | { allocate: string | null; owner?: string }
  | { allocateFails: 'FULL'; owner?: string }
  | { occupy: string; owner?: string }
  | { release: string; owner?: string }
  | { fails: 'OUT_OF_RANGE' | 'INVALID_CIDR'; op: 'occupy' | 'release'; cidr: string }
  | { used: number }
  | { leases: Array<[string, string | null]> };

interface Row {
  name: string;
  clusterCidr: string;
  nodeMaskSize: number;
  steps: Step[];
}

const rows: Row[] = [
  {
    name: 'a /30 set of one block: full, released, allocated again',
    clusterCidr: '127.123.234.0/30',
    nodeMaskSize: 30,
    steps: [
      { allocate: '127.123.234.0/30' },
      { allocateFails: 'FULL' },
      { release: '127.123.234.0/30' },
      { allocate: '127.123.234.0/30' },
      { allocateFails: 'FULL' },
      { used: 1 },
    ],
  },
  {
    name: 'round robin with wrap-around',
    clusterCidr: '10.0.0.0/28',
    nodeMaskSize: 30,
    steps: [
      { allocate: '10.0.0.0/30' },
      { allocate: '10.0.0.4/30' },
      { allocate: '10.0.0.8/30' },
      { allocate: '10.0.0.12/30' },
      { allocateFails: 'FULL' },
      { release: '10.0.0.4/30' },
      { allocate: '10.0.0.4/30' },
      { release: '10.0.0.0/30' },
      { release: '10.0.0.8/30' },
      { allocate: '10.0.0.8/30' },
      { allocate: '10.0.0.0/30' },
      { used: 4 },
    ],
  },
  {
    name: 'a released block comes back only after the cursor wraps',
    clusterCidr: '10.0.0.0/28',
    nodeMaskSize: 30,
    steps: [
      { allocate: '10.0.0.0/30' },
      { allocate: '10.0.0.4/30' },
      { release: '10.0.0.0/30' },
      { allocate: '10.0.0.8/30' },
      { allocate: '10.0.0.12/30' },
      { allocate: '10.0.0.0/30' },
      { allocateFails: 'FULL' },
    ],
  },
  {
    name: 'an owner gets its block again; release with an owner spares other owners',
    clusterCidr: '10.0.0.0/28',
    nodeMaskSize: 30,
    steps: [
      { allocate: '10.0.0.0/30', owner: 'n1' },
      { allocate: '10.0.0.0/30', owner: 'n1' },
      { allocate: '10.0.0.4/30', owner: 'n2' },
      { used: 2 },
      { release: '10.0.0.0/30', owner: 'n2' },
      { used: 2 },
      { release: '10.0.0.0/30', owner: 'n1' },
      { used: 1 },
      { allocate: '10.0.0.8/30', owner: 'n1' },
      { leases: [['10.0.0.4/30', 'n2'], ['10.0.0.8/30', 'n1']] },
    ],
  },
  {
    name: 'occupy and release ranges cover every block they touch',
    clusterCidr: '10.0.0.0/16',
    nodeMaskSize: 24,
    steps: [
      { occupy: '10.0.0.0/22' },
      { used: 4 },
      { allocate: '10.0.4.0/24' },
      { occupy: '10.0.5.128/25' },
      { occupy: '10.0.6.255/32' },
      { used: 7 },
      { allocate: '10.0.7.0/24' },
      { release: '10.0.1.0/23' },
      { used: 6 },
      { occupy: '10.0.0.0/8' },
      { used: 256 },
      { allocateFails: 'FULL' },
      { release: '10.0.0.0/12' },
      { used: 0 },
    ],
  },
  {
    name: 'occupy with an owner: an allocation for it returns that block',
    clusterCidr: '10.0.0.0/16',
    nodeMaskSize: 24,
    steps: [
      { occupy: '10.0.8.0/24', owner: 'n1' },
      { allocate: '10.0.8.0/24', owner: 'n1' },
      { allocate: '10.0.0.0/24', owner: 'n2' },
      { leases: [['10.0.0.0/24', 'n2'], ['10.0.8.0/24', 'n1']] },
    ],
  },
  {
    name: 'occupy keeps the owner of a held block and gives an ownerless block an owner',
    clusterCidr: '10.0.0.0/28',
    nodeMaskSize: 30,
    steps: [
      { allocate: '10.0.0.0/30', owner: 'a' },
      { occupy: '10.0.0.0/30', owner: 'b' },
      { release: '10.0.0.0/30', owner: 'b' },
      { used: 1 },
      { occupy: '10.0.0.8/30' },
      { occupy: '10.0.0.8/30', owner: 'c' },
      { allocate: '10.0.0.8/30', owner: 'c' },
      { allocate: '10.0.0.4/30', owner: 'b' },
      { leases: [['10.0.0.0/30', 'a'], ['10.0.0.4/30', 'b'], ['10.0.0.8/30', 'c']] },
    ],
  },
  {
    name: 'ranges outside the cluster and bad CIDRs are refused',
    clusterCidr: '10.0.0.0/16',
    nodeMaskSize: 24,
    steps: [
      { fails: 'OUT_OF_RANGE', op: 'occupy', cidr: '192.168.0.0/24' },
      { fails: 'OUT_OF_RANGE', op: 'release', cidr: '10.1.0.0/24' },
      { fails: 'INVALID_CIDR', op: 'occupy', cidr: '10.0.0.0/33' },
      { used: 0 },
    ],
  },
  {
    name: 'IPv6 blocks in order, full, wrapped',
    clusterCidr: '2001:db8::/64',
    nodeMaskSize: 66,
    steps: [
      { allocate: '2001:db8::/66' },
      { allocate: '2001:db8:0:0:4000::/66' },
      { allocate: '2001:db8:0:0:8000::/66' },
      { allocate: '2001:db8:0:0:c000::/66' },
      { allocateFails: 'FULL' },
      { release: '2001:db8:0:0:4000::/66' },
      { allocate: '2001:db8:0:0:4000::/66' },
      { used: 4 },
    ],
  },
];

async function play(set: CidrSet, steps: Step[]): Promise<void> {
  for (const [at, step] of steps.entries()) {
    const where = `step ${at}: ${JSON.stringify(step)}`;
    if ('allocate' in step) {
      expect(await set.allocateNext(step.owner), where).toBe(step.allocate);
    } else if ('allocateFails' in step) {
      await expect(set.allocateNext(step.owner), where).rejects.toMatchObject({ code: step.allocateFails });
    } else if ('occupy' in step) {
      await set.occupy(step.occupy, step.owner);
    } else if ('release' in step) {
      await set.release(step.release, step.owner);
    } else if ('fails' in step) {
      const run = step.op === 'occupy' ? set.occupy(step.cidr) : set.release(step.cidr);
      await expect(run, where).rejects.toBeInstanceOf(CidrSetError);
      await expect(run, where).rejects.toMatchObject({ code: step.fails });
    } else if ('used' in step) {
      expect(await set.usage(), where).toEqual({ used: step.used, total: set.total });
    } else {
      expect(ownersOf(await set.leases()), where).toEqual(step.leases.map(([cidr, owner]) => ({ cidr, owner })));
    }
  }
}

const stores: Array<[string, () => CidrStore]> = [
  ['memory', () => new MemoryCidrStore()],
  ['dynamodb', () => dynamoStore().store],
];

describe.each(stores)('the CIDR set contract over the %s store', (_name, makeStore) => {
  it.each(rows)('$name', async ({ clusterCidr, nodeMaskSize, steps }) => {
    const set = await createCidrSet({ clusterCidr, nodeMaskSize, store: makeStore() });
    await play(set, steps);
  });
});

// ---- layout and helpers -------------------------------------------------------------------------

describe('layout', () => {
  it.each([
    ['10.0.0.0/16', 24, '10.0.0.0/16@24'],
    ['10.0.3.7/16', 24, '10.0.0.0/16@24'],
    ['2001:DB8:0::/64', 66, '2001:db8::/64@66'],
  ])('cidrSetId(%s, %i) is %s', (cidr, mask, id) => {
    expect(cidrSetId(cidr, mask)).toBe(id);
  });

  it('block keys sort by index', () => {
    const indices = [0, 7, 10, 255, 4096, 2 ** 32 - 1];
    expect(indices.map(blockKey)).toEqual([...indices.map(blockKey)].sort());
    expect(blockKey(42)).toBe('b#0000000042');
  });

  it('the table definition is pk/sk strings on demand', () => {
    expect(cidrTableDefinition('t')).toEqual({
      TableName: 't',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('leases carry the time they were taken, from the injected clock', async () => {
    let now = 1_000;
    const { store } = dynamoStore({ clock: () => now });
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/28', nodeMaskSize: 30, store });
    await set.allocateNext('a');
    now = 2_000;
    await set.allocateNext('b');
    await set.occupy('10.0.0.12/30');
    expect(await store.leasesWithTime()).toEqual([
      { index: 0, owner: 'a', since: 1_000 },
      { index: 1, owner: 'b', since: 2_000 },
      { index: 3, owner: null, since: 2_000 },
    ]);
  });

  it('pages through more blocks than one Query page holds', async () => {
    const { store } = dynamoStore();
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/20', nodeMaskSize: 28, store });
    await set.occupy('10.0.0.0/21'); // 128 blocks: the search from 0 reads several pages
    expect(await set.allocateNext()).toBe('10.0.8.0/28');
    expect(await set.usage()).toEqual({ used: 129, total: 256 });
    expect(await store.leases()).toHaveLength(129);
  });
});

describe('the cursor', () => {
  it('only grows: a late write of an older position is dropped', async () => {
    const { setId } = dynamoStore();
    const first = new DynamoDbCidrStore({ client, tableName: local.tableName, setId });
    const late = new DynamoDbCidrStore({ client, tableName: local.tableName, setId });
    expect(await first.readCursor()).toBe(0);
    expect(await late.readCursor()).toBe(0);
    await first.nextFree(0, 8);
    await late.nextFree(0, 8);
    await first.writeCursor(5);
    await late.writeCursor(2);
    expect(await first.readCursor()).toBe(5);
  });

  it('counts wraps, so a wrapped position is ahead of the one before it', async () => {
    const { setId, store } = dynamoStore();
    await store.readCursor();
    await store.nextFree(0, 4);
    await store.writeCursor(3);
    expect(await store.readCursor()).toBe(3);
    await store.writeCursor(0); // the block at 3 was taken: the cursor wrapped
    expect(await store.readCursor()).toBe(0);
    // A new instance has learnt nothing: it reads `total` from the cursor item.
    const other = new DynamoDbCidrStore({ client, tableName: local.tableName, setId });
    expect(await other.readCursor()).toBe(0);
    expect((await rawItem(setId, 'cursor'))?.pos).toEqual({ N: '4' });
  });
});

// ---- crash points -------------------------------------------------------------------------------

async function putRaw(setId: string, sk: string, attributes: Record<string, { S: string } | { N: string }>) {
  await client.send(new PutItemCommand({
    TableName: local.tableName,
    Item: { pk: { S: `set#${setId}` }, sk: { S: sk }, ...attributes },
  }));
}

async function rawItem(setId: string, sk: string) {
  const output = await client.send(new GetItemCommand({
    TableName: local.tableName,
    Key: { pk: { S: `set#${setId}` }, sk: { S: sk } },
    ConsistentRead: true,
  }));
  return output.Item;
}

describe('crash points', () => {
  const cluster = { clusterCidr: '10.0.0.0/16', nodeMaskSize: 24 };

  it('after the owner record, before the block: the owner gets that block, nothing leaks', async () => {
    const { setId, store } = dynamoStore();
    await putRaw(setId, ownerKey('n1'), { index: { N: '5' }, tok: { S: 'crashed' }, since: { N: '0' } });
    const set = await createCidrSet({ ...cluster, store });
    expect(await set.usage()).toEqual({ used: 0, total: 256 });
    expect(await store.findOwned('n1')).toBeNull();
    expect(await set.allocateNext('n1')).toBe('10.0.5.0/24');
    expect(await set.allocateNext('n1')).toBe('10.0.5.0/24');
    expect(await set.usage()).toEqual({ used: 1, total: 256 });
    expect(ownersOf(await set.leases())).toEqual([{ cidr: '10.0.5.0/24', owner: 'n1' }]);
  });

  it('after the owner record, block taken by another owner, record older than the grace: moved', async () => {
    let now = 100_000;
    const { setId, store } = dynamoStore({ clock: () => now });
    await putRaw(setId, ownerKey('n1'), { index: { N: '0' }, tok: { S: 'crashed' }, since: { N: '0' } });
    await putRaw(setId, blockKey(0), { owner: { S: 'n2' }, since: { N: '0' } });
    const set = await createCidrSet({ ...cluster, store });
    now += 1;
    expect(await set.allocateNext('n1')).toBe('10.0.1.0/24');
    expect(ownersOf(await set.leases())).toEqual([
      { cidr: '10.0.0.0/24', owner: 'n2' },
      { cidr: '10.0.1.0/24', owner: 'n1' },
    ]);
    expect((await rawItem(setId, ownerKey('n1')))?.index).toEqual({ N: '1' });
  });

  it('a fresh record naming another owner’s block: waits, then a retryable error, then moves after the grace', async () => {
    let now = 0;
    const { setId, store } = dynamoStore({
      clock: () => now,
      claimWaitMs: 1_000,
      sleep: async (ms) => {
        now += ms;
      },
    });
    await putRaw(setId, ownerKey('n1'), { index: { N: '0' }, tok: { S: 'lost' }, since: { N: '0' } });
    await putRaw(setId, blockKey(0), { owner: { S: 'n2' }, since: { N: '0' } });
    const set = await createCidrSet({ ...cluster, store });
    const error: unknown = await set.allocateNext('n1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PodrouteError);
    expect(error).toMatchObject({ retryable: true });
    expect(now).toBe(1_000);
    expect(await set.usage()).toEqual({ used: 1, total: 256 });
    now = 60_000;
    expect(await set.allocateNext('n1')).toBe('10.0.1.0/24');
    expect(await set.usage()).toEqual({ used: 2, total: 256 });
  });

  it('after the block, before the cursor: the next allocation skips the used block', async () => {
    const { setId, store } = dynamoStore();
    await putRaw(setId, ownerKey('n1'), { index: { N: '0' }, tok: { S: 't' }, since: { N: '0' } });
    await putRaw(setId, blockKey(0), { owner: { S: 'n1' }, since: { N: '0' } });
    const set = await createCidrSet({ ...cluster, store });
    expect(await set.allocateNext('n1')).toBe('10.0.0.0/24');
    expect(await set.allocateNext('n2')).toBe('10.0.1.0/24');
    expect(await set.usage()).toEqual({ used: 2, total: 256 });
  });

  it('release after the block delete, before the record delete: the leftover record is harmless', async () => {
    const { setId, store } = dynamoStore();
    const set = await createCidrSet({ ...cluster, store });
    expect(await set.allocateNext('n1')).toBe('10.0.0.0/24');
    // What a crash leaves: the record of n1 still names block 0, which is free.
    await set.release('10.0.0.0/24', 'n1');
    await putRaw(setId, ownerKey('n1'), { index: { N: '0' }, tok: { S: 't' }, since: { N: '0' } });
    expect(await store.findOwned('n1')).toBeNull();
    expect(await set.usage()).toEqual({ used: 0, total: 256 });
    // Another owner takes the block (after the cursor wraps it could; here: occupy it).
    await set.occupy('10.0.0.0/24', 'n2');
    expect(await set.allocateNext('n1')).toBe('10.0.1.0/24');
    expect(ownersOf(await set.leases())).toEqual([
      { cidr: '10.0.0.0/24', owner: 'n2' },
      { cidr: '10.0.1.0/24', owner: 'n1' },
    ]);
  });

  it('release deletes the owner record with the block', async () => {
    const { setId, store } = dynamoStore();
    const set = await createCidrSet({ ...cluster, store });
    await set.allocateNext('n1');
    expect(await rawItem(setId, ownerKey('n1'))).toBeDefined();
    await set.release('10.0.0.0/24');
    expect(await rawItem(setId, ownerKey('n1'))).toBeUndefined();
    expect(await rawItem(setId, blockKey(0))).toBeUndefined();
  });
});

/** Leases without their timestamps (the clock is real here), for comparison with expected owners. */
function ownersOf(leases: Array<{ cidr: string; owner: string | null }>): Array<{ cidr: string; owner: string | null }> {
  return leases.map(({ cidr, owner }) => ({ cidr, owner }));
}
