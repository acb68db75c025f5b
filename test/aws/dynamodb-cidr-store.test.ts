import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DynamoDbCidrStore,
  blockKey,
  cidrSetId,
  cidrTableDefinition,
  ownerKey,
} from '../../lib/aws/dynamodb-cidr-store.ts';
import { CidrSetError, ClaimProtocolStore, MemoryClaimStore, createCidrSet, type CidrSet, type CidrStore } from '../../lib/ipam/index.ts';
import { MemoryCidrStore } from '../../lib/ipam/memory-cidr-store.ts';
import { memoryLogger } from '../../lib/log.ts';
import { releaseIfGone } from '../../lib/usecases/node-left.ts';
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';
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
function dynamoStore(extra: { clock?: () => number } = {}) {
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
  ['claim protocol over memory', () => new ClaimProtocolStore(new MemoryClaimStore())],
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
    expect((await store.leases()).map(({ index, owner, since }) => ({ index, owner, since }))).toEqual([
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

describe('tickets', () => {
  it('the cursor is an atomic counter: concurrent draws each get their own block, none fails a condition', async () => {
    const { setId } = dynamoStore();
    let failed = 0;
    const sets = await Promise.all(
      Array.from({ length: 8 }, () =>
        createCidrSet({
          clusterCidr: '10.0.0.0/16',
          nodeMaskSize: 24,
          store: new DynamoDbCidrStore({ client, tableName: local.tableName, setId, onConditionalFailure: () => failed++ }),
        }),
      ),
    );
    const got = await Promise.all(sets.map((set, i) => set.allocateNext(`n${i}`)));
    expect([...got].sort()).toEqual(Array.from({ length: 8 }, (_v, i) => `10.0.${i}.0/24`).sort());
    expect(failed).toBe(0);
    expect((await rawItem(setId, 'cursor'))?.pos).toEqual({ N: '8' });
  });

  it('a ticket on a used run jumps past it with one more draw, without failed conditions', async () => {
    let failed = 0;
    const { setId } = dynamoStore();
    const store = new DynamoDbCidrStore({ client, tableName: local.tableName, setId, onConditionalFailure: () => failed++ });
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/16', nodeMaskSize: 24, store });
    await set.occupy('10.0.0.0/20'); // blocks 0..15
    expect(await set.allocateNext('n1')).toBe('10.0.16.0/24');
    expect(await set.allocateNext('n2')).toBe('10.0.17.0/24');
    expect(failed).toBe(0);
    expect((await rawItem(setId, 'cursor'))?.pos).toEqual({ N: '18' });
  });

  it('a full set gives its ticket back: the cursor stays', async () => {
    const { setId, store } = dynamoStore();
    const set = await createCidrSet({ clusterCidr: '10.0.0.0/30', nodeMaskSize: 31, store });
    await set.allocateNext('a');
    await set.allocateNext('b');
    await expect(set.allocateNext('c')).rejects.toMatchObject({ code: 'FULL' });
    expect((await rawItem(setId, 'cursor'))?.pos).toEqual({ N: '2' });
  });
});

// ---- raw items -------------------------------------------------------------------------------

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

describe('items written by older versions (no version attribute)', () => {
  const cluster = { clusterCidr: '10.0.0.0/16', nodeMaskSize: 24 };

  it('an old owner record naming its block: the owner gets that block back, renewed', async () => {
    const { setId, store } = dynamoStore();
    await putRaw(setId, ownerKey('n1'), { index: { N: '5' }, tok: { S: 'old' }, since: { N: '0' } });
    await putRaw(setId, blockKey(5), { owner: { S: 'n1' }, since: { N: '0' } });
    const set = await createCidrSet({ ...cluster, store });
    expect(await set.allocateNext('n1')).toBe('10.0.5.0/24');
    expect((await rawItem(setId, blockKey(5)))?.ver).toEqual({ N: '1' });
    expect(await set.usage()).toEqual({ used: 1, total: 256 });
  });

  it('an old record naming another owner’s block (a lost claim): moved to a new block at once', async () => {
    const { setId, store } = dynamoStore();
    await putRaw(setId, ownerKey('n1'), { index: { N: '0' }, tok: { S: 'lost' }, since: { N: '0' } });
    await putRaw(setId, blockKey(0), { owner: { S: 'n2' }, since: { N: '0' } });
    const set = await createCidrSet({ ...cluster, store });
    expect(await set.allocateNext('n1')).toBe('10.0.1.0/24');
    expect(ownersOf(await set.leases())).toEqual([
      { cidr: '10.0.0.0/24', owner: 'n2' },
      { cidr: '10.0.1.0/24', owner: 'n1' },
    ]);
  });

  it('a block without `since` is a lease of unknown age, listed and owned alike, never past the grace period', async () => {
    const { setId, store } = dynamoStore();
    await putRaw(setId, ownerKey('n1'), { index: { N: '5' } });
    await putRaw(setId, blockKey(5), { owner: { S: 'n1' } });
    const set = await createCidrSet({ ...cluster, store });
    expect((await store.leases()).map(({ index, since }) => ({ index, since }))).toEqual([{ index: 5, since: undefined }]);
    expect((await store.ownedLease('n1'))?.since).toBeUndefined();
    const result = await releaseIfGone('n1', { nodes: new MemoryNodeSource(), leaseSets: async () => [set], freeDepartedBlock: async () => ({ release: true }), log: memoryLogger(), now: () => 3_600_000, leaseGraceSeconds: 600 });
    expect(result).toEqual({ kind: 'released', cidrs: [], kept: ['10.0.5.0/24'], held: [] });
  });

  it('an old cursor (pos, total) keeps its place', async () => {
    const { setId, store } = dynamoStore();
    await putRaw(setId, 'cursor', { pos: { N: '259' }, total: { N: '256' } });
    const set = await createCidrSet({ ...cluster, store });
    expect(await set.allocateNext('n1')).toBe('10.0.3.0/24');
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
