/**
 * infra/kubernetes: the ClusterRole against the calls the Kubernetes adapter really makes, the
 * kustomization's inputs (webhook URL and CA bundle) and the kubeAuth=secret manifests.
 *
 * RBAC: every method of KubeNodes runs against the kube emulator with the real client; the emulator
 * counts each `METHOD /path/{template}`, and those requests are turned into RBAC attributes (verb,
 * API group, resource[/subresource]) the way the API server does (k8s.io/apiserver
 * pkg/endpoints/request/requestinfo.go: GET on a collection is list, GET on a name is get, POST
 * create, PATCH patch, PUT update, DELETE delete; /api/v1 is the core group "", /apis/<group>/<v>
 * a named group; a path segment after the name is a subresource). The rules must grant exactly those.
 */
import { routesText } from '../support/plane.ts';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { load, loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { KubeNodes } from '../../lib/kube/kube-nodes.ts';
import { type Obj, isObj, obj } from '../support/mapping.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const text = (path: string): string => readFileSync(`${root}${path}`, 'utf8');

const list = (value: unknown, what: string): unknown[] => {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
};
const documents = (path: string): Obj[] => loadAll(text(path)).filter((doc) => doc !== null).map((doc, i) => obj(doc, `${path}#${i}`));

/** RBAC attribute of one emulator stats key, e.g. `PATCH /api/v1/nodes/{name}/status` -> `patch /nodes/status`. */
function rbacAttribute(key: string): string {
  const match = /^([A-Z]+) (\/.*)$/.exec(key);
  if (!match?.[1] || !match[2]) throw new Error(`not a request key: ${key}`);
  const [method, path] = [match[1], match[2]];
  let parts = path.split('/').filter(Boolean);
  let group: string;
  if (parts[0] === 'api') { group = ''; parts = parts.slice(2); } else if (parts[0] === 'apis') { group = String(parts[1]); parts = parts.slice(3); } else throw new Error(`not an API path: ${path}`);
  if (parts[0] === 'namespaces' && parts.length > 2) parts = parts.slice(2);
  const [resource, name, subresource] = parts;
  if (!resource) throw new Error(`no resource in ${path}`);
  const verbs: Record<string, string> = { POST: 'create', PATCH: 'patch', PUT: 'update', DELETE: name ? 'delete' : 'deletecollection' };
  const verb = method === 'GET' ? (name ? 'get' : 'list') : verbs[method];
  if (!verb) throw new Error(`no RBAC verb for ${method}`);
  return `${verb} ${group}/${resource}${subresource ? `/${subresource}` : ''}`;
}

/** Every (verb, group/resource) a ClusterRole's rules grant; wildcards are refused outright. */
function granted(rules: unknown[]): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    const r = obj(rule, 'rule');
    expect(r).not.toHaveProperty('nonResourceURLs');
    expect(r).not.toHaveProperty('resourceNames');
    for (const field of ['apiGroups', 'resources', 'verbs']) expect(list(r[field], field)).not.toContain('*');
    for (const group of list(r.apiGroups, 'apiGroups')) {
      for (const resource of list(r.resources, 'resources')) {
        for (const verb of list(r.verbs, 'verbs')) out.push(`${String(verb)} ${String(group)}/${String(resource)}`);
      }
    }
  }
  return out.sort();
}

const node = (name: string, podCidr?: string) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: { providerID: 'aws:///us-east-1a/i-0123456789abcdef0', ...(podCidr ? { podCIDR: podCidr, podCIDRs: [podCidr] } : {}) },
  status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
});

/** KubeNodes' methods that only serve its others (they make no call of their own). */
const INTERNAL = ['constructor', 'listNodesOnce', 'validNode', 'remember', 'patchWithRetry', 'call', 'callStreamed'];

