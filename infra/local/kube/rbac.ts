/**
 * RBAC in the emulator: what an identity may do, decided from infra/kubernetes/rbac.yaml's
 * ClusterRoles and ClusterRoleBindings, so podroute runs here under the rules it is deployed with.
 *
 * - Request attributes from the path, as k8s.io/apiserver pkg/endpoints/request/requestinfo.go
 *   derives them: `/api/v1` is the core group "", `/apis/<group>/<version>` a named group;
 *   `namespaces/<ns>/` scopes the request; the segment after the name is the subresource; GET is
 *   get on a name, list (or watch with `?watch=true`) on a collection; POST create, PUT update,
 *   PATCH patch, DELETE delete (deletecollection on a collection).
 * - Rule matching as k8s pkg/apis/rbac/v1 evaluation_helpers.go (`VerbMatches`, `APIGroupMatches`,
 *   `ResourceMatches` with `resource/subresource` and `*`, `ResourceNameMatches`) and subjects as
 *   pkg/registry/rbac/validation `appliesToUser` (User by name, Group by membership).
 * - `system:masters` may do anything (k8s.io/apiserver authorizerfactory, the privileged group).
 * - Every authenticated user may create SelfSubjectAccessReviews and SelfSubjectRulesReviews
 *   (bootstrap ClusterRole `system:basic-user`, plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
 * Kubelets are the Node authorizer's (identity.ts `authorizeNode`), not this file's.
 * A refusal is 403 Forbidden worded as k8s.io/apiserver endpoints/handlers/responsewriters
 * `forbiddenMessage`. Test infrastructure.
 */
import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { ApiError } from './api-error.ts';
import type { UserInfo } from './identity.ts';

export type RequestAttributes = { verb: string; group: string; resource: string; subresource: string; namespace: string; name: string };

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames: string[] };
type Subject = { kind: string; name: string };

export type Rbac = {
  allows(user: UserInfo, attributes: RequestAttributes): boolean;
  /** Throws the API server's 403 when `user` may not make the request. */
  authorize(user: UserInfo, attributes: RequestAttributes): void;
  /** Deletes a ClusterRoleBinding by name (as `kubectl delete clusterrolebinding`); false when there is none. */
  removeBinding(name: string): boolean;
};

const RBAC_YAML = new URL('../../kubernetes/rbac.yaml', import.meta.url);

/** podroute's identity: a user in the group rbac.yaml's ClusterRoleBinding names (EKS maps the Lambda roles to it). */
export const PODROUTE_USER: UserInfo = { username: 'podroute', uid: 'uid-podroute', groups: ['podroute', 'system:authenticated'] };

const BASIC_USER_RULE: Rule = {
  apiGroups: ['authorization.k8s.io'],
  resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
  verbs: ['create'],
  resourceNames: [],
};

