import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { matchesLabels, parseLabelSelector } from '../../lib/nodes/label-selector.ts';
import { unmanagedReason } from '../../lib/nodes/managed-node.ts';
import { parseNode } from '../../lib/nodes/node.ts';

const LABELS = { 'node.kubernetes.io/instance-type': 'm5.large', 'topology.kubernetes.io/zone': 'us-east-1a', role: 'podroute', empty: '' };

describe('parseLabelSelector + matchesLabels', () => {
  it.each([
    ['', true],
    ['   ', true],
    ['role=podroute', true],
    ['role==podroute', true],
    ['role=other', false],
    ['role!=other', true],
    ['role!=podroute', false],
    ['missing!=x', true], // != also matches an absent key
    ['role', true],
    ['missing', false],
    ['!missing', true],
    ['!role', false],
    ['role in (a, podroute)', true],
    ['role in (a,b)', false],
    ['role notin (a,b)', true],
    ['role notin (podroute)', false],
    ['missing notin (a)', true], // notin also matches an absent key
    ['missing in (a)', false],
    ['empty=', true], // an empty value is a value
    ['node.kubernetes.io/instance-type in (m5.large,m5.xlarge),topology.kubernetes.io/zone=us-east-1a', true],
    ['role=podroute, topology.kubernetes.io/zone=us-east-1b', false],
    ['role=podroute,!eks.amazonaws.com/compute-type', true],
  ])('%j matches the labels: %s', (text, want) => {
    expect(matchesLabels(parseLabelSelector(text), LABELS)).toBe(want);
  });

  it('an empty selector matches a node without labels; any requirement but !k / notin / != does not', () => {
    expect(matchesLabels(parseLabelSelector(''), undefined)).toBe(true);
    expect(matchesLabels(parseLabelSelector('!a'), undefined)).toBe(true);
    expect(matchesLabels(parseLabelSelector('a'), null)).toBe(false);
  });

  it.each([
    ['role=', 'role', 'in', ['']],
    ['a in (x, y, x)', 'a', 'in', ['x', 'y']],
    ['a!=b', 'a', 'notin', ['b']],
  ])('%j parses to one requirement', (text, key, op, values) => {
    expect(parseLabelSelector(text).requirements).toEqual([{ key, op, values }]);
  });

  it.each([
    ['role in ()', "'in' needs at least one value"],
    ['role notin ( )', "'notin' needs at least one value"],
    ['role=a,', 'empty requirement'],
    [',role', 'empty requirement'],
    ['role in (a', 'unbalanced parentheses'],
    ['role in (a))', 'unbalanced parentheses'],
    ['-role=x', 'is not a valid label name'],
    ['Example.COM/role=x', 'has an invalid prefix'],
    ['/role', 'has an invalid prefix'],
    [`role=${'v'.repeat(64)}`, 'is not a valid label value'],
    [`${'k'.repeat(64)}=v`, 'is not a valid label name'],
    ['role=a=b', 'is not a valid label value'],
    ['role > 5', 'cannot read'],
    ['role in (a) b', 'cannot read'],
    ['a b', 'cannot read'],
  ])('%j is refused: %s', (text, message) => {
    const call = () => parseLabelSelector(text);
    expect(call).toThrow(expect.objectContaining({ name: 'LabelSelectorError' }));
    expect(call).toThrow(InvalidInputError);
    expect(call).toThrow(message);
  });
});

const nodeWith = (providerID: string | undefined, labels?: Record<string, string>) =>
  parseNode({ metadata: { name: 'n', ...(labels ? { labels } : {}) }, spec: providerID === undefined ? {} : { providerID } });

describe('unmanagedReason', () => {
  const selector = parseLabelSelector('podroute.example.com/managed=true');
  const mine = { 'podroute.example.com/managed': 'true' };
  it.each([
    ['an EC2 node', 'aws:///us-east-1a/i-0123456789abcdef0', undefined, undefined, null],
    ['an EC2 node, old 8-digit id', 'aws:///us-east-1a/i-01234567', undefined, undefined, null],
    ['an EC2 node without zone', 'aws:////i-0123456789abcdef0', undefined, undefined, null],
    [
      'an EKS Fargate node',
      'aws:///us-east-1a/120328e333-369fe1b7ba8b4416ab87216be91dc4f1/fargate-ip-192-168-1-5.ec2.internal',
      undefined,
      undefined,
      'not-an-ec2-instance',
    ],
    ['a GCE node', 'gce://project/us-central1-a/vm-1', undefined, undefined, 'not-an-ec2-instance'],
    ['a providerID that is not an instance id', 'aws:///us-east-1a/', undefined, undefined, 'not-an-ec2-instance'],
    ['no providerID yet', undefined, undefined, undefined, 'no-provider-id'],
    ['an empty providerID', '', undefined, undefined, 'no-provider-id'],
    ['an EC2 node inside the selector', 'aws:///us-east-1a/i-0123456789abcdef0', mine, selector, null],
    ['an EC2 node outside the selector', 'aws:///us-east-1a/i-0123456789abcdef0', { other: 'x' }, selector, 'outside-node-selector'],
    ['an EC2 node without labels and a selector', 'aws:///us-east-1a/i-0123456789abcdef0', undefined, selector, 'outside-node-selector'],
    ['a Fargate node inside the selector', 'aws:///us-east-1a/abc/fargate-ip-10-0-0-1.ec2.internal', mine, selector, 'not-an-ec2-instance'],
    ['an empty selector', 'aws:///us-east-1a/i-0123456789abcdef0', undefined, parseLabelSelector(''), null],
  ])('%s -> %s', (_name, providerID, labels, sel, want) => {
    expect(unmanagedReason(nodeWith(providerID, labels), sel)).toBe(want);
  });
});

describe('NODE_SELECTOR in the config', () => {
  const base = { CLUSTER_NAME: 'demo', CLUSTER_CIDRS: '10.244.0.0/16' };
  it('is parsed at cold start; empty or unset selects every node', () => {
    expect(loadConfig(base).nodeSelector.requirements).toEqual([]);
    expect(loadConfig({ ...base, NODE_SELECTOR: '' }).nodeSelector.requirements).toEqual([]);
    expect(loadConfig({ ...base, NODE_SELECTOR: 'role in (podroute),!eks.amazonaws.com/compute-type' }).nodeSelector.requirements).toEqual([
      { key: 'role', op: 'in', values: ['podroute'] },
      { key: 'eks.amazonaws.com/compute-type', op: 'not-exists' },
    ]);
  });
  it('a bad selector is one clear configuration error', () => {
    const call = () => loadConfig({ ...base, NODE_SELECTOR: 'role in ()' });
    expect(call).toThrow(InvalidInputError);
    expect(call).toThrow(/^invalid podroute configuration: NODE_SELECTOR: invalid label selector "role in \(\)": 'in' needs at least one value$/);
  });
});
