/**
 * Kubernetes label selectors in their string form (what `kubectl get nodes -l ...` takes), parsed
 * once and matched against a node's labels. Pure. Grammar and meaning follow
 * k8s.io/apimachinery/pkg/labels/selector.go (`Parse`) and the Kubernetes docs "Labels and Selectors".
 */
import { InvalidInputError } from '../errors.ts';
import { isDns1123Subdomain } from '../util/kube-names.ts';

type LabelRequirement =
  | { key: string; op: 'exists' | 'not-exists' }
  | { key: string; op: 'in' | 'notin'; values: readonly string[] };

export interface LabelSelector {
  /** The selector as given, trimmed (empty = every node). */
  readonly text: string;
  readonly requirements: readonly LabelRequirement[];
}

/** A selector that matches everything. */
const EVERYTHING: LabelSelector = { text: '', requirements: [] };

class LabelSelectorError extends InvalidInputError {
  override name = 'LabelSelectorError';
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function checkKey(key: string, text: string): void {
  const slash = key.indexOf('/');
  const prefix = slash === -1 ? null : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  const bad = (why: string) => new LabelSelectorError(`invalid label selector ${JSON.stringify(text)}: key ${JSON.stringify(key)} ${why}`);
  if (prefix !== null && !isDns1123Subdomain(prefix)) throw bad('has an invalid prefix (want a DNS subdomain)');
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) throw bad('is not a valid label name (at most 63 of A-Z a-z 0-9 - _ ., alphanumeric at both ends)');
}

function checkValue(value: string, text: string): void {
  if (value === '') return;
  if (value.length > 63 || !NAME.test(value)) {
    throw new LabelSelectorError(`invalid label selector ${JSON.stringify(text)}: value ${JSON.stringify(value)} is not a valid label value`);
  }
}

/** Splits at commas outside parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) throw new LabelSelectorError(`invalid label selector ${JSON.stringify(text)}: unbalanced parentheses`);
  }
  if (depth !== 0) throw new LabelSelectorError(`invalid label selector ${JSON.stringify(text)}: unbalanced parentheses`);
  parts.push(text.slice(start));
  return parts;
}

const SET = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/;

/** Parses a selector; throws LabelSelectorError (an InvalidInputError) naming the problem. */
/**
 * Requirements are comma-separated and ANDed (empty matches all): `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
 * `k notin (a,b)` (`!=` and `notin` also match when `k` is absent), `k`, `!k`. Keys are qualified
 * names and values label values (apimachinery validation.IsQualifiedName / IsValidLabelValue).
 * Node affinity's `gt`/`lt` are not part of this syntax and are refused.
 */
export function parseLabelSelector(input: string): LabelSelector {
  const text = input.trim();
  if (text === '') return EVERYTHING;
  const requirements: LabelRequirement[] = [];
  for (const raw of splitTop(text)) {
    const part = raw.trim();
    if (part === '') throw new LabelSelectorError(`invalid label selector ${JSON.stringify(text)}: empty requirement (a stray comma?)`);
    const set = SET.exec(part);
    if (set) {
      const [, key = '', op = 'in', list = ''] = set;
      checkKey(key, text);
      const values = list.split(',').map((v) => v.trim());
      if (list.trim() === '') throw new LabelSelectorError(`invalid label selector ${JSON.stringify(text)}: '${op}' needs at least one value`);
      for (const value of values) checkValue(value, text);
      requirements.push({ key, op: op === 'in' ? 'in' : 'notin', values: [...new Set(values)] });
      continue;
    }
    const equality = EQUALITY.exec(part);
    if (equality) {
      const [, key = '', op = '=', value = ''] = equality;
      checkKey(key, text);
      checkValue(value, text);
      requirements.push({ key, op: op === '!=' ? 'notin' : 'in', values: [value] });
      continue;
    }
    if (part.startsWith('!')) {
      const key = part.slice(1).trim();
      checkKey(key, text);
      requirements.push({ key, op: 'not-exists' });
      continue;
    }
    if (/^\S+$/.test(part) && !/[<>()=!]/.test(part)) {
      checkKey(part, text);
      requirements.push({ key: part, op: 'exists' });
      continue;
    }
    throw new LabelSelectorError(
      `invalid label selector ${JSON.stringify(text)}: cannot read ${JSON.stringify(part)} (want k=v, k==v, k!=v, k, !k, k in (a,b) or k notin (a,b))`,
    );
  }
  return { text, requirements };
}

/** The label keys the selector reads: the only labels of a node its match depends on. */
export function selectorKeys(selector: LabelSelector): string[] {
  return [...new Set(selector.requirements.map((requirement) => requirement.key))];
}

/** True when the labels satisfy every requirement. */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | null | undefined): boolean {
  const has = (key: string) => labels != null && Object.hasOwn(labels, key);
  return selector.requirements.every((requirement) => {
    switch (requirement.op) {
      case 'exists':
        return has(requirement.key);
      case 'not-exists':
        return !has(requirement.key);
      case 'in':
        return has(requirement.key) && requirement.values.includes(labels?.[requirement.key] ?? '');
      case 'notin':
        return !has(requirement.key) || !requirement.values.includes(labels?.[requirement.key] ?? '');
    }
  });
}
