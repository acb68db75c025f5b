/**
 * An AdmissionReview (admission.k8s.io/v1) for a Node CREATE, as the API server sends it to a
 * mutating webhook when a kubelet registers its node, parsed by podroute's own schema.
 */
import { admissionReviewSchema } from '../../lib/webhook/admission.ts';

export function nodeCreateReview(node: Record<string, unknown>, uid = '22222222-0000-4000-8000-000000000001') {
  const name = (node.metadata as { name: string }).name;
  const gvk = { group: '', version: 'v1', kind: 'Node' };
  const gvr = { group: '', version: 'v1', resource: 'nodes' };
  return admissionReviewSchema.parse({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name,
      operation: 'CREATE',
      userInfo: { username: `system:node:${name}`, groups: ['system:nodes'] },
      object: node,
      oldObject: null,
      dryRun: false,
    },
  });
}
