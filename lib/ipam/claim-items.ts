/**
 * How the claim protocol (claim-protocol.ts) lays out its items in one sorted key space: a block
 * item per allocated index (`b#` and ten digits, so keys sort as indices do), an owner record per
 * owner (`o#` and the owner's name), and one cursor item; and how a stored item reads back.
 */
import { PodrouteError } from '../errors.ts';
import type { StoredItem } from './claim-store.ts';
import type { BlockLease } from './cidr-store.ts';

const BLOCK_PREFIX = 'b#';
export const OWNER_PREFIX = 'o#';
/** The cursor item and its attribute: tickets handed out so far. */
export const CURSOR_KEY = 'cursor';
export const CURSOR_ATTR = 'pos';
const INDEX_DIGITS = 10;
const MAX_INDEX = 2 ** 32 - 1;

export const blockKey = (index: number): string => `${BLOCK_PREFIX}${String(index).padStart(INDEX_DIGITS, '0')}`;
export const ownerKey = (owner: string): string => `${OWNER_PREFIX}${owner}`;
export const FIRST_BLOCK = blockKey(0);
export const LAST_BLOCK = blockKey(MAX_INDEX);
// Owner names are Kubernetes node names (DNS subdomains: lower-case ASCII); '~' sorts after them.
export const FIRST_OWNER = OWNER_PREFIX;
export const LAST_OWNER = `${OWNER_PREFIX}~`;

function corrupt(what: string): PodrouteError {
  return new PodrouteError(`malformed CIDR table item: ${what}`, { retryable: false });
}

export function ownerOf(item: StoredItem): string | null {
  const owner = item.attrs.owner;
  if (owner === undefined) return null;
  if (typeof owner !== 'string') throw corrupt(`${item.key}: owner is not a string`);
  return owner;
}

export function recordIndex(record: StoredItem): number {
  const index = record.attrs.index;
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) throw corrupt(`${record.key}: index is not a block index`);
  return index;
}

export function indexOfKey(key: string): number {
  const digits = key.slice(BLOCK_PREFIX.length);
  if (!key.startsWith(BLOCK_PREFIX) || !/^\d{10}$/.test(digits)) throw corrupt(`block key ${JSON.stringify(key)}`);
  return Number(digits);
}

/**
 * The lease a block item records. A block without a numeric `since` is a lease of unknown age
 * (`since` undefined), which lib/usecases/absence.ts `pastGrace` never counts as past the grace period.
 */
export function toLease(item: StoredItem): BlockLease {
  const since = item.attrs.since;
  return {
    index: indexOfKey(item.key),
    owner: ownerOf(item),
    ...(typeof since === 'number' ? { since } : {}),
    version: item.version,
  };
}
