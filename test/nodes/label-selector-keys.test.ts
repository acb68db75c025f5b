import { describe, expect, it } from 'vitest';
import { matchesLabels, parseLabelSelector, selectorKeys } from '../../lib/nodes/label-selector.ts';

describe('selectorKeys', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['role=pods', ['role']],
    ['role=pods,zone!=a,!spot,team in (x,y),env notin (dev),gpu', ['role', 'zone', 'spot', 'team', 'env', 'gpu']],
    ['role=pods,role!=other', ['role']],
  ])('of %j: %j', (text, keys) => {
    expect(selectorKeys(parseLabelSelector(text))).toEqual(keys);
  });

  it('names every label a match depends on: dropping the others changes no answer', () => {
    const selector = parseLabelSelector('role=pods,!spot,team in (x,y)');
    const keys = new Set(selectorKeys(selector));
    const labelSets: Record<string, string>[] = [{ role: 'pods', team: 'x', other: '1' }, { role: 'pods', team: 'x', spot: 'true' }, { role: 'web', team: 'y' }, { other: 'only' }];
    for (const labels of labelSets) {
      const kept = Object.fromEntries(Object.entries(labels).filter(([key]) => keys.has(key)));
      expect(matchesLabels(selector, kept)).toBe(matchesLabels(selector, labels));
    }
  });
});
