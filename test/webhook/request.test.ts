import { describe, expect, it } from 'vitest';
import { PodrouteError } from '../../lib/errors.ts';
import { signEvent } from '../../lib/webhook/events.ts';
import { classifyRequest } from '../../lib/webhook/request.ts';
import { NODE_NAME, NOW_SECONDS, SECRET, SIGNING_KEY, event, json, node, options, review, signed, withToken, type WebhookRequest } from './fixtures.ts';

type ClassifiedRequest = ReturnType<typeof classifyRequest>;

const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64');
/** The largest body the webhook reads: 1 MiB. */
const MAX_BODY_BYTES = 1024 * 1024;

type Accepted =
  | { kind: 'admission'; operation: 'CREATE' | 'UPDATE' | 'DELETE'; name: string; dryRun?: boolean }
  | { kind: 'event'; type: 'NodeJoined' | 'NodeLeft'; nodeName: string };

function summary(result: ClassifiedRequest): unknown {
  switch (result.kind) {
    case 'admission': {
      const request = result.review.request;
      return { kind: 'admission', operation: request.operation, name: request.node.metadata.name, dryRun: request.dryRun };
    }
    case 'event':
      return { kind: 'event', type: result.event.type, nodeName: result.event.nodeName };
    case 'rejected':
      return result;
  }
}

describe('classifyRequest without a readable signing key', () => {
  it('answers a signed request 503 (retry later) and still admits a review with the token', () => {
    const noKey = { ...options, signingKey: null };
    expect(classifyRequest(signed(event('NodeLeft')), noKey)).toEqual({ kind: 'rejected', status: 503, message: 'service unavailable' });
    expect(classifyRequest(withToken(review('CREATE')), noKey).kind).toBe('admission');
  });
});