describe('infra/kubernetes/rbac.yaml: exactly the calls of the Kubernetes adapter', () => {
  let emulator: KubeEmulator;
  const requests = new Set<string>();
  const exercised = new Set<string>();

  beforeAll(async () => {
    emulator = await startKubeEmulator({ nodes: [node('a', '10.244.1.0/24'), node('b'), node('c')] });
    const kc = new KubeConfig();
    // podroute's own identity: the emulator authorizes it with rbac.yaml, so a call the rules miss is a 403 here.
    kc.loadFromOptions(emulator.kubeConfig(emulator.podrouteToken));
    const kube = new KubeNodes(kc, { pageSize: 2, conflictBackoffMs: 0 });
    const run = async (method: string, call: () => Promise<unknown>) => { exercised.add(method); await call(); };
    await run('listNodes', () => kube.listNodes());
    const b = await kube.getNode('b');
    exercised.add('getNode');
    await run('updatePodCidr', () => kube.updatePodCidr(b, '10.244.2.0/24'));
    await run('setNetworkUnavailable', () => kube.setNetworkUnavailable('a', false, routesText(false)));
    // A repeat folds into the first Event (read it, then patch its count).
    await run('warn', async () => {
      expect(await kube.warn('c', 'CloudCIDRAllocatorMismatch', 'test')).toBe(true);
      expect(await kube.warn('c', 'CloudCIDRAllocatorMismatch', 'again')).toBe(true);
      expect(emulator.state.events().map((event) => [event.message, event.count])).toEqual([['again', 2]]);
    });
    // The 422 path of updatePodCidr re-reads the node: the same verbs, asserted below all the same.
    emulator.state.setFailure({ kind: 'error', code: 422, times: 1, match: 'PATCH /api/v1/nodes/{name}' });
    await kube.updatePodCidr(await kube.getNode('c'), '10.244.3.0/24').catch(() => undefined);
    for (const key of Object.keys(emulator.stats.all())) requests.add(rbacAttribute(key));
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('exercises every method of KubeNodes that reaches the API', () => {
    const methods = Object.getOwnPropertyNames(KubeNodes.prototype).filter((name) => !INTERNAL.includes(name));
    expect(methods.sort()).toEqual([...exercised].sort());
  });

  it('grants the podroute ClusterRole exactly the verbs and resources those calls need', () => {
    const [role] = documents('infra/kubernetes/rbac.yaml');
    expect(role?.kind).toBe('ClusterRole');
    expect(granted(list(role?.rules, 'rules'))).toEqual([...requests].sort());
    expect([...requests].sort()).toEqual(['create /events', 'get /events', 'get /nodes', 'list /nodes', 'patch /events', 'patch /nodes', 'patch /nodes/status']);
  });

  it('binds the role to the group the Lambda roles are mapped to', () => {
    const [, binding] = documents('infra/kubernetes/rbac.yaml');
    expect(binding?.kind).toBe('ClusterRoleBinding');
    expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podroute' });
    expect(binding?.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podroute' }]);
  });

  it('has no other Kubernetes API client in lib/ whose calls this test would miss', () => {
    const apis = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(`${root}${dir}`)) {
        const path = `${dir}/${entry}`;
        if (path === 'lib/kube/kube-access.ts') continue; // the doctor's, checked below
        if (statSync(`${root}${path}`).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) for (const match of text(path).matchAll(/\b([A-Z][A-Za-z]*V\d+(?:alpha\d+|beta\d+)?Api)\b/g)) apis.add(String(match[1]));
      }
    };
    walk('lib');
    // The node adapter makes plain HTTPS calls (no generated client); their requests are recorded above.
    expect([...apis]).toEqual([]);
  });

  it("keeps the doctor's clients (the operator's own credentials) out of the functions", () => {
    // lib/kube/kube-access.ts asks SubjectAccessReviews and lists webhook configurations for
    // `podroute doctor`, which runs with the operator's kubeconfig, not podroute's ClusterRole.
    const uses = (path: string): boolean => text(path).includes('kube-access');
    const functions = readdirSync(`${root}functions`).filter((entry) => entry.endsWith('.ts')).map((entry) => `functions/${entry}`);
    expect(functions.filter(uses)).toEqual([]);
    expect(uses('functions/wiring.ts')).toBe(false);
  });
});

// ------------------------------------------------------------------------------------------------

type Kustomization = {
  resources: string[];
  generator: { name: string; envs: string[]; options: Obj };
  replacements: { source: Obj; targets: { select: Obj; fieldPaths: string[]; options?: Obj }[] }[];
};

function readKustomization(dir: string): Kustomization {
  const k = obj(load(text(`${dir}/kustomization.yaml`)), 'kustomization');
  expect(k.apiVersion).toBe('kustomize.config.k8s.io/v1beta1');
  expect(k.kind).toBe('Kustomization');
  const generators = list(k.configMapGenerator, 'configMapGenerator').map((g) => obj(g, 'generator'));
  expect(generators).toHaveLength(1);
  const g = generators[0] ?? {};
  return {
    resources: list(k.resources, 'resources').map(String),
    generator: { name: String(g.name), envs: list(g.envs, 'envs').map(String), options: obj(g.options, 'options') },
    replacements: list(k.replacements, 'replacements').map((r) => {
      const rep = obj(r, 'replacement');
      return {
        source: obj(rep.source, 'source'),
        targets: list(rep.targets, 'targets').map((t) => {
          const target = obj(t, 'target');
          return { select: obj(target.select, 'select'), fieldPaths: list(target.fieldPaths, 'fieldPaths').map(String), ...(isObj(target.options) ? { options: target.options } : {}) };
        }),
      };
    }),
  };
}

/** kustomize's env-file format: KEY=VALUE lines, split at the first `=`; # comments and blanks skipped. */
function envFile(content: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of content.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`not KEY=VALUE: ${line}`);
    out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

/**
 * Walks a kustomize field path (`a.b.[name=x.y].c`), creating the last field when allowed. Dots
 * inside brackets are part of the selector, as kustomize's kyaml SmarterPathSplitter reads them.
 */
function setField(target: Obj, fieldPath: string, value: unknown, create: boolean): void {
  const steps = fieldPath.match(/\[[^\]]*\]|[^.]+/g) ?? [];
  let current: unknown = target;
  for (const [i, step] of steps.entries()) {
    const last = i === steps.length - 1;
    const selector = /^\[(\w+)=(.+)\]$/.exec(step);
    if (selector) {
      const found = list(current, step).filter((item) => isObj(item) && item[String(selector[1])] === selector[2]);
      expect(found, `${fieldPath}: ${step} matches one item`).toHaveLength(1);
      current = found[0];
      continue;
    }
    const holder = obj(current, step);
    if (last) {
      if (!(step in holder) && !create) throw new Error(`${fieldPath}: ${step} does not exist and create is off`);
      holder[step] = value;
      return;
    }
    if (!(step in holder)) throw new Error(`${fieldPath}: no ${step}`);
    current = holder[step];
  }
}

