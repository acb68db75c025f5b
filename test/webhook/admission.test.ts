import { describe, expect, it } from 'vitest';
import { routesText } from '../support/plane.ts';
import { z } from 'zod';
import { InvalidInputError } from '../../lib/errors.ts';
import { nodeSchema, parseNode, type Node } from '../../lib/nodes/node.ts';
import {
  admissionBudgetMs,
  admissionResponse,
  admissionReviewSchema,
  isProviderIdJoin,
  jsonPointer,
  looksLikeAdmissionReview,
  networkUnavailablePatch,
  podCidrPatch,
} from '../../lib/webhook/admission.ts';
import { NODE_NAME, node, review } from './fixtures.ts';

type JsonPatchOp = ReturnType<typeof podCidrPatch>[number];

// --- a tiny RFC 6902 applier (add / replace / remove / test), strict about missing parents ---------

const jsonSchema = z.json();
type Json = z.infer<typeof jsonSchema>;
const patchSchema = z.array(z.object({ op: z.enum(['add', 'replace', 'remove', 'test']), path: z.string(), value: jsonSchema.optional() }));
type PatchOps = z.infer<typeof patchSchema>;

function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isContainer(value: unknown): value is Json[] | { [key: string]: Json } {
  return typeof value === 'object' && value !== null;
}

function applyPatch(document: Json, jsonOps: readonly JsonPatchOp[] | PatchOps): Json {
  const ops = patchSchema.parse(jsonOps);
  const root = structuredClone(document);
  for (const op of ops) {
    if (!op.path.startsWith('/')) throw new Error(`bad pointer ${op.path}`);
    const tokens = op.path.slice(1).split('/').map(unescapeToken);
    const last = tokens.pop();
    if (last === undefined) throw new Error('empty pointer');
    let parent: Json = root;
    for (const token of tokens) {
      if (!isContainer(parent)) throw new Error(`no parent for ${op.path}`);
      const next: Json | undefined = Array.isArray(parent) ? parent[Number(token)] : parent[token];
      if (next === undefined) throw new Error(`path ${op.path} has no parent`);
      parent = next;
    }
    if (!isContainer(parent)) throw new Error(`parent of ${op.path} is not an object or array`);
    if (Array.isArray(parent)) {
      // RFC 6902 4.1: `-` appends; an index up to the length inserts there; replace needs an element.
      const index = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`bad index ${op.path}`);
      if (op.op === 'add') parent.splice(index, 0, op.value ?? null);
      else if (op.op === 'replace' && index < parent.length) parent[index] = op.value ?? null;
      else throw new Error(`unsupported array op ${op.op} at ${op.path}`);
      continue;
    }
    switch (op.op) {
      case 'add':
        parent[last] = op.value ?? null;
        break;
      case 'replace':
        if (!(last in parent)) throw new Error(`replace of missing ${op.path}`);
        parent[last] = op.value ?? null;
        break;
      case 'remove':
        if (!(last in parent)) throw new Error(`remove of missing ${op.path}`);
        delete parent[last];
        break;
      case 'test':
        if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw new Error(`test failed at ${op.path}`);
        break;
    }
  }
  return root;
}

const asJson = (value: unknown): Json => jsonSchema.parse(JSON.parse(JSON.stringify(value)));
const bare = (spec?: Record<string, unknown>): Node => parseNode(spec === undefined ? node({ spec: undefined }) : node({ spec }));

describe('tiny JSON patch applier (the test oracle)', () => {
  it.each<[string, Json, PatchOps, Json | 'throws']>([
    ['add member', { a: {} }, [{ op: 'add', path: '/a/b', value: 1 }], { a: { b: 1 } }],
    ['add under a missing parent throws', {}, [{ op: 'add', path: '/a/b', value: 1 }], 'throws'],
    ['escaped token', { 'x/y': { '~': 0 } }, [{ op: 'replace', path: '/x~1y/~0', value: 2 }], { 'x/y': { '~': 2 } }],
    ['remove', { a: 1, b: 2 }, [{ op: 'remove', path: '/a' }], { b: 2 }],
    ['failed test', { a: 1 }, [{ op: 'test', path: '/a', value: 2 }], 'throws'],
    ['append to an array', { a: [1] }, [{ op: 'add', path: '/a/-', value: 2 }], { a: [1, 2] }],
    ['replace an array element', { a: [1, 2] }, [{ op: 'replace', path: '/a/1', value: 3 }], { a: [1, 3] }],
    ['replace past the end throws', { a: [1] }, [{ op: 'replace', path: '/a/1', value: 3 }], 'throws'],
  ])('%s', (_name, document, ops, expected) => {
    if (expected === 'throws') expect(() => applyPatch(document, ops)).toThrow();
    else expect(applyPatch(document, ops)).toEqual(expected);
  });
});

