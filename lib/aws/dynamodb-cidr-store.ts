/**
 * The CidrStore port over one DynamoDB table, safe for many Lambdas at once with single-item
 * conditional writes only (no transactions: they cost double and dynalite lacks them).
 *
 * ## Item layout (one partition per CIDR set, `pk = set#<setId>`, setId = `<cluster CIDR>@<mask>`)
 *
 * | sk                    | attributes                         | meaning                                |
 * |-----------------------|------------------------------------|----------------------------------------|
 * | `b#0000000042`        | `since` N, `owner` S (optional)    | block 42 is used (the truth)           |
 * | `o#<owner>`           | `index` N, `tok` S, `since` N      | owner record: the block `owner` holds  |
 * | `cursor`              | `pos` N, `total` N                 | round-robin hint                       |
 *
 * Block keys carry the index as 10 zero-padded digits (an IPv4 set has at most 2^32 blocks), so a
 * Query over `b#` walks blocks in index order. A missing block item is a free block. `since` is the
 * injected clock's time when the block got its owner (for reconcile's grace period). The cursor's
 * `pos` is absolute (wraps * total + index) and only grows, so a late cursor write never moves the
 * search back. Every read the protocol depends on is strongly consistent.
 *
 * ## Which write is guarded by what
 *
 * - A block is taken by UpdateItem on `b#i` with `attribute_not_exists(pk)` (no owner), or with
 *   `attribute_not_exists(pk) OR owner = :me` (for an owner: writing our own block again is a no-op).
 *   This condition alone decides who gets a block, so no block ever has two owners.
 * - The owner record is created with `attribute_not_exists(pk)`; whoever creates it (or later
 *   replaces it with `tok = :seenTok`) is its *holder*, with a fresh random `tok`. Only the holder
 *   writes a block for that owner, and only the block the record names. claim writes the record
 *   BEFORE the block, so a block it gave an owner always has that owner's record naming it.
 * - A holder that loses its block deletes the record with `tok = :myTok` and tries the next block.
 * - A record is *valid* when the block it names is held by its owner. `findOwned` reads the record
 *   and that block; an invalid record is a leftover and counts as no block.
 *
 * ## claim(i, owner), write order and crash points
 *
 * 1. Put record `o#owner = {index: i}` if absent. If present: read it and the block it names.
 *    - block held by owner: answer `owner-has` (a retry, or a concurrent call for the same owner);
 *    - block free (a claim in flight, or one that crashed here): take the record over (`tok` swap)
 *      and write that same block: both writers target one block for one owner, so at most one block;
 *    - block held by someone else: the holder lost it and is about to delete the record. Wait
 *      (bounded, then a retryable error) unless the record is older than `claimGraceMs` (its holder
 *      crashed): then take it over and point it at `i`.
 * 2. Write block `b#i` (condition above). Lost: delete the record (step 1 undone), answer `taken`.
 * 3. The set then writes the cursor (condition: `pos` grows).
 *
 * Crash after 1: the record names a free block. Nothing is leaked (the block is free for anyone);
 * the owner's next call takes the record over and gets exactly that block. Crash after 2: all is
 * written but the cursor; the next search skips the used block. Crash after a lost 2: the record
 * names someone else's block; the owner's next call waits, and after `claimGraceMs` moves the
 * record. The one timing assumption: a block write issued by a holder lands within `claimGraceMs`
 * of the holder taking the record (SDK calls time out long before the 60 s default).
 *
 * release deletes the block first (with an owner: `attribute_not_exists(owner) OR owner = :me`;
 * a failed condition means "not ours", not an error), then the record that names it (`index = :i`).
 * A crash in between leaves an invalid record: harmless, see above. occupy writes blocks first
 * (ownerless or free blocks only), then points the owner's record at its lowest block in the range
 * when it has no valid record; occupy is idempotent, so repeating it repairs a crash in between.
 *
 * ## Cost and contention
 *
 * A single-writer allocation in an empty region: GetItem record (findOwned), GetItem cursor, one
 * Query page (a few keys), then PutItem record + UpdateItem block + UpdateItem cursor. `nextFree`
 * pages upward from `from` with small pages that grow (16 keys, then doubling), stopping at the
 * first gap. Under contention: after a lost claim the set asks again from the next index and we
 * answer from the Query already read (the port allows a stale answer), and each instance keeps a
 * `heat` (+1 per lost claim, -1 per won one) and picks at random among the next 2^heat free blocks
 * it knows of (at most `contentionSpread`), so 50 allocators racing from one cursor spread out
 * instead of all colliding on each next gap in turn (O(n) lost claims per allocation). A lone
 * writer never loses a claim, so its heat is 0 and it keeps upstream's strict round-robin order
 * (an instance that just saw contention may spread a few more first tries while its heat decays).
 *
 * Not repairable by design: an allocation without an owner that crashes after its block write
 * leaves a used ownerless block (as upstream would); podroute always allocates with the node name.
 */
