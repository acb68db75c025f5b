/**
 * One `podroute doctor` check result and the helpers that make one: shared by the doctor
 * (lib/usecases/doctor.ts) and the checks each data plane supplies (doctor-checks.ts in
 * lib/dataplane/routes and lib/dataplane/prefixes).
 */
import { errorText } from '../errors.ts';
import type { Node } from '../nodes/node.ts';

export type CheckStatus = 'ok' | 'FAIL' | 'warn';

export interface CheckResult {
  status: CheckStatus;
  check: string;
  detail: string;
}

/** A plane's own checks, over the nodes podroute manages (null: the nodes could not be read). */
export type PlaneDoctorChecks = (managed: Node[] | null) => Promise<CheckResult[]>;

export const ok = (check: string, detail: string): CheckResult => ({ status: 'ok', check, detail });
export const warn = (check: string, detail: string): CheckResult => ({ status: 'warn', check, detail });
export const fail = (check: string, detail: string): CheckResult => ({ status: 'FAIL', check, detail });

/** Runs `read`; a throw becomes a FAIL line `<what>: cannot read: ...` in `results`, and undefined. */
export async function gather<T>(what: string, results: CheckResult[], read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    results.push(fail(what, `cannot read: ${errorText(error)}`));
    return undefined;
  }
}

/** Up to `shown` items joined by `separator`, with `...` when there are more. */
export function shortList(items: readonly string[], shown: number, separator = ', '): string {
  return `${items.slice(0, shown).join(separator)}${items.length > shown ? `${separator}...` : ''}`;
}

/**
 * EC2 writes one of the stack's function roles makes (its logical id in serverless.yml), on one
 * resource type, allowed only on resources tagged `kubernetes.io/cluster/<name>`.
 */
export interface RoleWrites {
  role: 'ReconcileRole' | 'RouteWorkerRole';
  actions: readonly string[];
  resource: 'route-table' | 'network-interface';
}