describe('podCidrPatch', () => {
  const v4 = '10.244.3.0/24';
  const v6 = 'fd00:10:244:3::/64';
  const provider = 'aws:///eu-west-1a/i-0123456789abcdef0';

  it.each<[string, Node, string[], Record<string, unknown> | undefined, number]>([
    ['no spec', bare(), [v4], { podCIDR: v4, podCIDRs: [v4] }, 3],
    ['empty spec', bare({}), [v4], { podCIDR: v4, podCIDRs: [v4] }, 2],
    ['spec with other fields', bare({ providerID: provider }), [v4], { providerID: provider, podCIDR: v4, podCIDRs: [v4] }, 2],
    ['empty podCIDR and podCIDRs', bare({ podCIDR: '', podCIDRs: [] }), [v4], { podCIDR: v4, podCIDRs: [v4] }, 2],
    ['null podCIDRs', bare({ podCIDRs: null }), [v4], { podCIDR: v4, podCIDRs: [v4] }, 2],
    ['dual stack, order kept', bare({}), [v6, v4], { podCIDR: v6, podCIDRs: [v6, v4] }, 2],
    ['already set (both)', bare({ podCIDR: v4, podCIDRs: [v4] }), ['10.244.9.0/24'], { podCIDR: v4, podCIDRs: [v4] }, 0],
    ['already set (podCIDR only)', bare({ podCIDR: v4 }), ['10.244.9.0/24'], { podCIDR: v4 }, 0],
    ['already set (podCIDRs only)', bare({ podCIDRs: [v4] }), ['10.244.9.0/24'], { podCIDRs: [v4] }, 0],
    ['no CIDRs to give', bare(), [], undefined, 0],
  ])('%s', (_name, target, cidrs, expectedSpec, opCount) => {
    const before = structuredClone(target);
    const ops = podCidrPatch(target, cidrs);
    expect(ops).toHaveLength(opCount);
    const patched = applyPatch(asJson(target), ops);
    expect(nodeSchema().parse(patched).spec).toEqual(expectedSpec);
    expect(patched).toMatchObject({ metadata: { name: NODE_NAME } });
    expect(target).toEqual(before);
  });

  it('adds /spec before anything under it', () => {
    expect(podCidrPatch(bare(), [v4]).map((op) => op.path)).toEqual(['/spec', '/spec/podCIDR', '/spec/podCIDRs']);
  });

  it.each<[string, string[]]>([
    ['not a CIDR', ['10.244.3.0']],
    ['not canonical', ['10.244.3.1/24']],
    ['garbage', ['pods']],
    ['two of one family', [v4, '10.244.4.0/24']],
    ['three CIDRs', [v4, v6, '10.244.4.0/24']],
  ])('rejects %s', (_name, cidrs) => {
    expect(() => podCidrPatch(bare({}), cidrs)).toThrow(InvalidInputError);
  });
});