import { randomInt, randomUUID } from 'node:crypto';
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import { canonicalCidr } from '../cidr/cidr.ts';
import { PodrouteError } from '../errors.ts';
import type { BlockLease, CidrStore, ClaimResult } from '../ipam/cidr-store.ts';
import { dynamoDbError, isConditionalCheckFailed } from './dynamodb-errors.ts';

/** Which guarded write found its condition false (for metrics and benchmarks). */
export type ConditionalWrite = 'block' | 'owner' | 'cursor' | 'occupy' | 'release';

export interface DynamoDbCidrStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** One CIDR set: see `cidrSetId`. */
  readonly setId: string;
  /** Milliseconds since the epoch (default Date.now); stamps leases and owner records. */
  readonly clock?: () => number;
  /** Called once per write whose condition failed. */
  readonly onConditionalFailure?: (write: ConditionalWrite) => void;
  /** Age after which an owner record naming someone else's block is a crash leftover (default 60 s). */
  readonly claimGraceMs?: number;
  /** How long a claim waits for another claim of the same owner to settle (default 2 s). */
  readonly claimWaitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Under contention, pick among up to this many next free blocks (default 64; 1 = strictly next). */
  readonly contentionSpread?: number;
}

export interface TimedLease {
  readonly index: number;
  readonly owner: string | null;
  /** Clock time when the block got its owner (or was occupied). */
  readonly since: number;
}

/** The id of the CIDR set `clusterCidr` cut into `/nodeMaskSize` blocks, e.g. `10.0.0.0/16@24`. */
export const cidrSetId = (clusterCidr: string, nodeMaskSize: number): string =>
  `${canonicalCidr(clusterCidr)}@${nodeMaskSize}`;

