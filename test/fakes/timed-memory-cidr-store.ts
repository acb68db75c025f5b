/**
 * The CidrStore (lib/ipam/cidr-store.ts) as the deployed one keeps it, in memory: the claim protocol
 * over the in-memory claim store, stamping each block with the time it was taken or renewed
 * (`since`, from the given clock) and a version, as the DynamoDB store does (the two stores share
 * one contract: test/aws/dynamodb-cidr-store.test.ts). For lease logic without DynamoDB.
 */
import { ClaimProtocolStore, MemoryClaimStore } from '../../lib/ipam/index.ts';

export class TimedMemoryCidrStore extends ClaimProtocolStore {
  constructor(now: () => number) {
    super(new MemoryClaimStore(), { clock: now });
  }
}
