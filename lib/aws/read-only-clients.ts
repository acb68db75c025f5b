/**
 * SDK clients that only read: a middleware refuses every command that is not a read, before it is
 * sent. The dry run (lib/cli/dry-run.ts) builds the deployed wiring over these, so a write that the
 * use case did not stop before fails loudly instead of changing the account.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { PodrouteError } from '../errors.ts';

/** A write a read-only port or client was asked for. */
export class DryRunWriteError extends PodrouteError {
  override name = 'DryRunWriteError';
}

/** Command names (the SDK's `context.commandName`) each service may send: reads only. */
const READS = {
  ec2: /^(Describe|Get)\w*Command$/,
  dynamodb: /^(GetItem|BatchGetItem|Query|Scan|DescribeTable)Command$/,
  sqs: /^(GetQueueAttributes|GetQueueUrl)Command$/,
} as const;

type Handler = (args: unknown) => Promise<unknown>;
interface AnyStack {
  add(middleware: (next: Handler, context: { commandName?: string }) => Handler, options: { step: 'initialize'; name: string }): void;
}

function refuseWrites(client: { middlewareStack: unknown }, service: keyof typeof READS): void {
  (client.middlewareStack as AnyStack).add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '?';
      if (!READS[service].test(name)) throw new DryRunWriteError(`dry run: ${service} ${name} is a write, refused`);
      return next(args);
    },
    { step: 'initialize', name: 'podrouteReadOnly' },
  );
}

/** The clients the wiring takes. */
export interface AwsClients {
  ec2: EC2Client;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
}

/** The same clients, every write refused from now on (the middleware is added to them). */
export function readOnlyClients<T extends AwsClients>(clients: T): T {
  refuseWrites(clients.ec2, 'ec2');
  refuseWrites(clients.sqs, 'sqs');
  refuseWrites(clients.dynamodb, 'dynamodb');
  return clients;
}
