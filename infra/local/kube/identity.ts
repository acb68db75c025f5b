/**
 * Who is calling, and what a kubelet may do to Nodes.
 *
 * - Authentication: bearer tokens, each bound to a user (the admin token of the emulator, and one
 *   token per kubelet, `system:node:<name>` in group `system:nodes`: Kubernetes docs, "Using Node
 *   Authorization").
 * - Node authorizer + RBAC: a kubelet may read nodes and create or write its own; it may not
 *   delete a Node (403 in RBAC's wording: k8s.io/apiserver authorization `forbiddenMessage`).
 * - NodeRestriction (k8s plugin/pkg/admission/noderestriction `admitNode`): a kubelet modifies only
 *   its own Node; at CREATE it may not set a configSource nor labels in the kubernetes.io / k8s.io
 *   namespaces other than the kubelet's own (`kubeletapis.IsKubeletLabel`) or any
 *   node-restriction.kubernetes.io label; at UPDATE it may not change taints nor such labels. It
 *   does not look at spec.podCIDR(s) nor spec.providerID, so a kubelet may set those.
 */
import { ApiError } from './api-error.ts';
import { isObject, type Json, type JsonObject } from './patch.ts';

export type UserInfo = { username: string; uid: string; groups: string[] };

export const ADMIN: UserInfo = { username: 'kubernetes-admin', uid: 'uid-admin', groups: ['system:masters', 'system:authenticated'] };

export const kubeletUser = (nodeName: string): UserInfo => ({
  username: `system:node:${nodeName}`,
  uid: `uid-node-${nodeName}`,
  groups: ['system:nodes', 'system:authenticated'],
});

/** The node a kubelet identity speaks for, or null for any other user. */
export function nodeOf(user: UserInfo): string | null {
  return user.groups.includes('system:nodes') && user.username.startsWith('system:node:') ? user.username.slice('system:node:'.length) : null;
}

/** Labels a kubelet may set on its Node (k8s.io/kubelet pkg/apis `kubeletLabels`, `kubeletLabelNamespaces`). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'beta.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string): string => (key.includes('/') ? (key.split('/')[0] ?? '') : '');
const inDomain = (namespace: string, domain: string): boolean => namespace === domain || namespace.endsWith(`.${domain}`);

function isForbiddenLabel(key: string): boolean {
  const namespace = labelNamespace(key);
  if (inDomain(namespace, 'node-restriction.kubernetes.io')) return true;
  const kubernetesLabel = inDomain(namespace, 'kubernetes.io') || inDomain(namespace, 'k8s.io');
  const kubeletLabel = KUBELET_LABELS.has(key) || KUBELET_NAMESPACES.some((ns) => inDomain(namespace, ns));
  return kubernetesLabel && !kubeletLabel;
}

function labelsOf(node: JsonObject | null): Record<string, Json> {
  const meta = node && isObject(node.metadata) ? node.metadata : {};
  return isObject(meta.labels) ? meta.labels : {};
}

const forbiddenNode = (name: string, message: string) => new ApiError(403, 'Forbidden', `nodes "${name}" is forbidden: ${message}`, { name, kind: 'nodes' });

/** The Node authorizer's and RBAC's answer to `verb` on node `name` (subresource optional). */
export function authorizeNode(user: UserInfo, verb: string, name: string): void {
  const own = nodeOf(user);
  if (own === null || verb !== 'delete') return;
  throw forbiddenNode(name, `User "${user.username}" cannot delete resource "nodes" in API group "" at the cluster scope`);
}

/** NodeRestriction for a Node CREATE or UPDATE (`old` null at CREATE) by `user`. */
export function restrictNode(user: UserInfo, name: string, node: JsonObject, old: JsonObject | null): void {
  const own = nodeOf(user);
  if (own === null) return;
  if (name !== own) throw forbiddenNode(name, `node "${own}" is not allowed to modify node "${name}"`);
  const spec = isObject(node.spec) ? node.spec : {};
  if (old === null) {
    if (spec.configSource !== undefined && spec.configSource !== null) throw forbiddenNode(name, `node "${own}" is not allowed to create pods with a non-nil configSource`);
    const bad = Object.keys(labelsOf(node)).filter(isForbiddenLabel).sort();
    if (bad.length > 0) throw forbiddenNode(name, `node "${own}" is not allowed to set the following labels: ${bad.join(', ')}`);
    return;
  }
  const oldSpec = isObject(old.spec) ? old.spec : {};
  if (JSON.stringify(spec.taints ?? null) !== JSON.stringify(oldSpec.taints ?? null)) throw forbiddenNode(name, `node "${own}" is not allowed to modify taints`);
  const labels = labelsOf(node);
  const oldLabels = labelsOf(old);
  const changed = [...new Set([...Object.keys(labels), ...Object.keys(oldLabels)])].filter((k) => labels[k] !== oldLabels[k]);
  const bad = changed.filter(isForbiddenLabel).sort();
  if (bad.length > 0) throw forbiddenNode(name, `is not allowed to modify labels: ${bad.join(', ')}`);
}