/** CreateTable input for the CIDR table, shared by serverless.yml (by hand) and tests. */
export const cidrTableDefinition = (tableName: string): CreateTableCommandInput => ({
  TableName: tableName,
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

const BLOCK_PREFIX = 'b#';
const OWNER_PREFIX = 'o#';
const CURSOR_KEY = 'cursor';
const INDEX_DIGITS = 10;
const MAX_INDEX = 2 ** 32 - 1;
const FIRST_PAGE = 16;
const MAX_PAGE = 1000;
/** Writes in flight at once for range operations. */
const RANGE_CONCURRENCY = 8;
/** Rounds of one claim (each round ends in a wait or a lost race) before giving up, retryably. */
const MAX_CLAIM_ROUNDS = 64;

export const blockKey = (index: number): string => `${BLOCK_PREFIX}${String(index).padStart(INDEX_DIGITS, '0')}`;
export const ownerKey = (owner: string): string => `${OWNER_PREFIX}${owner}`;

interface OwnerRecord {
  readonly index: number;
  readonly tok: string;
  readonly since: number;
}

/** What the last nextFree Query showed: index ranges read, and the used blocks in them. */
interface QueryView {
  readonly total: number;
  readonly ranges: Array<[number, number]>;
  readonly used: Set<number>;
}

type Names = Record<string, string>;
type Values = Record<string, AttributeValue>;

export class DynamoDbCidrStore implements CidrStore {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly pk: string;
  private readonly clock: () => number;
  private readonly onConditionalFailure: (write: ConditionalWrite) => void;
  private readonly claimGraceMs: number;
  private readonly claimWaitMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly spread: number;
  /** Learnt from nextFree; the cursor needs it to count wraps. */
  private total: number | null = null;
  private lastCursorPos = 0;
  private view: QueryView | null = null;
  /** The block of the last lost claim, if the last claim here was lost. */
  private lostAt: number | null = null;
  /** Contention seen here: +1 per lost claim, -1 per won one. 0 for a single writer. */
  private heat = 0;

  constructor(options: DynamoDbCidrStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.pk = `set#${options.setId}`;
    this.clock = options.clock ?? Date.now;
    this.onConditionalFailure = options.onConditionalFailure ?? (() => undefined);
    this.claimGraceMs = options.claimGraceMs ?? 60_000;
    this.claimWaitMs = options.claimWaitMs ?? 2_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.spread = Math.max(1, Math.floor(options.contentionSpread ?? 64));
  }

  // ---- reads ----------------------------------------------------------------------------------

  async findOwned(owner: string): Promise<number | null> {
    const record = await this.readRecord(owner);
    if (record === null) return null;
    const holder = await this.readBlockOwner(record.index);
    return holder === owner ? record.index : null;
  }

  async nextFree(from: number, total: number): Promise<number | null> {
    this.total = total;
    if (this.lostAt !== null && this.view?.total === total && from === (this.lostAt + 1) % total) {
      const cached = this.spreadGap(this.view, from);
      if (cached !== null) return cached;
    }
    const view: QueryView = { total, ranges: [], used: new Set() };
    this.view = view;
    const first = (await this.firstGap(view, from, total - 1)) ?? (from === 0 ? null : await this.firstGap(view, 0, from - 1));
    if (first === null || this.heat === 0) return first;
    return this.spreadGap(view, first) ?? first;
  }

  async usedCount(): Promise<number> {
    let count = 0;
    await this.queryPages(
      {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: this.pk }, ':prefix': { S: BLOCK_PREFIX } },
        Select: 'COUNT',
      },
      (page) => {
        count += page.Count ?? 0;
        return true;
      },
    );
    return count;
  }

  async leases(): Promise<BlockLease[]> {
    // The time lets reconcile reclaim a vanished node's block only after a grace period.
    return this.leasesWithTime();
  }

  /** Every used block with its owner and the time it was taken, ordered by index. */
  async leasesWithTime(): Promise<TimedLease[]> {
    return this.blocksBetween(0, MAX_INDEX);
  }

  async readCursor(): Promise<number> {
    const item = await this.getItem(CURSOR_KEY, 'pos, #total', { '#total': 'total' });
    if (item === null) {
      this.lastCursorPos = 0;
      return 0;
    }
    const pos = numberAttr(item, 'pos');
    const total = item.total === undefined ? null : numberAttr(item, 'total');
    if (this.total === null && total !== null) this.total = total;
    this.lastCursorPos = pos;
    const size = this.total ?? total;
    return size !== null && size > 0 ? pos % size : pos;
  }

  // ---- writes ---------------------------------------------------------------------------------

  async writeCursor(next: number): Promise<void> {
    const total = this.total;
    if (total === null) {
      await this.call('UpdateItem', () => this.client.send(new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.key(CURSOR_KEY),
        UpdateExpression: 'SET pos = :pos',
        ExpressionAttributeValues: { ':pos': num(next) },
      })));
      return;
    }
    // The search that led here started at the cursor we read; if `next` is not past it, it wrapped.
    const readIndex = this.lastCursorPos % total;
    const base = this.lastCursorPos - readIndex;
    const pos = next > readIndex ? base + next : base + total + next;
    await this.guarded('cursor', 'UpdateItem', () => this.client.send(new UpdateItemCommand({
      TableName: this.tableName,
      Key: this.key(CURSOR_KEY),
      UpdateExpression: 'SET pos = :pos, #total = :total',
      ConditionExpression: 'attribute_not_exists(pos) OR pos < :pos',
      ExpressionAttributeNames: { '#total': 'total' },
      ExpressionAttributeValues: { ':pos': num(pos), ':total': num(total) },
    })));
    this.lastCursorPos = Math.max(this.lastCursorPos, pos);
  }

  async claim(index: number, owner: string | null): Promise<ClaimResult> {
    if (owner === null) {
      const won = await this.takeBlock(index, null);
      return this.settle(index, won);
    }
    let waited = 0;
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      const tok = randomUUID();
      let target = index;
      if (!(await this.createRecord(owner, index, tok))) {
        const record = await this.readRecord(owner);
        if (record === null) continue; // released meanwhile: create it again
        const holder = await this.readBlockOwner(record.index);
        if (holder === owner) {
          this.lostAt = null;
          return { kind: 'owner-has', index: record.index };
        }
        if (holder === undefined) {
          // A claim for this owner is in flight or crashed before its block write: finish it.
          if (!(await this.takeOverRecord(owner, record, record.index, tok))) continue;
          target = record.index;
        } else if (this.clock() - record.since >= this.claimGraceMs) {
          // Its holder lost that block and crashed before deleting the record.
          if (!(await this.takeOverRecord(owner, record, index, tok))) continue;
        } else {
          // Its holder lost that block and is about to delete the record.
          if (waited >= this.claimWaitMs) break;
          const pause = Math.min(25 * 2 ** Math.min(round, 5), this.claimWaitMs - waited);
          await this.sleep(pause);
          waited += pause;
          continue;
        }
      }
      if (await this.takeBlock(target, owner)) {
        this.won();
        return target === index ? { kind: 'claimed' } : { kind: 'owner-has', index: target };
      }
      await this.deleteRecord(owner, tok);
      if (target === index) return this.settle(index, false);
      // The block our record named went to someone else: start over with our candidate.
    }
    throw new PodrouteError(`another claim for ${JSON.stringify(owner)} is still in progress; try again`, {
      retryable: true,
    });
  }

  async occupy(first: number, last: number, owner: string | null): Promise<void> {
    const indices = range(first, last);
    await mapLimit(indices, RANGE_CONCURRENCY, (index) => this.occupyBlock(index, owner));
    if (owner === null || (await this.findOwned(owner)) !== null) return;
    const mine = (await this.blocksBetween(first, last)).find((lease) => lease.owner === owner);
    if (mine === undefined) return;
    const record = await this.readRecord(owner);
    if (record === null) {
      await this.createRecord(owner, mine.index, randomUUID());
    } else if (this.clock() - record.since >= this.claimGraceMs) {
      // Invalid and old: a leftover. A fresh one belongs to a claim in flight, which settles it.
      await this.takeOverRecord(owner, record, mine.index, randomUUID());
    }
  }

  async release(first: number, last: number, owner?: string): Promise<void> {
    const used = await this.blocksBetween(first, last);
    const candidates = owner === undefined ? used : used.filter((lease) => lease.owner === null || lease.owner === owner);
    await mapLimit(candidates, RANGE_CONCURRENCY, async ({ index }) => {
      const freed = await this.deleteBlock(index, owner);
      const formerOwner = freed === false ? null : freed.owner;
      if (formerOwner === null) return;
      // The record may name this block; a crash before this delete leaves it invalid, which is harmless.
      await this.guarded('release', 'DeleteItem', () => this.client.send(new DeleteItemCommand({
        TableName: this.tableName,
        Key: this.key(ownerKey(formerOwner)),
        ConditionExpression: '#index = :index',
        ExpressionAttributeNames: { '#index': 'index' },
        ExpressionAttributeValues: { ':index': num(index) },
      })));
    });
    if (this.view !== null) for (const lease of candidates) this.view.used.delete(lease.index);
  }

  // ---- protocol steps -------------------------------------------------------------------------

  /** Takes block `index` for `owner` if free (or already theirs). */
  private async takeBlock(index: number, owner: string | null): Promise<boolean> {
    const names: Names = {};
    const values: Values = { ':now': num(this.clock()) };
    let update = 'SET since = if_not_exists(since, :now)';
    let condition = 'attribute_not_exists(pk)';
    if (owner !== null) {
      names['#owner'] = 'owner';
      values[':owner'] = { S: owner };
      update += ', #owner = :owner';
      condition += ' OR #owner = :owner';
    }
    const won = await this.guarded('block', 'UpdateItem', () => this.client.send(new UpdateItemCommand({
      TableName: this.tableName,
      Key: this.key(blockKey(index)),
      UpdateExpression: update,
      ConditionExpression: condition,
      ...(owner === null ? {} : { ExpressionAttributeNames: names }),
      ExpressionAttributeValues: values,
    })));
    if (won) this.view?.used.add(index);
    return won;
  }

  /** Marks block `index` used; gives it to `owner` when it is free or ownerless. */
  private async occupyBlock(index: number, owner: string | null): Promise<void> {
    const now = num(this.clock());
    const command = owner === null
      ? new PutItemCommand({
          TableName: this.tableName,
          Item: { ...this.key(blockKey(index)), since: now },
          ConditionExpression: 'attribute_not_exists(pk)',
        })
      : new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(blockKey(index)),
          UpdateExpression: 'SET #owner = :owner, since = :now',
          ConditionExpression: 'attribute_not_exists(pk) OR attribute_not_exists(#owner)',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': { S: owner }, ':now': now },
        });
    await this.guarded('occupy', owner === null ? 'PutItem' : 'UpdateItem', () =>
      command instanceof PutItemCommand ? this.client.send(command) : this.client.send(command),
    );
    this.view?.used.add(index);
  }

  /** Deletes a used block (with `owner`: only its own or an ownerless one); false when it was not ours. */
  private async deleteBlock(index: number, owner: string | undefined): Promise<{ owner: string | null } | false> {
    try {
      const output = await this.client.send(new DeleteItemCommand({
        TableName: this.tableName,
        Key: this.key(blockKey(index)),
        ReturnValues: 'ALL_OLD',
        ...(owner === undefined
          ? {}
          : {
              ConditionExpression: 'attribute_not_exists(#owner) OR #owner = :owner',
              ExpressionAttributeNames: { '#owner': 'owner' },
              ExpressionAttributeValues: { ':owner': { S: owner } },
            }),
      }));
      const old = output.Attributes;
      if (old === undefined) return false;
      return { owner: old.owner?.S ?? null };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw dynamoDbError('DeleteItem', error);
      this.onConditionalFailure('release');
      return false;
    }
  }

  private async createRecord(owner: string, index: number, tok: string): Promise<boolean> {
    return this.guarded('owner', 'PutItem', () => this.client.send(new PutItemCommand({
      TableName: this.tableName,
      Item: { ...this.key(ownerKey(owner)), index: num(index), tok: { S: tok }, since: num(this.clock()) },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  /** Becomes the holder of `owner`'s record, pointing it at `index`, if nobody else did meanwhile. */
  private async takeOverRecord(owner: string, seen: OwnerRecord, index: number, tok: string): Promise<boolean> {
    return this.guarded('owner', 'UpdateItem', () => this.client.send(new UpdateItemCommand({
      TableName: this.tableName,
      Key: this.key(ownerKey(owner)),
      UpdateExpression: 'SET #index = :index, tok = :tok, since = :now',
      ConditionExpression: 'tok = :seen',
      ExpressionAttributeNames: { '#index': 'index' },
      ExpressionAttributeValues: {
        ':index': num(index),
        ':tok': { S: tok },
        ':now': num(this.clock()),
        ':seen': { S: seen.tok },
      },
    })));
  }

  private async deleteRecord(owner: string, tok: string): Promise<void> {
    await this.guarded('owner', 'DeleteItem', () => this.client.send(new DeleteItemCommand({
      TableName: this.tableName,
      Key: this.key(ownerKey(owner)),
      ConditionExpression: 'tok = :tok',
      ExpressionAttributeValues: { ':tok': { S: tok } },
    })));
  }

  private async readRecord(owner: string): Promise<OwnerRecord | null> {
    const item = await this.getItem(ownerKey(owner), '#index, tok, since', { '#index': 'index' });
    if (item === null) return null;
    return { index: numberAttr(item, 'index'), tok: stringAttr(item, 'tok'), since: numberAttr(item, 'since') };
  }

  /** undefined: the block is free; null: used without an owner. */
  private async readBlockOwner(index: number): Promise<string | null | undefined> {
    const item = await this.getItem(blockKey(index), 'sk, #owner', { '#owner': 'owner' });
    if (item === null) return undefined;
    return item.owner === undefined ? null : stringAttr(item, 'owner');
  }

  private settle(index: number, won: boolean): ClaimResult {
    if (won) {
      this.won();
      return { kind: 'claimed' };
    }
    this.lostAt = index;
    this.heat = Math.min(this.heat + 1, 16);
    this.view?.used.add(index);
    return { kind: 'taken' };
  }

  // ---- searching ------------------------------------------------------------------------------

  /** First free index in `from..to` (inclusive), reading block keys in growing pages. */
  private async firstGap(view: QueryView, from: number, to: number): Promise<number | null> {
    let expected = from;
    let limit = FIRST_PAGE;
    let found: number | null = null;
    await this.queryPages(
      {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': { S: this.pk },
          ':from': { S: blockKey(from) },
          ':to': { S: blockKey(to) },
        },
        ProjectionExpression: 'sk',
      },
      (page) => {
        const items = page.Items ?? [];
        for (const item of items) {
          const index = indexOfKey(stringAttr(item, 'sk'));
          view.used.add(index);
          if (found === null && index > expected) found = expected;
          if (found === null) expected = index + 1;
        }
        const lastKey = page.LastEvaluatedKey?.sk?.S;
        const readUpTo = lastKey === undefined ? to : indexOfKey(lastKey);
        view.ranges.push([from, readUpTo]);
        if (found === null && lastKey === undefined && expected <= to) found = expected;
        limit = Math.min(limit * 2, MAX_PAGE);
        return found === null;
      },
      () => limit,
    );
    return found;
  }

  private won(): void {
    this.lostAt = null;
    this.heat = Math.max(this.heat - 1, 0);
  }

  /**
   * Under contention: a free block at or after `from` by the last Query, picked at random among
   * the next few (twice as many for each unit of heat) so that racing writers spread out.
   */
  private spreadGap(view: QueryView, from: number): number | null {
    const want = Math.min(this.spread, 2 ** this.heat);
    const gaps: number[] = [];
    for (let step = 0, index = from; step < view.total && gaps.length < want; step++, index = (index + 1) % view.total) {
      if (!view.ranges.some(([low, high]) => index >= low && index <= high)) break;
      if (!view.used.has(index)) gaps.push(index);
    }
    if (gaps.length === 0) return null;
    return gaps[gaps.length === 1 ? 0 : randomInt(gaps.length)] ?? null;
  }

  /** Used blocks in `first..last` with owner and time, in index order. */
  private async blocksBetween(first: number, last: number): Promise<TimedLease[]> {
    const leases: TimedLease[] = [];
    await this.queryPages(
      {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':pk': { S: this.pk },
          ':from': { S: blockKey(first) },
          ':to': { S: blockKey(last) },
        },
        ProjectionExpression: 'sk, #owner, since',
      },
      (page) => {
        for (const item of page.Items ?? []) {
          leases.push({
            index: indexOfKey(stringAttr(item, 'sk')),
            owner: item.owner === undefined ? null : stringAttr(item, 'owner'),
            since: item.since === undefined ? 0 : numberAttr(item, 'since'),
          });
        }
        return true;
      },
    );
    return leases;
  }

  // ---- SDK plumbing ---------------------------------------------------------------------------

  private key(sk: string): Values {
    return { pk: { S: this.pk }, sk: { S: sk } };
  }

  private async getItem(sk: string, projection: string, names: Names): Promise<Values | null> {
    const output = await this.call('GetItem', () => this.client.send(new GetItemCommand({
      TableName: this.tableName,
      Key: this.key(sk),
      ConsistentRead: true,
      ProjectionExpression: projection,
      ExpressionAttributeNames: names,
    })));
    return output.Item ?? null;
  }

  /** Strongly consistent Query over every page; `onPage` returns false to stop early. */
  private async queryPages(
    input: Omit<QueryCommandInput, 'TableName' | 'ConsistentRead' | 'ExclusiveStartKey' | 'Limit'>,
    onPage: (page: { Items?: Values[]; Count?: number; LastEvaluatedKey?: Values }) => boolean,
    limit?: () => number,
  ): Promise<void> {
    let start: Values | undefined;
    do {
      const page = await this.call('Query', () => this.client.send(new QueryCommand({
        ...input,
        TableName: this.tableName,
        ConsistentRead: true,
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        ...(limit === undefined ? {} : { Limit: limit() }),
      })));
      if (!onPage(page)) return;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  }

  /** A conditional write: true when done, false when its condition was false. */
  private async guarded(write: ConditionalWrite, action: string, run: () => Promise<unknown>): Promise<boolean> {
    try {
      await run();
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw dynamoDbError(action, error);
      this.onConditionalFailure(write);
      return false;
    }
  }

  private async call<T>(action: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw dynamoDbError(action, error);
    }
  }
}

// ---- helpers ----------------------------------------------------------------------------------

const num = (value: number): AttributeValue => ({ N: String(value) });

function corrupt(what: string): PodrouteError {
  return new PodrouteError(`malformed CIDR table item: ${what}`, { retryable: false });
}

function numberAttr(item: Values, name: string): number {
  const text = item[name]?.N;
  const value = text === undefined ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(value)) throw corrupt(`attribute ${name} is not a whole number`);
  return value;
}

function stringAttr(item: Values, name: string): string {
  const text = item[name]?.S;
  if (text === undefined) throw corrupt(`attribute ${name} is not a string`);
  return text;
}

function indexOfKey(sk: string): number {
  const digits = sk.slice(BLOCK_PREFIX.length);
  if (!sk.startsWith(BLOCK_PREFIX) || !/^\d{10}$/.test(digits)) throw corrupt(`block key ${JSON.stringify(sk)}`);
  return Number(digits);
}

function range(first: number, last: number): number[] {
  const out: number[] = [];
  for (let index = first; index <= last; index++) out.push(index);
  return out;
}

async function mapLimit<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
