/**
 * The emulator's matchConditions evaluator (infra/local/kube/match-conditions.ts) on the deployed
 * expression and on CEL's rules for errors: a missing key or a null object is an error, `&&` / `||`
 * absorb an error when the other side decides, an error skips the webhook (failurePolicy Ignore).
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../infra/local/kube/patch.ts';
import { compileMatchConditions, manifestMatchConditions } from '../../infra/local/kube/match-conditions.ts';

const deployed = compileMatchConditions(manifestMatchConditions('node-provider-id.podroute.io'));
const nodeWith = (spec: Record<string, Json>): Json => ({ metadata: { name: 'n' }, spec });
const ID = 'aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1';

describe('the deployed node-provider-id condition', () => {
  it.each<[string, Json, Json, ReturnType<typeof deployed>]>([
    ['providerID first set', nodeWith({}), nodeWith({ providerID: ID }), { call: true }],
    ['from an empty string to set', nodeWith({ providerID: '' }), nodeWith({ providerID: ID }), { call: true }],
    ['already set, unchanged', nodeWith({ providerID: ID }), nodeWith({ providerID: ID }), { call: false, reason: 'false', condition: 'provider-id-or-pod-cidr-first-set' }],
    ['still unset', nodeWith({}), nodeWith({ unschedulable: true }), { call: false, reason: 'false', condition: 'provider-id-or-pod-cidr-first-set' }],
    ['podCIDR first set on a joined node', nodeWith({ providerID: ID }), nodeWith({ providerID: ID, podCIDR: '100.64.0.0/24', podCIDRs: ['100.64.0.0/24'] }), { call: true }],
    ['podCIDR already set, unchanged', nodeWith({ providerID: ID, podCIDR: '100.64.0.0/24' }), nodeWith({ providerID: ID, podCIDR: '100.64.0.0/24', unschedulable: true }), { call: false, reason: 'false', condition: 'provider-id-or-pod-cidr-first-set' }],
    ['set to an empty string', nodeWith({}), nodeWith({ providerID: '' }), { call: false, reason: 'false', condition: 'provider-id-or-pod-cidr-first-set' }],
    // A CREATE (oldObject null) or DELETE (object null) cannot evaluate the fields: an error, so skipped.
    ['no oldObject', null, nodeWith({ providerID: ID }), { call: false, reason: 'error', condition: 'provider-id-or-pod-cidr-first-set' }],
    ['no spec in the new object', nodeWith({}), { metadata: { name: 'n' } }, { call: false, reason: 'error', condition: 'provider-id-or-pod-cidr-first-set' }],
  ])('%s', (_name, oldObject, object, expected) => {
    expect(deployed({ object, oldObject, request: { operation: 'UPDATE' } })).toEqual(expected);
  });
});

describe('CEL error absorption', () => {
  const one = (expression: string) => compileMatchConditions([{ name: 'c', expression }]);
  const vars = { object: null, oldObject: { spec: {} }, request: { operation: 'UPDATE' } };
  it.each<[string, boolean | 'error']>([
    ["request.operation == 'UPDATE' || object.spec.x == ''", true],
    ["object.spec.x == '' || request.operation == 'UPDATE'", true],
    ["request.operation != 'UPDATE' && object.spec.x == ''", false],
    ["object.spec.x == '' && request.operation != 'UPDATE'", false],
    ["request.operation == 'UPDATE' && object.spec.x == ''", 'error'],
    ["has(oldObject.spec.x)", false],
    ["has(object.spec.x)", 'error'],
    ["!(request.operation == 'CREATE')", true],
    ['request.operation', 'error'],
  ])('%s -> %s', (expression, expected) => {
    const outcome = one(expression)(vars);
    const value = outcome.call ? true : outcome.reason === 'false' ? false : 'error';
    expect(value).toBe(expected);
  });
});
