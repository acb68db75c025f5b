/** The ClaimCensusStore contract against the fake and against DynamoDbClaimCensus over dynalite. */
import { DynamoDbClaimCensus } from '../../lib/aws/dynamodb-claim-census.ts';
import { MemoryClaimCensus } from '../fakes/memory-claim-census.ts';
import { useFreshCidrTables } from '../support/dynalite.ts';
import { claimCensusContract } from './claim-census.contract.ts';

claimCensusContract('MemoryClaimCensus', async () => new MemoryClaimCensus());

const freshTable = useFreshCidrTables();

claimCensusContract('DynamoDbClaimCensus over dynalite', async () => {
  return new DynamoDbClaimCensus(await freshTable());
});
