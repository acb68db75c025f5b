/**
 * Read-only questions `podroute doctor` asks the Kubernetes API: may podroute's identity do X
 * (SubjectAccessReview, authorization.k8s.io/v1, with `spec.user` and `spec.groups`: the answer's
 * `status.allowed`; the caller needs `create` on subjectaccessreviews), and which
 * mutating admission webhooks are registered (MutatingWebhookConfiguration,
 * admissionregistration.k8s.io/v1), and which field managers set each node's `spec.podCIDR` (the
 * `managedFields` entries whose FieldsV1 holds `f:spec` / `f:podCIDR`; Kubernetes docs,
 * "Server-Side Apply: Field management"; nodes listed in pages of 500). Errors are mapped by HTTP
 * status, like the node adapter's.
 */
import { AdmissionregistrationV1Api, ApiException, AuthorizationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { PodrouteError } from '../errors.ts';
import { KubeHttpStatusError, mapError as mapCallError } from './kube-http.ts';
import type { AccessQuestion, AccessAnswer, AccessSubject, WebhookRegistration, ClusterAccess } from '../usecases/ports.ts';

/** The generated client's ApiException carries the answer's status and body: map it as the node adapter maps an answer. */
function mapError(error: unknown, target: { verb: string; resource: string }): PodrouteError {
  if (error instanceof ApiException) {
    const body: unknown = error.body;
    const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
    return mapCallError(new KubeHttpStatusError(error.code, text), target);
  }
  return mapCallError(error, target);
}

export class KubeAccess implements ClusterAccess {
  private readonly authz: AuthorizationV1Api;
  private readonly admission: AdmissionregistrationV1Api;
  private readonly core: CoreV1Api;

  constructor(config: KubeConfig) {
    this.authz = config.makeApiClient(AuthorizationV1Api);
    this.admission = config.makeApiClient(AdmissionregistrationV1Api);
    this.core = config.makeApiClient(CoreV1Api);
  }

  /** Each node with a pod CIDR: when it was created and the managers that set `spec.podCIDR`. */
  async podCidrWriters(): Promise<PodCidrWriters[]> {
    const out: PodCidrWriters[] = [];
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.core.listNode({ limit: 500, _continue: token });
      } catch (error) {
        throw mapError(error, { verb: 'list', resource: 'nodes' });
      }
      for (const node of page.items) {
        if (!node.spec?.podCIDR) continue;
        const entries = node.metadata?.managedFields ?? [];
        const managers = entries.filter((entry) => setsPodCidr(entry.fieldsV1)).map((entry) => entry.manager ?? 'unknown');
        const conditionManagers = entries.filter((entry) => entry.subresource === 'status' && setsNetworkUnavailable(entry.fieldsV1)).map((entry) => entry.manager ?? 'unknown');
        out.push({ node: node.metadata?.name ?? '', created: node.metadata?.creationTimestamp?.toISOString() ?? '', managers: [...new Set(managers)], conditionManagers: [...new Set(conditionManagers)] });
      }
      token = page.metadata?._continue || undefined;
    } while (token);
    return out;
  }

  async allows(subject: AccessSubject, question: AccessQuestion): Promise<AccessAnswer> {
    try {
      const review = await this.authz.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            ...(subject.user ? { user: subject.user } : {}),
            ...(subject.groups.length > 0 ? { groups: [...subject.groups] } : {}),
            resourceAttributes: {
              verb: question.verb,
              group: question.group,
              resource: question.resource,
              ...(question.subresource ? { subresource: question.subresource } : {}),
              ...(question.namespace ? { namespace: question.namespace } : {}),
            },
          },
        },
      });
      return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? review.status?.evaluationError ?? '' };
    } catch (error) {
      throw mapError(error, { verb: 'create', resource: 'subjectaccessreviews' });
    }
  }

  async mutatingWebhooks(): Promise<WebhookRegistration[]> {
    let list;
    try {
      list = await this.admission.listMutatingWebhookConfiguration();
    } catch (error) {
      throw mapError(error, { verb: 'list', resource: 'mutatingwebhookconfigurations' });
    }
    const out: WebhookRegistration[] = [];
    for (const configuration of list.items) {
      for (const webhook of configuration.webhooks ?? []) {
        const url = webhook.clientConfig.url;
        out.push({
          configuration: configuration.metadata?.name ?? '',
          webhook: webhook.name,
          // Only the host: the URL's path carries the shared secret.
          host: url ? safeHost(url) : webhook.clientConfig.service ? `service ${webhook.clientConfig.service.namespace}/${webhook.clientConfig.service.name}` : '',
          rules: (webhook.rules ?? []).map((rule) => ({
            apiGroups: rule.apiGroups ?? [],
            apiVersions: rule.apiVersions ?? [],
            operations: rule.operations ?? [],
            resources: rule.resources ?? [],
          })),
        });
      }
    }
    return out;
  }
}

export interface PodCidrWriters {
  node: string;
  created: string;
  /** Who set `spec.podCIDR`. */
  managers: string[];
  /** Who wrote the node's NetworkUnavailable condition (`nodes/status`): a route controller's mark. */
  conditionManagers: string[];
}

function setsPodCidr(fields: unknown): boolean {
  const spec = typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>)['f:spec'] : undefined;
  return typeof spec === 'object' && spec !== null && 'f:podCIDR' in spec;
}

/** A managedFields entry owning the NetworkUnavailable condition (conditions merge by `type`, so the key is `k:{"type":...}`). */
function setsNetworkUnavailable(fields: unknown): boolean {
  const status = typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>)['f:status'] : undefined;
  const conditions = typeof status === 'object' && status !== null ? (status as Record<string, unknown>)['f:conditions'] : undefined;
  return typeof conditions === 'object' && conditions !== null && 'k:{"type":"NetworkUnavailable"}' in conditions;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unparseable url)';
  }
}