/** The resource attributes of a request, or null for a non-resource path (discovery, health). */
export function requestAttributes(method: string, path: string, query: URLSearchParams): RequestAttributes | null {
  let parts = path.split('/').filter(Boolean).map((p) => decodeURIComponent(p));
  let group: string;
  if (parts[0] === 'api' && parts.length >= 3) [group, parts] = ['', parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length >= 4) [group, parts] = [parts[1] ?? '', parts.slice(3)];
  else return null;
  let namespace = '';
  // `/namespaces/<name>` alone is the namespace itself; with more segments it scopes the request.
  if (parts[0] === 'namespaces' && parts.length >= 3) [namespace, parts] = [parts[1] ?? '', parts.slice(2)];
  const [resource = '', name = '', subresource = ''] = parts;
  const collectionVerbs: Record<string, string> = { GET: query.get('watch') === 'true' ? 'watch' : 'list', POST: 'create', DELETE: 'deletecollection' };
  const nameVerbs: Record<string, string> = { GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete', POST: 'create' };
  const verb = (name === '' ? collectionVerbs[method] : nameVerbs[method]) ?? method.toLowerCase();
  return { verb, group, resource, subresource, namespace, name };
}

const matchesAny = (values: string[], value: string): boolean => values.includes('*') || values.includes(value);

function ruleAllows(rule: Rule, a: RequestAttributes): boolean {
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const resourceMatches =
    rule.resources.includes('*') || rule.resources.includes(resource) || (a.subresource !== '' && rule.resources.includes(`*/${a.subresource}`));
  const nameMatches = rule.resourceNames.length === 0 || rule.resourceNames.includes(a.name);
  return matchesAny(rule.verbs, a.verb) && matchesAny(rule.apiGroups, a.group) && resourceMatches && nameMatches;
}

const appliesTo = (subject: Subject, user: UserInfo): boolean =>
  (subject.kind === 'User' && subject.name === user.username) || (subject.kind === 'Group' && user.groups.includes(subject.name));

type Doc = Record<string, unknown>;
const isDoc = (value: unknown): value is Doc => typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const nameOf = (doc: Doc): string => (isDoc(doc.metadata) && typeof doc.metadata.name === 'string' ? doc.metadata.name : '');

/** ClusterRoles' rules, keyed by name, and ClusterRoleBindings, from a manifest; any other kind is refused. */
type Binding = { name: string; role: string; subjects: Subject[] };

function parseManifest(text: string): { roles: Map<string, Rule[]>; bindings: Binding[] } {
  const roles = new Map<string, Rule[]>();
  const bindings: Binding[] = [];
  for (const doc of loadAll(text)) {
    if (doc === null || doc === undefined) continue;
    if (!isDoc(doc)) throw new Error('rbac manifest: a document is not a mapping');
    if (doc.kind === 'ClusterRole') {
      const rules = (Array.isArray(doc.rules) ? doc.rules : []).filter(isDoc).map((r) => ({
        apiGroups: strings(r.apiGroups),
        resources: strings(r.resources),
        verbs: strings(r.verbs),
        resourceNames: strings(r.resourceNames),
      }));
      roles.set(nameOf(doc), rules);
    } else if (doc.kind === 'ClusterRoleBinding') {
      const ref = isDoc(doc.roleRef) ? doc.roleRef : {};
      if (ref.kind !== 'ClusterRole' || typeof ref.name !== 'string') throw new Error(`rbac manifest: binding ${nameOf(doc)} needs a ClusterRole roleRef`);
      const subjects = (Array.isArray(doc.subjects) ? doc.subjects : []).filter(isDoc).map((s) => ({ kind: String(s.kind), name: String(s.name) }));
      bindings.push({ name: nameOf(doc), role: ref.name, subjects });
    } else {
      throw new Error(`rbac manifest: the emulator does not evaluate ${String(doc.kind)}`);
    }
  }
  return { roles, bindings };
}

function forbidden(user: UserInfo, a: RequestAttributes): ApiError {
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const object = a.name === '' ? resource : `${resource} "${a.name}"`;
  const scope = a.namespace === '' ? 'at the cluster scope' : `in the namespace "${a.namespace}"`;
  const message = `${object} is forbidden: User "${user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.group}" ${scope}`;
  return new ApiError(403, 'Forbidden', message, { ...(a.name === '' ? {} : { name: a.name }), kind: a.resource });
}

/** The authorizer of a ClusterRole/ClusterRoleBinding manifest (infra/kubernetes/rbac.yaml unless given). */
export function loadRbac(text: string = readFileSync(RBAC_YAML, 'utf8')): Rbac {
  const { roles, bindings } = parseManifest(text);
  const allows = (user: UserInfo, a: RequestAttributes): boolean => {
    if (user.groups.includes('system:masters')) return true;
    if (user.groups.includes('system:authenticated') && ruleAllows(BASIC_USER_RULE, a)) return true;
    return bindings.some((b) => b.subjects.some((s) => appliesTo(s, user)) && (roles.get(b.role) ?? []).some((rule) => ruleAllows(rule, a)));
  };
  return {
    allows,
    authorize(user, a) {
      if (!allows(user, a)) throw forbidden(user, a);
    },
    removeBinding(name) {
      const at = bindings.findIndex((b) => b.name === name);
      if (at < 0) return false;
      bindings.splice(at, 1);
      return true;
    },
  };
}
