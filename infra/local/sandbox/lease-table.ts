/**
 * The CIDR leases as the table holds them, read straight from DynamoDB with a Scan, for the
 * sandbox's judge (report.ts): not through podroute's CIDR sets, so a bug there cannot hide a lease.
 *
 * Layout (lib/aws/dynamodb-cidr-store.ts documents it): one partition per CIDR set,
 * `pk = set#<range>@<mask>`, and one item per leased block, `sk = b#<index>` (ten digits), with an
 * `owner` string attribute when the block has an owner. Block `index` of `<range>` cut into
 * `/<mask>` blocks is the range's network plus index blocks. Other items (owner records, the
 * cursor, the set registry) are not leases.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { blockAt, tryParseCidr, formatCidr } from '../../../lib/cidr/cidr.ts';
import type { LeaseRecord } from './report.ts';

/** The lease one raw item stands for, or null when the item is no lease. */
export function leaseOfItem(item: Record<string, AttributeValue>): LeaseRecord | null {
  const pk = item.pk?.S;
  const sk = item.sk?.S;
  if (pk === undefined || sk === undefined || !pk.startsWith('set#') || !/^b#\d{10}$/.test(sk)) return null;
  const setId = pk.slice('set#'.length);
  const at = setId.lastIndexOf('@');
  const range = tryParseCidr(setId.slice(0, at));
  const mask = Number(setId.slice(at + 1));
  if (at < 0 || range === null || !Number.isInteger(mask)) return null;
  let cidr: string;
  try {
    cidr = formatCidr(blockAt(range, mask, BigInt(sk.slice(2))));
  } catch {
    return null;
  }
  const owner = item.owner?.S;
  return { cidr, owner: owner ?? null };
}

/** Every lease in the table, all pages. */
export async function scanLeases(client: DynamoDBClient, tableName: string): Promise<LeaseRecord[]> {
  const leases: LeaseRecord[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }));
    for (const item of page.Items ?? []) {
      const lease = leaseOfItem(item);
      if (lease) leases.push(lease);
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return leases;
}
