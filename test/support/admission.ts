/**
 * An AdmissionReview (admission.k8s.io/v1) for a Node CREATE, as the API server sends it to a
 * mutating webhook when a kubelet registers its node (the Kubernetes emulator's builder), parsed by
 * podroute's own schema.
 */
import { admissionReview } from '../../infra/local/kube/admission.ts';
import { kubeletUser } from '../../infra/local/kube/identity.ts';
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';

export function nodeCreateReview(node: Record<string, unknown>, uid = '22222222-0000-4000-8000-000000000001') {
  const name = (node.metadata as { name: string }).name;
  return admissionReviewSchema().parse(admissionReview(uid, 'CREATE', name, node, null, kubeletUser(name)));
}

/** The pod CIDR an admission response's JSON patch sets, or undefined when it sets none. */
export function patchedPodCidr(response: unknown): unknown {
  const patch = (response as { response?: { patch?: string } }).response?.patch;
  const ops = patch === undefined ? [] : (JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Array<{ path: string; value?: unknown }>);
  return ops.find((op) => op.path === '/spec/podCIDR')?.value;
}
