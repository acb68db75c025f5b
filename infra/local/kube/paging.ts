/**
 * Node lists: label selectors, `limit` pages and continue tokens that expire as the API server's do.
 */
import { ApiError } from './api-error.ts';
import type { RequestCtx } from './http.ts';
import { copy, labelsOf, nameOf, stripTypeMeta } from './objects.ts';
import { isObject, type JsonObject } from './patch.ts';
import type { ServerState } from './state.ts';

/** The clock of continue tokens and how long one lives. */
export type Paging = { now: () => number; continueTtlMs: number };

/** `rv: -1` is the inconsistent token of an expired list: it goes on at the latest version. */
type ContinueToken = { after: string; rv: number; at: number };

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (isObject(value) && typeof value.after === 'string' && typeof value.rv === 'number' && typeof value.at === 'number') {
      return { after: value.after, rv: value.rv, at: value.at };
    }
  } catch {
    // fall through to the error below
  }
  throw new ApiError(400, 'BadRequest', 'continue key is not valid: illegal base64 data or incorrect format');
}

/**
 * The answer to a continue token that outlived compaction, as the API server words it
 * (k8s.io/apiserver storage/etcd3 `handleCompactedErrorForPaging`, apimachinery
 * `NewResourceExpired`): 410, reason `Expired`, and a new continue token in the Status's list
 * metadata that resumes where the list stopped, at the latest version (inconsistent).
 */
const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue ' +
  'parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided ' +
  'token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was ' +
  'returned and now may show up in the list.';

/** Default continue-token life: the kube-apiserver's `--etcd-compaction-interval` default, 5m. */
export const DEFAULT_CONTINUE_TTL_MS = 5 * 60_000;

/** `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, comma-separated (AND). */
function labelMatcher(selector: string | null): (labels: Record<string, string>) => boolean {
  if (!selector || selector.trim() === '') return () => true;
  const requirements: ((labels: Record<string, string>) => boolean)[] = [];
  const parts = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  for (const rawPart of parts) {
    const part = rawPart.trim();
    if (part === '') continue;
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const [, key = '', op, list = ''] = m;
      const values = new Set(list.split(',').map((v) => v.trim()));
      requirements.push(op === 'in' ? (l) => values.has(l[key] ?? '\u0000') : (l) => !values.has(l[key] ?? '\u0000'));
    } else if ((m = part.match(/^([\w./-]+)\s*(!=|==|=)\s*([\w./-]*)$/))) {
      const [, key = '', op, value = ''] = m;
      requirements.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((m = part.match(/^!\s*([\w./-]+)$/))) {
      const key = m[1] ?? '';
      requirements.push((l) => !Object.hasOwn(l, key));
    } else if ((m = part.match(/^([\w./-]+)$/))) {
      const key = m[1] ?? '';
      requirements.push((l) => Object.hasOwn(l, key));
    } else {
      throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${JSON.stringify(part)}`);
    }
  }
  return (labels) => requirements.every((r) => r(labels));
}

export function listNodes(state: ServerState, ctx: RequestCtx, paging: Paging): JsonObject {
  if (ctx.query.get('watch') === 'true' || ctx.query.get('watch') === '1') {
    throw new ApiError(400, 'BadRequest', 'watch is not supported by the podroute emulator');
  }
  const limitRaw = ctx.query.get('limit');
  const limit = limitRaw === null || limitRaw === '' ? 0 : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 0) throw new ApiError(400, 'BadRequest', `invalid limit ${JSON.stringify(limitRaw)}`);
  const matches = labelMatcher(ctx.query.get('labelSelector'));
  const continueRaw = ctx.query.get('continue');
  const from = continueRaw ? decodeContinue(continueRaw) : null;
  if (from && from.rv !== -1) {
    const injected = state.failure?.kind === 'expireContinue';
    if (injected) state.consumeFailure();
    if (injected || paging.now() - from.at > paging.continueTtlMs) {
      // The version the token pinned is compacted away: 410 with a token that goes on at the latest.
      const resume = encodeContinue({ after: from.after, rv: -1, at: paging.now() });
      throw new ApiError(410, 'Expired', CONTINUE_EXPIRED_MESSAGE, undefined, { continue: resume });
    }
  }
  let items = [...state.nodes.values()]
    .filter((n) => matches(labelsOf(n)))
    .sort((a, b) => ((nameOf(a) ?? '') < (nameOf(b) ?? '') ? -1 : 1));
  if (from) items = items.filter((n) => (nameOf(n) ?? '') > from.after);
  const listRv = from && from.rv !== -1 ? from.rv : state.rv;
  const metadata: JsonObject = { resourceVersion: String(listRv) };
  if (limit > 0 && items.length > limit) {
    const page = items.slice(0, limit);
    metadata.continue = encodeContinue({ after: nameOf(page[page.length - 1] ?? {}) ?? '', rv: listRv, at: from && from.rv !== -1 ? from.at : paging.now() });
    metadata.remainingItemCount = items.length - limit;
    items = page;
  }
  if (state.failure?.kind === 'emptyList') {
    items = [];
    delete metadata.continue;
    delete metadata.remainingItemCount;
    state.consumeFailure();
  }
  // List items carry no apiVersion or kind (the recorded NodeList of kube-apiserver 1.32: the
  // list's own type says what its items are).
  return { kind: 'NodeList', apiVersion: 'v1', metadata, items: items.map((n) => stripTypeMeta(copy(n))) };
}
