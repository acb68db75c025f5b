/**
 * Emulator routes for what `podroute doctor` reads besides nodes: SelfSubjectAccessReview (can the
 * caller do X?), SubjectAccessReview (can this user and groups do X?) and the cluster's
 * MutatingWebhookConfigurations. Test infrastructure.
 *
 * - SelfSubjectAccessReview, `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`
 *   (Kubernetes API reference, "SelfSubjectAccessReview v1 authorization.k8s.io"; types in
 *   k8s.io/api/authorization/v1): the spec holds exactly one of `resourceAttributes` and
 *   `nonResourceAttributes` (else 422 Invalid); the answer is the object with `status.allowed`
 *   (and `denied`, `reason` when refused), HTTP 201. The object is not stored. The caller's RBAC
 *   (rbac.ts, infra/kubernetes/rbac.yaml) answers: podroute's identity is allowed what its rules
 *   grant, the admin everything; on top, a test may refuse with `state.access.deny(...)`.
 * - SubjectAccessReview, `POST /apis/authorization.k8s.io/v1/subjectaccessreviews` (Kubernetes
 *   API reference, "SubjectAccessReview v1 authorization.k8s.io"): the same spec plus `user`,
 *   `groups` (and `uid`, `extra`), of which at least one of user and groups is required (upstream
 *   pkg/apis/authorization/validation: 422 "at least one of user or group must be specified").
 *   The subject is judged as given: no `system:authenticated` is added. The caller needs `create`
 *   on subjectaccessreviews (the admin has it; podroute's rules do not grant it).
 * - MutatingWebhookConfiguration list, `GET /apis/admissionregistration.k8s.io/v1/
 *   mutatingwebhookconfigurations` (Kubernetes API reference, "MutatingWebhookConfiguration v1
 *   admissionregistration.k8s.io"): a `MutatingWebhookConfigurationList` of what tests registered
 *   with `state.webhookConfigurations.put(...)`. Registering does not change which URL the emulator
 *   calls (that is still `onNodeCreate` / `onNodeDelete`).
 */
import type { UserInfo } from './identity.ts';
import type { Json, JsonObject } from './patch.ts';
import { isObject } from './patch.ts';
import type { Rbac } from './rbac.ts';

export type AccessAttributes = { verb: string; resource: string; group?: string; subresource?: string; namespace?: string };

export type AccessState = {
  /** Deletes a ClusterRoleBinding of infra/kubernetes/rbac.yaml by name: its subjects lose its rules, for requests and reviews. */
  removeBinding(name: string): boolean;
  /** Refuses matching reviews (an absent field matches any value). */
  deny(attributes: AccessAttributes): void;
  allowAll(): void;
  /** Reviews answered so far, as `verb group/resource/subresource`. */
  reviews(): string[];
};

export type WebhookConfigurationState = {
  /** Stores (or replaces, by name) a MutatingWebhookConfiguration object. */
  put(configuration: object): void;
  remove(name: string): boolean;
};

type Reply = { code: number; body: unknown };

export type AuthzRoutes = {
  routes: Array<{ method: string; template: string; handle: (body: Buffer, user: UserInfo) => Promise<Reply> }>;
  access: AccessState;
  webhookConfigurations: WebhookConfigurationState;
};

const status = (code: number, reason: string, message: string): Reply => ({
  code,
  body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code },
});

const text = (value: Json | undefined): string => (typeof value === 'string' ? value : '');

