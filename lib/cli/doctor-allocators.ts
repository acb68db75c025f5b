/**
 * `podroute doctor`'s second-allocator checks: is kube-controller-manager (or a cloud controller
 * manager) still handing out pod CIDRs, or routing them, beside podroute? The API server records who set each
 * node's `spec.podCIDR` in `managedFields` (lib/kube/kube-access.ts); a `spec.podCIDR` is set once,
 * so nodes allocated before podroute took over keep their controller manager's entry. The newest
 * allocated node decides: set by a controller manager, that allocator is still running (FAIL); older
 * ones only are history (warn). A kubelet that writes its own pod CIDR is a claim, judged by the
 * lease table, not here.
 */
import { errorText } from '../errors.ts';
import { fail, ok, shortList, warn } from '../usecases/doctor-check.ts';
import type { CheckResult } from '../usecases/doctor-check.ts';
import type { PodCidrWriters } from '../kube/kube-access.ts';

const LABEL = 'second allocator';
const CONTROLLER = /controller-manager/;
const FIX = 'run kube-controller-manager with --allocate-node-cidrs=false --configure-cloud-routes=false, and the cloud controller manager with --configure-cloud-routes=false';

/** Controller managers among `managers`. */
const controllers = (managers: readonly string[]): string[] => managers.filter((m) => CONTROLLER.test(m));

/**
 * The nodes `written` says a controller manager wrote, and the newest of them when it is among the
 * cluster's newest nodes (creationTimestamp has a resolution of a second: every node of the newest
 * second counts as newest).
 */
function controllerWrites(nodes: readonly PodCidrWriters[], written: (n: PodCidrWriters) => readonly string[]) {
  const byController = nodes.filter((n) => controllers(written(n)).length > 0);
  const newestTime = nodes.reduce((max, n) => (n.created > max ? n.created : max), '');
  const newest = byController.filter((n) => n.created === newestTime).sort((a, b) => a.node.localeCompare(b.node))[0];
  return { byController, newest };
}

export function judgeAllocators(nodes: readonly PodCidrWriters[]): CheckResult {
  const { byController, newest } = controllerWrites(nodes, (n) => n.managers);
  const named = byController.map((n) => `${n.node} (${controllers(n.managers).join(', ')})`);
  if (newest) {
    return fail(LABEL, `the newest node with a pod CIDR, ${newest.node} (created ${newest.created}), got it from ${controllers(newest.managers).join(', ')}: a second allocator is running; ${FIX}`);
  }
  if (byController.length > 0) {
    return warn(LABEL, `${byController.length} of ${nodes.length} nodes' pod CIDRs were set by a controller manager, none of the newest: ${shortList(named, 5)} (allocated before podroute took over?); if it still runs, ${FIX}`);
  }
  return ok(LABEL, `no controller manager set any of ${nodes.length} nodes' pod CIDRs`);
}

const ROUTES_LABEL = 'second route controller';

/**
 * The same judgement for routing: a route controller marks each node's NetworkUnavailable
 * condition once its routes exist (upstream's route controller, `updateNetworkingCondition`), and
 * the API server records that writer on `nodes/status`. The newest node's mark written by a
 * controller manager means its route controller still runs beside podroute.
 */
export function judgeRouteControllers(nodes: readonly PodCidrWriters[]): CheckResult {
  const { byController, newest } = controllerWrites(nodes, (n) => n.conditionManagers);
  if (newest) {
    return fail(ROUTES_LABEL, `the newest node, ${newest.node} (created ${newest.created}), had its NetworkUnavailable condition written by ${controllers(newest.conditionManagers).join(', ')}: a second route controller is running; ${FIX}`);
  }
  if (byController.length > 0) {
    return warn(ROUTES_LABEL, `${byController.length} of ${nodes.length} nodes' NetworkUnavailable conditions were written by a controller manager, none of the newest: ${shortList(byController.map((n) => n.node), 5)}; if it still runs, ${FIX}`);
  }
  return ok(ROUTES_LABEL, `no controller manager wrote any of ${nodes.length} nodes' NetworkUnavailable conditions`);
}

export async function checkAllocators(source: { podCidrWriters(): Promise<PodCidrWriters[]> }): Promise<CheckResult[]> {
  try {
    const writers = await source.podCidrWriters();
    return [judgeAllocators(writers), judgeRouteControllers(writers)];
  } catch (error) {
    return [fail(LABEL, `cannot list the nodes' managedFields: ${errorText(error)}`)];
  }
}
