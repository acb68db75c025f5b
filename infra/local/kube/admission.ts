/**
 * Admission for Node CREATE, UPDATE and DELETE: the podroute mutating webhook over HTTP(S) with an
 * AdmissionReview v1, failurePolicy Ignore, an UPDATE webhook's matchConditions
 * (./match-conditions.ts), and the optional later validating webhook that refuses a share of the
 * deletes podroute admitted.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { ApiError, webhookDenied } from './api-error.ts';
import { parseJson, toJson } from './objects.ts';
import { applyJsonPatch, isObject, type JsonObject } from './patch.ts';
import type { UserInfo } from './identity.ts';
import type { ServerState } from './state.ts';
import { seededRandom } from '../random.ts';
import { compileMatchConditions, type CompiledConditions } from './match-conditions.ts';
import type { KubeEmulatorOptions, WebhookTarget } from './types.ts';

/** Default `timeoutSeconds` of a webhook (admissionregistration.k8s.io/v1 `ValidatingWebhook`). */
const DEFAULT_TIMEOUT_SECONDS = 10;

/**
 * The URL the API server calls: the configured one with `?timeout=<n>s` appended, n the webhook's
 * timeoutSeconds (k8s.io/apiserver admission/plugin/webhook/request: the client sets the request
 * timeout as that query parameter; seen in every recorded exchange, `?timeout=5s`).
 */
export function webhookUrl(target: WebhookTarget): URL {
  const url = new URL(target.url);
  const seconds = target.timeoutMs === undefined ? DEFAULT_TIMEOUT_SECONDS : Math.max(1, Math.ceil(target.timeoutMs / 1000));
  url.searchParams.set('timeout', `${seconds}s`);
  return url;
}

function postJson(target: WebhookTarget, payload: unknown): Promise<{ status: number; body: string }> {
  const url = webhookUrl(target);
  const data = Buffer.from(JSON.stringify(payload));
  const requestOptions: https.RequestOptions = {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': data.length },
    timeout: target.timeoutMs ?? 10_000,
  };
  if (target.caPem) requestOptions.ca = target.caPem;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('webhook timed out')));
    req.on('error', reject);
    req.end(data);
  });
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** The options an AdmissionRequest names (the kind of the request's options object). */
const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const;

/**
 * The AdmissionReview v1 the API server sends for a Node CREATE or DELETE (also built by the
 * sandbox's forged admissions and the tests' CREATE reviews, so all send one shape).
 */
export function admissionReview(uid: string, operation: Operation, name: string, object: Record<string, unknown> | null, oldObject: Record<string, unknown> | null, user: UserInfo) {
  const gvk = { group: '', version: 'v1', kind: 'Node' };
  const gvr = { group: '', version: 'v1', resource: 'nodes' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name,
      operation,
      userInfo: { username: user.username, uid: user.uid, groups: [...user.groups] },
      object,
      oldObject,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[operation] },
    },
  };
}

/** The webhook's `response` for `review`; throws when the call fails or the answer is not one. */
async function callWebhook(target: WebhookTarget, review: ReturnType<typeof admissionReview>): Promise<JsonObject> {
  const { status, body } = await postJson(target, review);
  if (status !== 200) throw new Error(`webhook answered HTTP ${status}`);
  const parsed = parseJson(body);
  if (!isObject(parsed) || !isObject(parsed.response)) throw new Error('webhook answer has no "response"');
  if (parsed.response.uid !== review.request.uid) throw new Error('webhook answer has the wrong uid');
  return parsed.response;
}

/** `object` with an allowing response's JSONPatch applied (none, or not a JSONPatch: unchanged); a broken patch is a 500. */
function patchedBy(response: JsonObject, object: JsonObject): JsonObject {
  if (response.patch === undefined || response.patchType !== 'JSONPatch' || typeof response.patch !== 'string') return object;
  try {
    const patched = applyJsonPatch(object, parseJson(Buffer.from(response.patch, 'base64').toString('utf8')));
    if (!isObject(patched)) throw new Error('the patch did not leave an object');
    return patched;
  } catch (cause) {
    throw new ApiError(500, 'InternalError', `Internal error occurred: admission webhook "podroute" returned an invalid patch: ${(cause as Error).message}`);
  }
}

