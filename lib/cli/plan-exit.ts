/**
 * The exit status of a printed plan (`podroute plan`, `podroute reconcile --dry-run`). With
 * `--detailed-exitcode` it says whether the plan changes anything, as `terraform plan
 * -detailed-exitcode` does: 0 no changes, 1 an error, 2 changes pending. lib/cli/main.ts makes every
 * error exit 1 under the flag, bad input too, so that 2 means only "changes pending".
 */
import type { RoutePlan } from '../routes/index.ts';

export const DETAILED_EXITCODE_HELP = `With --detailed-exitcode, as 'terraform plan -detailed-exitcode': 0 the plan changes nothing,
1 an error (bad input too), 2 changes pending: a route to create, replace or delete (deletions the
mass-deletion guard withholds too) or a node's NetworkUnavailable condition to write.
`;

/** Whether the plan asks for any write: a route operation or a node condition patch. */
export function hasPendingChanges(plan: Pick<RoutePlan, 'create' | 'replace' | 'delete' | 'nodes'>): boolean {
  return plan.create.length > 0 || plan.replace.length > 0 || plan.delete.length > 0 || plan.nodes.some((node) => node.patch);
}

export function planExitCode(plan: Pick<RoutePlan, 'create' | 'replace' | 'delete' | 'nodes'>, detailedExitCode: boolean): number {
  return detailedExitCode && hasPendingChanges(plan) ? 2 : 0;
}
