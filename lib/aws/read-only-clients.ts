/**
 * SDK clients and a node source that only read: a middleware refuses every command that is not a
 * read, before it is sent, and the node source refuses its writes. The dry run (lib/cli/dry-run.ts)
 * and observe mode (WRITES=off, functions/wiring.ts) build the deployed wiring over these, so a
 * write that the use case did not stop before fails loudly instead of changing the account.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { PodrouteError } from '../errors.ts';
import type { NodeSource } from '../usecases/ports.ts';

/** A write a read-only port or client was asked for. */
export class DryRunWriteError extends PodrouteError {
  override name = 'DryRunWriteError';
}

/** Told of each refused write (observe mode counts them: none should reach a client). */
export type OnRefused = (what: string) => void;

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

function refuseWrites(client: { middlewareStack: unknown }, service: keyof typeof READS, onRefused: OnRefused): void {
  (client.middlewareStack as AnyStack).add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '?';
      if (!READS[service].test(name)) {
        onRefused(`${service} ${name}`);
        throw new DryRunWriteError(`read-only: ${service} ${name} is a write, refused`);
      }
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
export function readOnlyClients<T extends AwsClients>(clients: T, onRefused: OnRefused = () => undefined): T {
  refuseWrites(clients.ec2, 'ec2', onRefused);
  refuseWrites(clients.sqs, 'sqs', onRefused);
  refuseWrites(clients.dynamodb, 'dynamodb', onRefused);
  return clients;
}

/** The node source's reads; its writes refused. */
export function readOnlyNodes(nodes: NodeSource, onRefused: OnRefused = () => undefined): NodeSource {
  const refused = (what: string) => (): Promise<never> => {
    onRefused(`kubernetes ${what}`);
    return Promise.reject(new DryRunWriteError(`read-only: ${what} is a write, refused`));
  };
  return {
    listNodes: () => nodes.listNodes(),
    getNode: (name) => nodes.getNode(name),
    setNetworkUnavailable: refused('setting NetworkUnavailable'),
    updatePodCidr: refused('updating podCIDRs'),
    warn: refused('a Warning event'),
  };
}
