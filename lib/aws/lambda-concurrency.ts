/**
 * The account's Lambda concurrency, for `podroute doctor`: GetAccountSettings answers the regional
 * quota (`AccountLimit.ConcurrentExecutions`) and what no function has reserved
 * (`UnreservedConcurrentExecutions`); GetFunctionConcurrency a function's own reservation (none
 * when absent). Lambda API Reference; read-only.
 */
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { InvalidInputError } from '../errors.ts';

export class LambdaConcurrency {
  constructor(private readonly client: LambdaClient) {}

  async account(): Promise<{ limit: number; unreserved: number }> {
    const out = await this.client.send(new GetAccountSettingsCommand({}));
    const limit = out.AccountLimit?.ConcurrentExecutions;
    const unreserved = out.AccountLimit?.UnreservedConcurrentExecutions;
    if (limit === undefined || unreserved === undefined) throw new InvalidInputError('GetAccountSettings answered no AccountLimit.ConcurrentExecutions or UnreservedConcurrentExecutions');
    return { limit, unreserved };
  }

  async reserved(functionName: string): Promise<number> {
    return (await this.client.send(new GetFunctionConcurrencyCommand({ FunctionName: functionName }))).ReservedConcurrentExecutions ?? 0;
  }
}
