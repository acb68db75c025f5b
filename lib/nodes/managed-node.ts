/**
 * Which nodes are podroute's: one pure decision that the planner, reconcile, the webhook and the
 * worker all ask, so a node is managed everywhere or nowhere. A node that is not gets no pod CIDR,
 * no route, and its NetworkUnavailable condition is never written.
 */
import { matchesLabels } from './label-selector.ts';
import type { LabelSelector } from './label-selector.ts';
import { instanceIdOf } from './node.ts';
import type { Node } from './node.ts';

/**
 * - `outside-node-selector`: its labels do not match NODE_SELECTOR (e.g. a VPC-CNI node group beside);
 * - `not-an-ec2-instance`: its providerID names no EC2 instance (EKS Fargate registers
 *   `aws:///<zone>/<task id>/fargate-ip-…`, kubernetes/autoscaler#2737); marking it
 *   NetworkUnavailable would taint it and stop its pods from scheduling;
 * - `no-provider-id`: not set yet, so not ready to manage: with an external cloud provider the
 *   cloud-controller-manager sets it while the node is still tainted uninitialized (Kubernetes docs,
 *   "Cloud Controller Manager Administration"), so no pod waits; the webhook acts on the update
 *   that sets it (lib/usecases/node-webhook.ts), reconcile on the next tick otherwise.
 */
export type UnmanagedReason = 'outside-node-selector' | 'not-an-ec2-instance' | 'no-provider-id';

/** Why podroute must leave this node alone, or null when the node is podroute's. */
export function unmanagedReason(node: Node, selector?: LabelSelector | null): UnmanagedReason | null {
  if (selector && !matchesLabels(selector, node.metadata.labels)) return 'outside-node-selector';
  const providerId = node.spec?.providerID;
  if (providerId === undefined || providerId === '') return 'no-provider-id';
  if (instanceIdOf(node) === null) return 'not-an-ec2-instance';
  return null;
}