describe('networkUnavailablePatch', () => {
  const at = '2026-01-01T00:00:05Z';
  const wanted = { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'Node created without a route', lastTransitionTime: at };
  const ready = { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'starting' };
  const stale = { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route', lastTransitionTime: '2025-01-01T00:00:00Z' };

  it.each<[string, Record<string, unknown> | undefined, unknown[]]>([
    ['no status', undefined, [wanted]],
    ['status without conditions', {}, [wanted]],
    ['null conditions', { conditions: null }, [wanted]],
    ['the kubelet\'s conditions kept, ours appended', { conditions: [ready] }, [ready, wanted]],
    ['a NetworkUnavailable the kubelet sent is replaced in place', { conditions: [stale, ready] }, [wanted, ready]],
  ])('%s', (_name, status, conditions) => {
    const target = parseNode(node(status === undefined ? {} : { status }));
    const before = structuredClone(target);
    const patched = applyPatch(asJson(target), networkUnavailablePatch(target, at, routesText('pending')));
    expect(nodeSchema().parse(patched).status?.conditions).toEqual(conditions);
    expect(nodeSchema().parse(patched).spec).toEqual(target.spec);
    expect(target).toEqual(before);
  });

  it('applies after a pod CIDR patch to a node without spec or status', () => {
    const target = bare();
    const patched = applyPatch(asJson(target), [...podCidrPatch(target, ['10.1.2.0/24']), ...networkUnavailablePatch(target, at, routesText('pending'))]);
    expect(nodeSchema().parse(patched)).toMatchObject({ spec: { podCIDR: '10.1.2.0/24' }, status: { conditions: [wanted] } });
  });
});

describe('jsonPointer', () => {
  it.each<[string[], string]>([
    [['spec', 'podCIDR'], '/spec/podCIDR'],
    [['a/b'], '/a~1b'],
    [['~1'], '/~01'],
    [['~/'], '/~0~1'],
    [[''], '/'],
    [[], ''],
  ])('%j -> %s', (tokens, pointer) => {
    expect(jsonPointer(...tokens)).toBe(pointer);
  });
});

describe('admissionResponse', () => {
  const ops: JsonPatchOp[] = [
    { op: 'add', path: '/spec', value: {} },
    { op: 'add', path: '/spec/podCIDR', value: '10.0.0.0/24' },
  ];

  it.each<[string, JsonPatchOp[] | undefined, string[] | undefined, string[] | undefined]>([
    ['no patch, no warnings', undefined, undefined, undefined],
    ['empty patch', [], [], undefined],
    ['patch', ops, undefined, undefined],
    ['patch and warnings (one line each, empty dropped)', ops, ['cluster CIDR is full\nno pod CIDR given', '  '], ['cluster CIDR is full no pod CIDR given']],
    ['warnings only', undefined, ['dry run: nothing allocated'], ['dry run: nothing allocated']],
  ])('%s: always allowed, patch decodes back', (_name, patch, warnings, expectedWarnings) => {
    const answer = admissionResponse('uid-1', patch, warnings);
    expect(answer.apiVersion).toBe('admission.k8s.io/v1');
    expect(answer.kind).toBe('AdmissionReview');
    expect(answer.response.uid).toBe('uid-1');
    expect(answer.response.allowed).toBe(true);
    expect(answer.response.warnings).toEqual(expectedWarnings);
    if (patch && patch.length > 0) {
      expect(answer.response.patchType).toBe('JSONPatch');
      const decoded: unknown = JSON.parse(Buffer.from(answer.response.patch ?? '', 'base64').toString('utf8'));
      expect(decoded).toEqual(patch);
    } else {
      expect(answer.response).not.toHaveProperty('patch');
      expect(answer.response).not.toHaveProperty('patchType');
    }
    // It survives a JSON round trip unchanged (what the handler sends).
    expect(JSON.parse(JSON.stringify(answer))).toEqual(answer);
  });

  it('a patch built for a review applies to the review\'s node', () => {
    const parsed = admissionReviewSchema().parse(review('CREATE', { object: node({ spec: undefined }) }));
    const answer = admissionResponse(parsed.request.uid, podCidrPatch(parsed.request.node, ['10.1.2.0/24']));
    const decoded = patchSchema.parse(JSON.parse(Buffer.from(answer.response.patch ?? '', 'base64').toString('utf8')));
    const patched = applyPatch(asJson(parsed.request.node), decoded);
    expect(nodeSchema().parse(patched).spec).toEqual({ podCIDR: '10.1.2.0/24', podCIDRs: ['10.1.2.0/24'] });
    expect(answer.response.uid).toBe('0f6f2b9e-5d1a-4c47-9b0e-3c1d2e4f5a6b');
  });
});

describe('admissionReviewSchema', () => {
  it.each<[string, Record<string, unknown>, 'CREATE' | 'UPDATE' | 'DELETE', boolean]>([
    ['CREATE', review('CREATE'), 'CREATE', false],
    ['UPDATE (request.node is the updated object)', review('UPDATE'), 'UPDATE', false],
    ['DELETE', review('DELETE'), 'DELETE', false],
    ['dry-run DELETE', review('DELETE', { dryRun: true }), 'DELETE', true],
    ['without dryRun (defaults to false)', review('CREATE', { dryRun: undefined }), 'CREATE', false],
    ['without name (taken from the node)', review('DELETE', { name: undefined }), 'DELETE', false],
  ])('%s: the node of the operation is request.node', (_name, input, operation, dryRun) => {
    const parsed = admissionReviewSchema().parse(input);
    expect(parsed.request.operation).toBe(operation);
    expect(parsed.request.dryRun).toBe(dryRun);
    expect(parsed.request.name).toBe(NODE_NAME);
    expect(parsed.request.node).toEqual(node());
  });
});

describe('isProviderIdJoin: an UPDATE is a join only when it first sets spec.providerID', () => {
  const ID = 'aws:///eu-west-1a/i-0123456789abcdef0';
  const spec = (providerID?: string) => node({ spec: providerID === undefined ? {} : { providerID } });
  // The cloud controller manager's identity (kubeadm's default runs it as this service account).
  const CCM = { username: 'system:serviceaccount:kube-system:cloud-controller-manager', groups: ['system:serviceaccounts', 'system:authenticated'] };
  it.each<[string, string, Record<string, unknown> | null, Record<string, unknown> | null, boolean]>([
    ['unset -> set', 'UPDATE', spec(), spec(ID), true],
    ['empty -> set', 'UPDATE', spec(''), spec(ID), true],
    ['no spec at all -> set', 'UPDATE', node({ spec: undefined }), spec(ID), true],
    ['set -> same (a label change)', 'UPDATE', spec(ID), spec(ID), false],
    ['unset -> unset', 'UPDATE', spec(), spec(), false],
    ['unset -> empty', 'UPDATE', spec(), spec(''), false],
    ['a CREATE with a providerID', 'CREATE', null, spec(ID), false],
    ['a DELETE', 'DELETE', spec(), null, false],
  ])('%s (%s): %s', (_name, operation, oldObject, object, expected) => {
    const parsed = admissionReviewSchema().parse(review(operation, { object, oldObject, userInfo: CCM }));
    expect(isProviderIdJoin(parsed.request)).toBe(expected);
  });

  // A kubelet may set its own Node's providerID (NodeRestriction does not stop it): it could name another node's instance.
  it.each<[string, Record<string, unknown> | undefined]>([
    ['the node\'s own kubelet', { username: `system:node:${NODE_NAME}`, groups: ['system:nodes', 'system:authenticated'] }],
    ['another member of system:nodes', { username: 'someone', groups: ['system:nodes'] }],
    ['no userInfo', undefined],
    ['an empty username', { username: '', groups: [] }],
  ])('an update that first sets the providerID, sent by %s, is not a join', (_name, userInfo) => {
    const parsed = admissionReviewSchema().parse(review('UPDATE', { object: spec(ID), oldObject: spec(), userInfo }));
    expect(isProviderIdJoin(parsed.request)).toBe(false);
  });
});

describe('looksLikeAdmissionReview', () => {
  it.each<[unknown, boolean]>([
    [{ kind: 'AdmissionReview' }, true],
    [{ apiVersion: 'admission.k8s.io/v1beta1' }, true],
    [{ type: 'NodeJoined', nodeName: 'n' }, false],
    [{ kind: 'Node', apiVersion: 'v1' }, false],
    [[{ kind: 'AdmissionReview' }], false],
    [null, false],
    ['AdmissionReview', false],
  ])('%j -> %s', (value, expected) => {
    expect(looksLikeAdmissionReview(value)).toBe(expected);
  });
});

describe('admissionBudgetMs', () => {
  it.each([
    ['5s', 60_000, 4_000],
    ['1s', 60_000, 800],
    ['30s', 60_000, 24_000],
    ['5s', 2_000, 1_600],
    ['45s', 60_000, 24_000],
    ['0s', 60_000, 800],
    [undefined, 60_000, 8_000],
    ['5000ms', 60_000, 8_000],
    ['5s', -10, 0],
  ])('timeout %s with %d ms left: %d ms', (timeout, remainingMs, budget) => {
    expect(admissionBudgetMs(timeout, remainingMs)).toBe(budget);
  });
});