describe('classifyRequest: accepted requests', () => {
  const create = { kind: 'admission', operation: 'CREATE', name: NODE_NAME, dryRun: false } as const;
  const del = { kind: 'admission', operation: 'DELETE', name: NODE_NAME, dryRun: false } as const;
  const signedAt = (at: number) => signed(event('NodeJoined'), { at });

  it.each<[string, WebhookRequest, Accepted]>([
    ['CREATE, token in path', withToken(review('CREATE')), create],
    ['DELETE, token in path', withToken(review('DELETE')), del],
    ['UPDATE, token in path', withToken(review('UPDATE')), { ...create, operation: 'UPDATE' }],
    ['CREATE, token in Authorization', withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: `Bearer ${SECRET}` } }), create],
    ['DELETE, token in Authorization', withToken(review('DELETE'), { pathParameters: {}, headers: { authorization: `Bearer ${SECRET}` } }), del],
    ['token in path and header, both right', withToken(review('CREATE'), { headers: { authorization: `Bearer ${SECRET}` } }), create],
    ['bearer scheme in any case, extra blanks', withToken(review('CREATE'), { pathParameters: null, headers: { authorization: `bEaReR   ${SECRET}  ` } }), create],
    ['header names in upper case', withToken(review('DELETE'), { pathParameters: undefined, headers: { AUTHORIZATION: `Bearer ${SECRET}`, 'Content-Type': 'application/json' } }), del],
    ['base64 body', withToken(b64(json(review('CREATE'))), { isBase64Encoded: true }), create],
    ['Buffer body', withToken(Buffer.from(json(review('DELETE')))), del],
    ['dry run', withToken(review('CREATE', { dryRun: true })), { ...create, dryRun: true }],
    ['CREATE without request.name', withToken(review('CREATE', { name: '' })), create],
    ['signed NodeJoined', signed(event('NodeJoined')), { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['signed NodeLeft', signed(event('NodeLeft', 'node-1')), { kind: 'event', type: 'NodeLeft', nodeName: 'node-1' }],
    ['signed, header names in mixed case', {
      headers: { 'X-Podroute-Signature': signEvent(event('NodeLeft'), SIGNING_KEY, NOW_SECONDS)['x-podroute-signature'], 'X-PODROUTE-TIMESTAMP': String(NOW_SECONDS) },
      rawBody: event('NodeLeft'),
    }, { kind: 'event', type: 'NodeLeft', nodeName: NODE_NAME }],
    ['signed, base64 body (HMAC over the decoded bytes)', { ...signed(event('NodeJoined')), rawBody: b64(event('NodeJoined')), isBase64Encoded: true }, { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['signed, Buffer body', signed(Buffer.from(event('NodeJoined'))), { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['signed 300 s ago', signedAt(NOW_SECONDS - 300), { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['signed 300 s ahead', signedAt(NOW_SECONDS + 300), { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['signed event plus a valid token', { ...signed(event('NodeJoined')), pathParameters: { token: SECRET } }, { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['signed AdmissionReview plus a valid token', { ...signed(json(review('CREATE'))), pathParameters: { token: SECRET } }, create],
    ['other Authorization scheme next to a valid signature', { ...signed(event('NodeJoined')), headers: { ...signed(event('NodeJoined')).headers, authorization: 'Basic dXNlcjpwYXNz' } }, { kind: 'event', type: 'NodeJoined', nodeName: NODE_NAME }],
    ['body of exactly 1 MiB', withToken(json(review('CREATE')).padEnd(MAX_BODY_BYTES, ' ')), create],
  ])('%s', (_name, request, expected) => {
    expect(summary(classifyRequest(request, options))).toEqual(expected);
  });

  it('keeps the review as sent, with the node validated', () => {
    const result = classifyRequest(withToken(review('CREATE')), options);
    expect(result.kind).toBe('admission');
    if (result.kind !== 'admission') return;
    expect(result.review.request.uid).toBe('0f6f2b9e-5d1a-4c47-9b0e-3c1d2e4f5a6b');
    expect(result.review.request).toMatchObject({ userInfo: { username: `system:node:${NODE_NAME}`, groups: ['system:nodes'] } });
    expect(result.review.request.node).toEqual(node());
  });
});

describe('classifyRequest: rejected requests', () => {
  const unauthorized = [401, 'unauthorized'] as const;
  const goodSig = signEvent(event('NodeJoined'), SIGNING_KEY, NOW_SECONDS);
  const tooLarge = [413, `body is larger than ${MAX_BODY_BYTES} bytes (1 MiB)`] as const;
  const huge = json(review('CREATE')).padEnd(MAX_BODY_BYTES + 1, ' ');

  it.each<[string, WebhookRequest, readonly [400 | 401 | 413, string]]>([
    // authentication
    // Two secrets: the URL token cannot sign events, the signing key is no token.
    ['an event signed with the webhook token', signed(event('NodeLeft'), { secret: SECRET }), unauthorized],
    ['the signing key as the path token', withToken(review('CREATE'), { pathParameters: { token: SIGNING_KEY } }), unauthorized],
    ['the signing key as a bearer token', withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: `Bearer ${SIGNING_KEY}` } }), unauthorized],
    ['wrong token in path (one character more)', withToken(review('CREATE'), { pathParameters: { token: `${SECRET}x` } }), unauthorized],
    // The token is accepted in the path only: a URL query string is logged and cached in more places.
    ['the right token in the query string only', withToken(review('CREATE'), { pathParameters: undefined, query: { token: SECRET } }), unauthorized],
    ['the right token in the query string, name in upper case', withToken(review('CREATE'), { pathParameters: undefined, query: { TOKEN: SECRET } }), unauthorized],
    ['the right token in the path and again in the query string', withToken(review('CREATE'), { query: { token: SECRET } }), unauthorized],
    ['the right bearer token and a token in the query string', withToken(review('CREATE'), { pathParameters: undefined, query: { token: SECRET }, headers: { authorization: `Bearer ${SECRET}` } }), unauthorized],
    ['wrong token in Authorization', withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: 'Bearer nope' } }), unauthorized],
    ['wrong token in path', withToken(review('CREATE'), { pathParameters: { token: SECRET.slice(1) } }), unauthorized],
    ['right token in path, wrong one in Authorization', withToken(review('CREATE'), { headers: { authorization: 'Bearer nope' } }), unauthorized],
    ['token given twice with different values', withToken(review('CREATE'), { pathParameters: { token: [SECRET, 'nope'] } }), unauthorized],
    ['Authorization header in two cases, different values', withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: `Bearer ${SECRET}`, Authorization: 'Bearer nope' } }), unauthorized],
    ['no credential at all', withToken(review('CREATE'), { pathParameters: undefined }), unauthorized],
    ['no credential, empty path parameters', withToken(review('CREATE'), { pathParameters: {} }), unauthorized],
    ['only a Basic Authorization header', withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: `Basic ${b64(`x:${SECRET}`)}` } }), unauthorized],
    ['event without signature', withToken(event('NodeJoined'), { pathParameters: undefined }), unauthorized],
    ['event with a token but no signature (read as a review)', withToken(event('NodeJoined')), [400, 'apiVersion is required']],
    ['bad signature (other secret)', signed(event('NodeJoined'), { secret: 'another-secret' }), unauthorized],
    ['signature in upper-case hex', signed(event('NodeJoined'), { headers: { 'x-podroute-signature': goodSig['x-podroute-signature'].toUpperCase().replace('SHA256=', 'sha256=') } }), unauthorized],
    ['signature without the sha256= prefix', signed(event('NodeJoined'), { headers: { 'x-podroute-signature': goodSig['x-podroute-signature'].slice('sha256='.length) } }), unauthorized],
    ['stale timestamp (301 s old)', signed(event('NodeJoined'), { at: NOW_SECONDS - 301 }), unauthorized],
    ['timestamp 301 s ahead', signed(event('NodeJoined'), { at: NOW_SECONDS + 301 }), unauthorized],
    ['timestamp header changed after signing', signed(event('NodeJoined'), { headers: { 'x-podroute-timestamp': String(NOW_SECONDS + 1) } }), unauthorized],
    ['timestamp in milliseconds', { headers: signEvent(event('NodeJoined'), SECRET, NOW_SECONDS * 1000), rawBody: event('NodeJoined') }, unauthorized],
    ['timestamp missing', { headers: { 'x-podroute-signature': goodSig['x-podroute-signature'] }, rawBody: event('NodeJoined') }, unauthorized],
    ['timestamp not a number', { headers: { ...goodSig, 'x-podroute-timestamp': `${NOW_SECONDS}.0` }, rawBody: event('NodeJoined') }, unauthorized],
    ['tampered body', { ...signed(event('NodeJoined')), rawBody: event('NodeLeft') }, unauthorized],
    ['tampered body (base64 of other bytes)', { ...signed(event('NodeJoined')), rawBody: b64(`${event('NodeJoined')} `), isBase64Encoded: true }, unauthorized],
    ['signature header twice, different values', signed(event('NodeJoined'), { headers: { 'X-Podroute-Signature': 'sha256=00' } }), unauthorized],
    ['valid signature, wrong token', { ...signed(event('NodeJoined')), pathParameters: { token: 'nope' } }, unauthorized],
    ['signed AdmissionReview without a token', signed(json(review('CREATE'))), unauthorized],
    ['signed AdmissionReview v1beta1 without a token', signed(json({ ...review('CREATE'), apiVersion: 'admission.k8s.io/v1beta1' })), unauthorized],
    ['bad body and no credential: 401 first', withToken('{', { pathParameters: undefined }), unauthorized],
    // size
    ['body over 1 MiB (string)', withToken(huge), tooLarge],
    ['body over 1 MiB (Buffer)', withToken(Buffer.from(huge)), tooLarge],
    ['body over 1 MiB (base64)', withToken(b64(huge), { isBase64Encoded: true }), tooLarge],
    ['body over 1 MiB in UTF-8 bytes, not in characters', withToken('\u00e9'.repeat(MAX_BODY_BYTES / 2 + 1)), tooLarge],
    ['unsigned huge body: 401, not 413', withToken(huge, { pathParameters: undefined }), unauthorized],
    ['wrong token and huge body: 401, not 413', withToken(huge, { pathParameters: { token: 'nope' } }), unauthorized],
    // decoding
    ['base64 with junk', withToken(`${b64(json(review('CREATE')))}!`, { isBase64Encoded: true }), [400, 'body is not valid base64']],
    ['base64 with a bad length', withToken(b64(json(review('CREATE'))).slice(1), { isBase64Encoded: true }), [400, 'body is not valid base64']],
    ['malformed JSON', withToken('{"apiVersion": '), [400, 'body is not JSON']],
    ['malformed JSON, signed', signed('{"type": "NodeJoined",'), [400, 'body is not JSON']],
    ['empty body', withToken(''), [400, 'body is not JSON']],
    ['absent body', withToken('', { rawBody: undefined }), [400, 'body is not JSON']],
    ['body not UTF-8', withToken(Buffer.from([0x7b, 0xff, 0x7d])), [400, 'body is not JSON']],
    // admission review
    ['JSON but not an object', withToken('[1,2]'), [400, 'body must be an AdmissionReview object']],
    ['review v1beta1', withToken({ ...review('CREATE'), apiVersion: 'admission.k8s.io/v1beta1' }), [400, 'apiVersion must be admission.k8s.io/v1']],
    ['review without request', withToken({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), [400, 'request is required']],
    ['review without uid', withToken(review('CREATE', { uid: undefined })), [400, 'request.uid is required']],
    ['review with empty uid', withToken(review('CREATE', { uid: '' })), [400, 'request.uid must not be empty']],
    ['UPDATE without the stored node', withToken(review('UPDATE', { oldObject: null })), [400, 'request.oldObject must be the Node as stored before the update']],
    ['UPDATE without the updated node', withToken(review('UPDATE', { object: null })), [400, 'request.object must be the Node being updated']],
    ['UPDATE whose stored node is another', withToken(review('UPDATE', { name: '', oldObject: { metadata: { name: 'other' } } })), [400, 'request.oldObject.metadata.name must equal object.metadata.name']],
    ['wrong operation (CONNECT)', withToken(review('CONNECT')), [400, 'request.operation must be CREATE, UPDATE or DELETE']],
    ['non-node resource (pods)', withToken(review('CREATE', {
      kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, object: { metadata: { name: 'web-0' } },
    })), [400, 'request.resource must be core/v1 nodes']],
    ['non-node resource (apps/v1 deployments)', withToken(review('DELETE', { resource: { group: 'apps', version: 'v1', resource: 'deployments' } })), [400, 'request.resource must be core/v1 nodes']],
    ['nodes resource but Pod kind', withToken(review('CREATE', { kind: { group: '', version: 'v1', kind: 'Pod' } })), [400, 'request.kind must be core/v1 Node']],
    ['node subresource', withToken(review('CREATE', { subResource: 'status' })), [400, 'request.subResource must be empty (podroute admits nodes, not a subresource)']],
    ['CREATE without object', withToken(review('CREATE', { object: null })), [400, 'request.object must be the Node being created']],
    ['DELETE without oldObject', withToken(review('DELETE', { oldObject: undefined })), [400, 'request.oldObject must be the Node being deleted']],
    ['bad node name in CREATE', withToken(review('CREATE', { name: 'Bad_Name', object: node({ metadata: { name: 'Bad_Name' } }) })), [400, 'request.object.metadata.name must be a Kubernetes node name']],
    ['bad node name in DELETE', withToken(review('DELETE', { name: '', oldObject: node({ metadata: { name: 'a'.repeat(254) } }) })), [400, 'request.oldObject.metadata.name must be a Kubernetes node name']],
    ['node without metadata', withToken(review('CREATE', { object: { kind: 'Node' } })), [400, 'request.object.metadata is required']],
    ['object of another kind', withToken(review('CREATE', { object: node({ kind: 'Pod' }) })), [400, 'request.object.kind must be Node']],
    ['request.name differs from the node', withToken(review('DELETE', { name: 'other-node' })), [400, 'request.name must equal oldObject.metadata.name']],
    ['dryRun not a boolean', withToken(review('CREATE', { dryRun: 'yes' })), [400, 'request.dryRun must be true or false']],
    // node event
    ['bad node name in event', signed(event('NodeJoined', 'Node_1')), [400, 'nodeName must be a Kubernetes node name']],
    ['node name too long in event', signed(event('NodeJoined', 'a'.repeat(254))), [400, 'nodeName must be a Kubernetes node name']],
    ['non-ASCII node name (signature over UTF-8 bytes holds)', signed(json({ type: 'NodeJoined', nodeName: 'n\u00f6de-1' })), [400, 'nodeName must be a Kubernetes node name']],
    ['node name not a string', signed(json({ type: 'NodeJoined', nodeName: 7 })), [400, 'nodeName must be a Kubernetes node name']],
    ['unknown event type', signed(event('NodeRebooted')), [400, 'type must be NodeJoined or NodeLeft']],
    ['event with an unknown field', signed(json({ type: 'NodeLeft', nodeName: 'node-1', extra: true })), [400, 'body has unknown field "extra"']],
    ['event not an object', signed('"NodeJoined"'), [400, 'body must be a JSON object {"type", "nodeName"}']],
  ])('%s', (_name, request, [status, message]) => {
    expect(classifyRequest(request, options)).toEqual({ kind: 'rejected', status, message });
  });

  it('every 400 message is one line', () => {
    const result = classifyRequest(withToken(review('CREATE', { object: node({ metadata: { name: 'x\ny' } }) })), options);
    expect(result).toMatchObject({ kind: 'rejected', status: 400 });
    if (result.kind === 'rejected') expect(result.message).not.toMatch(/[\r\n]/);
  });

  it('refuses to run with an empty secret', () => {
    expect(() => classifyRequest(withToken(review('CREATE'), { pathParameters: { token: '' } }), { ...options, secret: '' })).toThrow(PodrouteError);
  });

  it('does not modify the request', () => {
    const request = withToken(review('CREATE'));
    const before = structuredClone(request);
    classifyRequest(request, options);
    expect(request).toEqual(before);
  });
});
