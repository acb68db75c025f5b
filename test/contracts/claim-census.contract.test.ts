/** The ClaimCensusStore contract against the fake and against DynamoDbClaimCensus over dynalite. */
import { afterAll } from 'vitest';
import { DynamoDbClaimCensus } from '../../lib/aws/dynamodb-claim-census.ts';
import { MemoryClaimCensus } from '../fakes/memory-claim-census.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { freshCidrTable } from '../support/world.ts';
import { claimCensusContract } from './claim-census.contract.ts';

claimCensusContract('MemoryClaimCensus', async () => new MemoryClaimCensus());

// One dynalite for the file, started by the first case that needs it; a fresh table per case.
let local: LocalDynamo | undefined;
afterAll(async () => {
  await local?.close();
});

claimCensusContract('DynamoDbClaimCensus over dynalite', async () => {
  local ??= await startDynalite();
  const client = local.client();
  return new DynamoDbClaimCensus({ client, tableName: await freshCidrTable(client) });
});
