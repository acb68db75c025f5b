/**
 * `podroute doctor`'s second-allocator check: is kube-controller-manager (or a cloud controller
 * manager) still handing out pod CIDRs beside podroute? The API server records who set each
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

export function judgeAllocators(nodes: readonly PodCidrWriters[]): CheckResult {
  const byController = nodes.filter((n) => n.managers.some((m) => CONTROLLER.test(m)));
  // creationTimestamp has a resolution of a second: every node of the newest second counts as newest.
  const newestTime = nodes.reduce((max, n) => (n.created > max ? n.created : max), '');
  const newest = byController.filter((n) => n.created === newestTime).sort((a, b) => a.node.localeCompare(b.node))[0];
  const named = byController.map((n) => `${n.node} (${n.managers.filter((m) => CONTROLLER.test(m)).join(', ')})`);
  if (newest) {
    return fail(LABEL, `the newest node with a pod CIDR, ${newest.node} (created ${newest.created}), got it from ${newest.managers.filter((m) => CONTROLLER.test(m)).join(', ')}: a second allocator is running; ${FIX}`);
  }
  if (byController.length > 0) {
    return warn(LABEL, `${byController.length} of ${nodes.length} nodes' pod CIDRs were set by a controller manager, none of the newest: ${shortList(named, 5)} (allocated before podroute took over?); if it still runs, ${FIX}`);
  }
  return ok(LABEL, `no controller manager set any of ${nodes.length} nodes' pod CIDRs`);
}

export async function checkAllocators(source: { podCidrWriters(): Promise<PodCidrWriters[]> }): Promise<CheckResult> {
  try {
    return judgeAllocators(await source.podCidrWriters());
  } catch (error) {
    return fail(LABEL, `cannot list the nodes' managedFields: ${errorText(error)}`);
  }
}
