import { describe, expect, it } from 'vitest';
import { formatPath } from '../../lib/util/issue-path.ts';
import { isNodeName } from '../../lib/util/kube-names.ts';

describe('isNodeName (Kubernetes IsDNS1123Subdomain)', () => {
  const label = 'a'.repeat(63);
  it.each<[unknown, boolean]>([
    ['ip-10-0-1-23.ec2.internal', true],
    ['node1', true],
    ['1node', true],
    [[label, label, label, 'a'.repeat(61)].join('.'), true], // 253 characters
    [[label, label, label, 'a'.repeat(62)].join('.'), false], // 254 characters
    ['Node1', false],
    ['-node', false],
    ['node-', false],
    ['a..b', false],
    ['', false],
    ['node_1', false],
    [42, false],
  ])('%j -> %s', (value, ok) => {
    expect(isNodeName(value)).toBe(ok);
  });
});

describe('formatPath', () => {
  it.each<[PropertyKey[], string]>([
    [[], 'body'],
    [['request'], 'request'],
    [['RouteTables', 0, 'Routes', 2, 'State'], 'RouteTables[0].Routes[2].State'],
    [[3, 'x'], '[3].x'],
  ])('%j -> %s', (path, text) => {
    expect(formatPath(path, 'body')).toBe(text);
  });
});
