/**
 * Which nodes are podroute's. One pure decision that the planner, reconcile, the webhook and the
 * worker all ask, so a node is either managed everywhere or nowhere.
 *
 * A node is not podroute's (no pod CIDR is allocated to it, no route is made or removed for it, its
 * NetworkUnavailable condition is never written) when:
 * - `outside-node-selector`: its labels do not match the configured node selector (`NODE_SELECTOR`;
 *   empty = every node), e.g. a VPC-CNI node group living beside podroute's nodes;
 * - `not-an-ec2-instance`: its `spec.providerID` names no EC2 instance. EKS Fargate registers its
 *   nodes as `aws:///<zone>/<task id>/fargate-ip-<ip>.<region>.compute.internal` (seen in
 *   kubernetes/autoscaler#2737 and cloud-provider-aws#223, which describes Fargate nodes by ENI);
 *   other clouds use other schemes (`gce://`, `azure://`). Routing such a node is impossible and
 *   marking it NetworkUnavailable taints it (node.kubernetes.io/network-unavailable), which stops
 *   Fargate pods from scheduling;
 * - `no-provider-id`: `spec.providerID` is not set yet. This is "not ready to manage", not foreign:
 *   the kubelet sets it at registration when it is given one (`--provider-id`, as EKS node bootstraps
 *   do), and with an external cloud provider the cloud-controller-manager's node controller sets it
 *   later, while the node still carries the `node.cloudprovider.kubernetes.io/uninitialized` taint
 *   (kubernetes.io/docs/tasks/administer-cluster/running-cloud-controller/), so no pod waits on
 *   podroute meanwhile. podroute cannot tell yet whether the node is an EC2 instance, so it waits:
 *   the next reconcile after the providerID appears allocates and routes the node.
 */
import { matchesLabels } from './label-selector.ts';
import type { LabelSelector } from './label-selector.ts';
import { instanceIdOf } from './node.ts';
import type { Node } from './node.ts';

export type UnmanagedReason = 'outside-node-selector' | 'not-an-ec2-instance' | 'no-provider-id';

/** Why podroute must leave this node alone, or null when the node is podroute's. */
export function unmanagedReason(node: Node, selector?: LabelSelector | null): UnmanagedReason | null {
  if (selector && !matchesLabels(selector, node.metadata.labels)) return 'outside-node-selector';
  const providerId = node.spec?.providerID;
  if (providerId === undefined || providerId === '') return 'no-provider-id';
  if (instanceIdOf(node) === null) return 'not-an-ec2-instance';
  return null;
}
