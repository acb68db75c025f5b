/**
 * The local DynamoDB for tests is the sandbox's: dynalite in process on 127.0.0.1 with the CIDR
 * table created (infra/local/dynamodb.ts).
 *
 *   const local = await startDynalite();
 *   const client = local.client();          // closed by local.close()
 *   ... afterAll(() => local.close());
 */
export { startLocalDynamoDb as startDynalite } from '../../infra/local/dynamodb.ts';
export type { LocalDynamoDb as LocalDynamo } from '../../infra/local/dynamodb.ts';