/** What `kustomize build` prints for this kustomization (the features it uses, nothing more). */
function build(dir: string, env: Record<string, string>): Obj[] {
  const k = readKustomization(dir);
  const resources = k.resources.flatMap((file) => documents(`${dir}/${file}`));
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: k.generator.name, annotations: k.generator.options.annotations }, data: env };
  const all: Obj[] = [...resources, configMap];
  const matches = (resource: Obj, select: Obj) => Object.entries(select).every(([key, value]) => {
    if (key === 'group') return String(resource.apiVersion).split('/')[0] === value;
    if (key === 'kind') return resource.kind === value;
    if (key === 'name') return obj(resource.metadata, 'metadata').name === value;
    throw new Error(`select by ${key} is not modelled`);
  });
  for (const { source, targets } of k.replacements) {
    const [from] = all.filter((resource) => matches(resource, { kind: source.kind, name: source.name }));
    if (!from) throw new Error(`replacement source ${String(source.name)} not found`);
    const [field, key] = String(source.fieldPath).split('.');
    const value = obj(from[String(field)], 'source field')[String(key)];
    if (value === undefined) throw new Error(`replacement source ${String(source.fieldPath)} is not in the inputs`);
    for (const target of targets) {
      const selected = resources.filter((resource) => matches(resource, target.select));
      expect(selected, `one target for ${JSON.stringify(target.select)}`).toHaveLength(1);
      for (const path of target.fieldPaths) setField(selected[0] ?? {}, path, value, target.options?.create === true);
    }
  }
  // local-config resources are inputs only: kustomize build leaves them out.
  return all.filter((resource) => obj(obj(resource.metadata, 'metadata').annotations ?? {}, 'annotations')['config.kubernetes.io/local-config'] !== 'true');
}

