/**
 * A local Kubernetes API server for tests and the sandbox: the core/v1 Node and Event REST calls
 * that `@kubernetes/client-node` makes, over HTTPS with a real CA, bearer-token authentication
 * (an admin and one identity per kubelet), the Node authorizer and NodeRestriction,
 * TaintNodesByCondition, resourceVersion preconditions, the three patch types, Node and Event
 * validation, managedFields, and mutating admission webhooks for Node CREATE / UPDATE / DELETE. Each rule
 * follows kube-apiserver 1.32 (the recorded answers in test/fixtures/kube-apiserver-1.32 are
 * its tests' expected values). Test infrastructure, not product.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import { listenLocal } from '../listen.ts';
import { Admission } from './admission.ts';
import { ApiError, REASONS, statusOf } from './api-error.ts';
import { createAuthzRoutes } from './authz.ts';
import { createEvent, getEvent, INITIAL_NAMESPACES, listEvents, patchEvent } from './events.ts';
import { param, readBody, route, type Reply, type Route } from './http.ts';
import { ADMIN, kubeletUser, nodeOf } from './identity.ts';
import { managerOf } from './managed-fields.ts';
import { createNode, existing, patch, patchCarriesResourceVersion, removeNode, update, type Caller, type NodeServer } from './nodes.ts';
import { copy, metadataOf, nameOf, parseJsonBody, toJson } from './objects.ts';
import { DEFAULT_CONTINUE_TTL_MS, listNodes, type Paging } from './paging.ts';
import { isObject, type JsonObject } from './patch.ts';
import { loadRbac, PODROUTE_USER, requestAttributes } from './rbac.ts';
import { ServerState } from './state.ts';
import type { KubeConfigOptions, KubeEmulator, KubeEmulatorOptions, KubeEmulatorState, KubeEmulatorStats } from './types.ts';

export { DEFAULT_CONTINUE_TTL_MS } from './paging.ts';
export type {
  Failure,
  KubeConfigOptions,
  KubeEmulator,
  KubeEmulatorOptions,
  KubeEmulatorState,
  KubeEmulatorStats,
  StatusObject,
  WebhookCall,
  WebhookTarget,
} from './types.ts';

const TLS_DIR = new URL('./tls/', import.meta.url);

export async function startKubeEmulator(options: KubeEmulatorOptions = {}): Promise<KubeEmulator> {
  const caPem = readFileSync(new URL('ca.crt', TLS_DIR), 'utf8');
  const certPem = readFileSync(new URL('server.crt', TLS_DIR), 'utf8');
  const keyPem = readFileSync(new URL('server.key', TLS_DIR), 'utf8');
  const token = options.token ?? `emulator-${randomUUID()}`;

  const state = new ServerState();
  state.users.set(token, ADMIN);
  const podrouteToken = `podroute-${randomUUID()}`;
  state.users.set(podrouteToken, PODROUTE_USER);
  const rbac = loadRbac();
  for (const namespace of [...INITIAL_NAMESPACES, ...(options.namespaces ?? [])]) state.namespaces.add(namespace);
  const paging: Paging = { now: options.now ?? Date.now, continueTtlMs: options.continueTtlMs ?? DEFAULT_CONTINUE_TTL_MS };
  const admission = new Admission(state, options);
  const server: NodeServer = { state, admission };

  // --- routing ---------------------------------------------------------------------------------

  const authz = createAuthzRoutes(() => state.nextRv(), rbac);
  const routes: Route[] = [
    ...authz.routes.map((r) => route(r.method, r.template, (ctx) => r.handle(ctx.body, ctx.caller.user))),
    route('GET', '/api/v1/nodes', async (ctx) => ({ code: 200, body: listNodes(state, ctx, paging) })),
    route('POST', '/api/v1/nodes', async (ctx) => ({ code: 201, body: await createNode(server, parseJsonBody(ctx.body), ctx.caller, true) })),
    route('GET', '/api/v1/nodes/{name}', async (ctx) => ({ code: 200, body: copy(existing(state, param(ctx))) })),
    route('GET', '/api/v1/nodes/{name}/status', async (ctx) => ({ code: 200, body: copy(existing(state, param(ctx))) })),
    route('DELETE', '/api/v1/nodes/{name}', async (ctx) => {
      const gone = await removeNode(server, param(ctx), ctx.caller, true);
      const details: JsonObject = { name: param(ctx), kind: 'nodes', uid: metadataOf(gone).uid ?? null };
      return { code: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } };
    }),
    route('PATCH', '/api/v1/nodes/{name}', async (ctx) => ({ code: 200, body: await patch(server, param(ctx), ctx, null, ctx.caller) })),
    route('PATCH', '/api/v1/nodes/{name}/status', async (ctx) => ({ code: 200, body: await patch(server, param(ctx), ctx, 'status', ctx.caller) })),
    route('PUT', '/api/v1/nodes/{name}', async (ctx) => ({ code: 200, body: await update(server, param(ctx), parseJsonBody(ctx.body), null, ctx.caller) })),
    route('PUT', '/api/v1/nodes/{name}/status', async (ctx) => ({ code: 200, body: await update(server, param(ctx), parseJsonBody(ctx.body), 'status', ctx.caller) })),
    route('POST', '/api/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 201, body: createEvent(state, ctx, 'core', ctx.caller.manager) })),
    route('GET', '/api/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 200, body: listEvents(state, ctx, 'core') })),
    route('GET', '/api/v1/namespaces/{namespace}/events/{name}', async (ctx) => ({ code: 200, body: getEvent(state, ctx, 'core') })),
    route('PATCH', '/api/v1/namespaces/{namespace}/events/{name}', async (ctx) => ({ code: 200, body: patchEvent(state, ctx, 'core', ctx.caller.manager) })),
    route('POST', '/apis/events.k8s.io/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 201, body: createEvent(state, ctx, 'events.k8s.io', ctx.caller.manager) })),
    route('GET', '/apis/events.k8s.io/v1/namespaces/{namespace}/events', async (ctx) => ({ code: 200, body: listEvents(state, ctx, 'events.k8s.io') })),
  ];

  async function handle(req: http.IncomingMessage): Promise<Reply> {
    const url = new URL(req.url ?? '/', 'https://emulator.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'GET' && (url.pathname === '/readyz' || url.pathname === '/livez' || url.pathname === '/healthz')) {
      return { code: 200, body: 'ok' };
    }
    const body = await readBody(req);
    const auth = req.headers.authorization ?? '';
    const user = auth.startsWith('Bearer ') ? state.users.get(auth.slice('Bearer '.length)) : undefined;
    if (!user) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    const decodedPath = url.pathname;
    // Authorization precedes routing, as the API server's filter chain has it; kubelets answer to the Node authorizer.
    const attributes = requestAttributes(method, decodedPath, url.searchParams);
    if (attributes && nodeOf(user) === null) rbac.authorize(user, attributes);
    const sameTemplate = routes.filter((r) => r.pattern.test(decodedPath));
    const matched = sameTemplate.find((r) => r.method === method);
    if (!matched) {
      if (sameTemplate.length > 0) throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    const key = `${method} ${matched.template}`;
    state.inc(key);
    state.requests.push({ key, userAgent: req.headers['user-agent'] ?? '', fieldManager: url.searchParams.get('fieldManager') });
    const failure = state.failure;
    if (failure?.kind === 'error' && (failure.match === undefined || failure.match === key)) {
      const code = failure.code ?? 500;
      state.consumeFailure();
      // A conflict on a patch without a resourceVersion is retried by the server, never answered.
      if (!(code === 409 && method === 'PATCH' && !patchCarriesResourceVersion(body))) {
        const headers = failure.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(failure.retryAfterSeconds) };
        throw new ApiError(code, REASONS[code] ?? 'InternalError', `injected failure (${code}) for ${key}`, undefined, undefined, headers);
      }
    }
    const params = (decodedPath.match(matched.pattern) ?? []).slice(1).map((p) => decodeURIComponent(p));
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if ((method === 'POST' || method === 'PUT') && contentType !== '' && contentType !== 'application/json') {
      throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json`);
    }
    const caller: Caller = { user, manager: managerOf(url.searchParams.get('fieldManager'), req.headers['user-agent'] ?? '') };
    return matched.handle({ params, query: url.searchParams, body, contentType, key, caller });
  }

  const httpsServer = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const respond = (reply: Reply) => {
      const send = () => {
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.code, {
          ...reply.headers,
          'content-type': typeof reply.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      };
      if (options.latencyMs) setTimeout(send, options.latencyMs);
      else send();
    };
    handle(req).then(respond, (error: unknown) => {
      const apiError = error instanceof ApiError ? error : new ApiError(500, 'InternalError', `Internal error occurred: ${String(error)}`);
      respond({ code: apiError.code, body: statusOf(apiError), ...(apiError.headers ? { headers: apiError.headers } : {}) });
    });
  });

  // Nodes present at start were written by their kubelets (manager `kubelet`), without admission.
  const kubeletCaller = (node: unknown): Caller => {
    const value = toJson(node);
    return { user: kubeletUser(isObject(value) ? (nameOf(value) ?? '') : ''), manager: 'kubelet' };
  };
  const adminCaller: Caller = { user: ADMIN, manager: 'kubectl' };
  for (const node of options.nodes ?? []) await createNode(server, toJson(node), kubeletCaller(node), false);

  const listening = await listenLocal(httpsServer, options.port ?? 0);
  const port = listening.port;
  const url = `https://127.0.0.1:${port}`;

  const kubeConfig = (userToken = token): KubeConfigOptions => ({
    clusters: [{ name: 'podroute-local', server: url, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'podroute', token: userToken }],
    contexts: [{ name: 'podroute-local', cluster: 'podroute-local', user: 'podroute' }],
    currentContext: 'podroute-local',
  });

  const toControlError = (error: unknown): never => {
    if (error instanceof ApiError) throw new Error(`${error.code} ${error.reason}: ${error.message}`, { cause: error });
    throw error;
  };

  const control: KubeEmulatorState = {
    addNode: (node, opts = {}) => createNode(server, toJson(node), kubeletCaller(node), opts.admit ?? true).catch(toControlError),
    async deleteNode(name, opts = {}) {
      if (!state.nodes.has(name)) return false;
      await removeNode(server, name, adminCaller, opts.admit ?? true).catch(toControlError);
      return true;
    },
    kubeletToken(name) {
      const user = kubeletUser(name);
      const existingToken = [...state.users.entries()].find(([, u]) => u.username === user.username)?.[0];
      if (existingToken !== undefined) return existingToken;
      const fresh = `kubelet-${randomUUID()}`;
      state.users.set(fresh, user);
      return fresh;
    },
    getNode: (name) => {
      const node = state.nodes.get(name);
      return node ? copy(node) : undefined;
    },
    putRawNode(input) {
      const node = toJson(input);
      if (!isObject(node)) throw new Error('putRawNode needs an object');
      const name = nameOf(node);
      if (name === undefined) throw new Error('putRawNode needs metadata.name (use a name and break another field)');
      state.nodes.set(name, copy(node));
      state.rv += 1;
    },
    nodes: () => [...state.nodes.values()].map((n) => copy(n)),
    events: () => state.events.map((e) => copy(e)),
    webhookCalls: () => state.webhookCalls.map((c) => ({ ...c })),
    requests: () => state.requests.map((r) => ({ ...r })),
    refusedDeletes: () => [...state.refused],
    setFailure: (next) => state.setFailure(next),
    resourceVersion: () => state.rv,
    access: authz.access,
    webhookConfigurations: authz.webhookConfigurations,
  };

  const stats: KubeEmulatorStats = {
    get: (key) => state.counts.get(key) ?? 0,
    all: () => Object.fromEntries([...state.counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
    reset: () => state.counts.clear(),
  };

  return {
    url,
    port,
    caPem,
    token,
    podrouteToken,
    kubeConfig,
    kubeConfigYaml: (userToken = token) => {
      const c = kubeConfig(userToken);
      return [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: ${c.currentContext}`,
        '  cluster:',
        `    server: ${url}`,
        `    certificate-authority-data: ${c.clusters[0]?.caData ?? ''}`,
        'users:',
        '- name: podroute',
        '  user:',
        `    token: ${userToken}`,
        'contexts:',
        `- name: ${c.currentContext}`,
        '  context:',
        `    cluster: ${c.currentContext}`,
        '    user: podroute',
        `current-context: ${c.currentContext}`,
        '',
      ].join('\n');
    },
    state: control,
    stats,
    close: listening.close,
  };
}