export class Admission {
  private readonly denyShare: number;
  private readonly denyDraw: () => number;
  /** The UPDATE webhook's matchConditions, compiled when the emulator starts (all true: none). */
  private readonly updateMatches: CompiledConditions;

  constructor(
    private readonly state: ServerState,
    private readonly targets: Pick<KubeEmulatorOptions, 'onNodeCreate' | 'onNodeUpdate' | 'onNodeDelete' | 'denyDeletes' | 'denyDeleteStatus' | 'seed'>,
  ) {
    this.updateMatches = compileMatchConditions(targets.onNodeUpdate?.matchConditions ?? []);
    this.denyShare = targets.denyDeletes ?? 0;
    if (!(this.denyShare >= 0 && this.denyShare <= 1)) throw new Error(`denyDeletes must be a share from 0 to 1, not ${String(targets.denyDeletes)}`);
    this.denyDraw = seededRandom(targets.seed ?? 1);
  }

  /**
   * Calls the webhook; returns the patched object (CREATE, UPDATE) or the original, or throws the
   * webhook's rejection. Any failure of the call itself is ignored (failurePolicy: Ignore), and so
   * is an UPDATE its matchConditions skip (`WEBHOOK UPDATE SKIPPED` counts those).
   */
  async admit(operation: Operation, name: string, object: JsonObject | null, oldObject: JsonObject | null, user: UserInfo): Promise<JsonObject | null> {
    const target = operation === 'CREATE' ? this.targets.onNodeCreate : operation === 'UPDATE' ? this.targets.onNodeUpdate : this.targets.onNodeDelete;
    if (!target) return object;
    const uid = randomUUID();
    const review = admissionReview(uid, operation, name, object, oldObject, user);
    if (operation === 'UPDATE' && !this.updateMatches({ object, oldObject, request: toJson(review.request) }).call) {
      this.state.inc('WEBHOOK UPDATE SKIPPED');
      return object;
    }
    this.state.inc(`WEBHOOK ${operation}`);
    let response: JsonObject;
    try {
      response = await callWebhook(target, review);
    } catch (error) {
      this.state.webhookCalls.push({ operation, name, ok: false, error: (error as Error).message });
      return object;
    }
    if (response.allowed !== true) {
      this.state.webhookCalls.push({ operation, name, ok: true, allowed: false });
      const status = isObject(response.status) ? response.status : {};
      throw webhookDenied('podroute', {
        ...(typeof status.code === 'number' ? { code: status.code } : {}),
        ...(typeof status.reason === 'string' && status.reason !== '' ? { reason: status.reason } : {}),
        ...(typeof status.message === 'string' && status.message !== '' ? { message: status.message } : {}),
        ...(isObject(status.details) ? { details: status.details } : {}),
      });
    }
    this.state.webhookCalls.push({ operation, name, ok: true, allowed: true });
    return operation !== 'DELETE' && object !== null ? patchedBy(response, object) : object;
  }

  /**
   * After podroute admitted a DELETE: a validating webhook runs after the mutating ones ("Dynamic
   * Admission Control": validating webhooks are invoked after all object modifications) and may
   * still refuse what podroute admitted (the `denyDeletes` share); the node then stays, as it is.
   * The refusal is that webhook's Status (`denyDeleteStatus`) as `webhookDenied` words it.
   */
  refuseDelete(name: string): void {
    if (this.denyShare > 0 && this.denyDraw() < this.denyShare) {
      this.state.refused.push(name);
      this.state.inc('REFUSED DELETE');
      throw webhookDenied('deny-deletes.podroute.test', this.targets.denyDeleteStatus ?? { message: 'node deletion refused by policy (emulator denyDeletes)' });
    }
  }
}