export function createAuthzRoutes(nextRv: () => string, rbac: Rbac): AuthzRoutes {
  const denied: AccessAttributes[] = [];
  const seen: string[] = [];
  const configurations = new Map<string, JsonObject>();

  const matches = (rule: AccessAttributes, asked: Required<AccessAttributes>): boolean =>
    rule.verb === asked.verb &&
    rule.resource === asked.resource &&
    (rule.group === undefined || rule.group === asked.group) &&
    (rule.subresource === undefined || rule.subresource === asked.subresource) &&
    (rule.namespace === undefined || rule.namespace === asked.namespace);

  const parse = (raw: Buffer): JsonObject | Reply => {
    let input: Json;
    try {
      input = JSON.parse(raw.toString('utf8')) as Json;
    } catch (error) {
      return status(400, 'BadRequest', `error decoding request body: ${(error as Error).message}`);
    }
    return isObject(input) ? input : status(400, 'BadRequest', 'the body of the request was in an unknown format');
  };
  const isReply = (value: JsonObject | Reply): value is Reply => typeof value.code === 'number' && 'body' in value;

  /** Upstream validation (pkg/apis/authorization/validation): exactly one of the two attribute kinds. */
  const attributesError = (kind: string, spec: JsonObject): Reply | null =>
    isObject(spec.resourceAttributes) === isObject(spec.nonResourceAttributes)
      ? status(422, 'Invalid', `${kind}.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`)
      : null;

  async function selfReview(raw: Buffer, user: UserInfo): Promise<Reply> {
    const input = parse(raw);
    if (isReply(input)) return input;
    const spec = isObject(input.spec) ? input.spec : {};
    return attributesError('SelfSubjectAccessReview', spec) ?? { code: 201, body: answer('SelfSubjectAccessReview', spec, user) };
  }

  async function subjectReview(raw: Buffer): Promise<Reply> {
    const input = parse(raw);
    if (isReply(input)) return input;
    const spec = isObject(input.spec) ? input.spec : {};
    const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
    if (text(spec.user) === '' && groups.length === 0) {
      return status(422, 'Invalid', 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified');
    }
    const subject: UserInfo = { username: text(spec.user), uid: text(spec.uid), groups };
    return attributesError('SubjectAccessReview', spec) ?? { code: 201, body: answer('SubjectAccessReview', spec, subject) };
  }

  function answer(kind: string, spec: JsonObject, user: UserInfo): JsonObject {
    const resource = isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
    let allowed = true;
    let byRbac = true;
    if (resource) {
      const asked = {
        verb: text(resource.verb),
        resource: text(resource.resource),
        group: text(resource.group),
        subresource: text(resource.subresource),
        namespace: text(resource.namespace),
      };
      seen.push(`${asked.verb} ${asked.group}/${asked.resource}${asked.subresource ? `/${asked.subresource}` : ''}`);
      byRbac = rbac.allows(user, { ...asked, name: text(resource.name) });
      allowed = byRbac && !denied.some((rule) => matches(rule, asked));
    }
    return {
      kind,
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec,
      // RBAC only grants: a request it does not allow has no opinion, hence `allowed: false` alone.
      status: allowed ? { allowed: true, reason: 'allowed by the emulator' } : byRbac ? { allowed: false, denied: true, reason: 'denied by the emulator' } : { allowed: false },
    };
  }

  async function listConfigurations(): Promise<Reply> {
    const items = [...configurations.values()].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : 1)).map((c) => structuredClone(c));
    return {
      code: 200,
      body: { kind: 'MutatingWebhookConfigurationList', apiVersion: 'admissionregistration.k8s.io/v1', metadata: { resourceVersion: nextRv() }, items },
    };
  }

  return {
    routes: [
      { method: 'POST', template: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', handle: selfReview },
      { method: 'POST', template: '/apis/authorization.k8s.io/v1/subjectaccessreviews', handle: subjectReview },
      { method: 'GET', template: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', handle: listConfigurations },
    ],
    access: {
      removeBinding: (name) => rbac.removeBinding(name),
      deny: (attributes) => void denied.push({ ...attributes }),
      allowAll: () => void denied.splice(0),
      reviews: () => [...seen],
    },
    webhookConfigurations: {
      put(configuration) {
        const value = JSON.parse(JSON.stringify(configuration)) as Json;
        if (!isObject(value) || nameOf(value) === '') throw new Error('a MutatingWebhookConfiguration needs metadata.name');
        value.apiVersion = 'admissionregistration.k8s.io/v1';
        value.kind = 'MutatingWebhookConfiguration';
        const meta = isObject(value.metadata) ? value.metadata : {};
        meta.resourceVersion = nextRv();
        value.metadata = meta;
        configurations.set(nameOf(value), value);
      },
      remove: (name) => configurations.delete(name),
    },
  };
}

function nameOf(object: JsonObject): string {
  return isObject(object.metadata) && typeof object.metadata.name === 'string' ? object.metadata.name : '';
}
