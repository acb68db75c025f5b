/**
 * `podroute doctor`'s Lambda concurrency check, before a deploy: can the account reserve what the
 * stack's params ask for (reconcileReservedConcurrency + webhookReservedConcurrency + cloudEventsReservedConcurrency)? Lambda keeps
 * 100 of the account's concurrency unreserved for the functions without a reservation: a function
 * may reserve up to the unreserved concurrency less 100 (Lambda API Reference,
 * PutFunctionConcurrency; Lambda Developer Guide, "Configuring reserved concurrency"), and a stack
 * that asks for more fails to deploy. New accounts can have a quota too low for any reservation.
 */
import { errorText } from '../errors.ts';
import { fail, ok } from '../usecases/doctor-check.ts';
import type { CheckResult } from '../usecases/doctor-check.ts';

export const MIN_UNRESERVED = 100;
/** serverless.yml's defaults: reconcileReservedConcurrency 1, webhookReservedConcurrency 10, cloudEventsReservedConcurrency 5. */
export const DEFAULT_RESERVED_CONCURRENCY = 16;

export interface ConcurrencySource {
  account(): Promise<{ limit: number; unreserved: number }>;
  reserved(functionName: string): Promise<number>;
}

/** Whether `asked` fits; `held` is what the stack's functions reserve already (it comes back to them on an update). */
export function judgeConcurrency(account: { limit: number; unreserved: number }, asked: number, held: number): CheckResult {
  const label = 'lambda concurrency';
  const room = Math.max(0, account.unreserved + held - MIN_UNRESERVED);
  const quota = `account quota ${account.limit}, ${account.unreserved} unreserved${held > 0 ? `, ${held} of them the stack's` : ''}; Lambda keeps ${MIN_UNRESERVED} unreserved`;
  if (asked === 0) return ok(label, `no reserved concurrency asked (${quota})`);
  if (asked > room) {
    return fail(
      label,
      `the params reserve ${asked}, the account can spare ${room} (${quota}): the deploy would fail; set reconcileReservedConcurrency, webhookReservedConcurrency and cloudEventsReservedConcurrency lower or to '' (none), ` +
        `or raise "Concurrent executions" (Service Quotas lambda L-B99A9384)`,
    );
  }
  return ok(label, `the params reserve ${asked} of the ${room} the account can spare (${quota})`);
}

export async function checkConcurrency(source: ConcurrencySource, asked: number, stackFunctions: readonly string[]): Promise<CheckResult> {
  try {
    const account = await source.account();
    let held = 0;
    for (const name of stackFunctions) held += await source.reserved(name);
    return judgeConcurrency(account, asked, held);
  } catch (error) {
    return fail('lambda concurrency', `cannot read the account's Lambda concurrency: ${errorText(error)} (the caller needs lambda:GetAccountSettings, and lambda:GetFunctionConcurrency with --stack)`);
  }
}