describe('infra/kubernetes/kustomization.yaml: the webhook URL and CA bundle are inputs', () => {
  it('reads them from webhook.env (kept out of git) and keeps the generated ConfigMap out of the output', () => {
    const k = readKustomization('infra/kubernetes');
    expect(k.resources).toEqual(['rbac.yaml', 'webhook.yaml']);
    expect(k.generator.envs).toEqual(['webhook.env']);
    expect(k.generator.options).toMatchObject({ disableNameSuffixHash: true, annotations: { 'config.kubernetes.io/local-config': 'true' } });
    expect(text('infra/kubernetes/.gitignore').split('\n')).toContain('webhook.env');
    expect(Object.keys(envFile(text('infra/kubernetes/webhook.env.example'))).sort()).toEqual(['caBundle', 'url']);
  });

  it('builds both webhooks with the given URL and CA bundle, and nothing else changed', () => {
    const url = 'https://abc123.execute-api.eu-west-1.amazonaws.com/webhook/t0ken';
    const caBundle = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
    const out = build('infra/kubernetes', { url, caBundle });
    expect(out.map((resource) => resource.kind)).toEqual(['ClusterRole', 'ClusterRoleBinding', 'MutatingWebhookConfiguration']);
    const webhook = out[2] ?? {};
    const hooks = list(webhook.webhooks, 'webhooks').map((hook) => obj(hook, 'webhook'));
    expect(hooks.map((hook) => hook.name)).toEqual(['node-join.podroute.io', 'node-provider-id.podroute.io']);
    const original = documents('infra/kubernetes/webhook.yaml')[0] ?? {};
    const originalHooks = list(original.webhooks, 'webhooks').map((hook) => obj(hook, 'webhook'));
    for (const [i, hook] of hooks.entries()) {
      expect(hook.clientConfig).toEqual({ url, caBundle });
      expect({ ...hook, clientConfig: originalHooks[i]?.clientConfig }).toEqual(originalHooks[i]);
    }
  });

  it('accepts an empty CA bundle (the API server then uses its system roots)', () => {
    const env = envFile(text('infra/kubernetes/webhook.env.example'));
    expect(env.caBundle).toBe('');
    const [, , webhook] = build('infra/kubernetes', env);
    for (const hook of list(webhook?.webhooks, 'webhooks')) expect(obj(hook, 'webhook').clientConfig).toEqual({ url: env.url, caBundle: '' });
  });

  it('fails without the url input rather than applying the placeholder', () => {
    expect(() => build('infra/kubernetes', { caBundle: '' })).toThrow(/data.url is not in the inputs/);
  });
});

describe('infra/kubernetes/service-account: the identity for kubeAuth=secret', () => {
  it('is a ServiceAccount, its long-lived token Secret and a binding to the podroute ClusterRole', () => {
    const k = obj(load(text('infra/kubernetes/service-account/kustomization.yaml')), 'kustomization');
    expect(k.resources).toEqual(['service-account.yaml']);
    const [account, secret, binding] = documents('infra/kubernetes/service-account/service-account.yaml');
    expect(account?.kind).toBe('ServiceAccount');
    const { name, namespace } = obj(account?.metadata, 'metadata');
    expect(secret?.kind).toBe('Secret');
    expect(secret?.type).toBe('kubernetes.io/service-account-token');
    expect(obj(secret?.metadata, 'metadata')).toMatchObject({ namespace, annotations: { 'kubernetes.io/service-account.name': name } });
    expect(binding?.kind).toBe('ClusterRoleBinding');
    expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podroute' });
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name, namespace }]);
    const [role] = documents('infra/kubernetes/rbac.yaml');
    expect(obj(role?.metadata, 'metadata').name).toBe('podroute');
  });
});
