/**
 * A webhook's `matchConditions` (admissionregistration.k8s.io/v1, GA in Kubernetes 1.30), as the API
 * server applies them, for the subset of CEL podroute's manifest uses: the variables `object`,
 * `oldObject` and `request`, field selection, `has()`, `==` / `!=` against string literals, `!`,
 * `&&`, `||` and parentheses. Anything else is refused when the emulator starts, as the API server
 * refuses an expression it cannot compile when the configuration is written.
 *
 * Semantics followed (Kubernetes API reference, MatchCondition and ValidatingWebhook.matchConditions;
 * CEL language definition):
 * - `object` is null for DELETE, `oldObject` null for CREATE; selecting a field of null or a missing
 *   key is an error; `has(a.b)` is false when `a` lacks the key `b` and an error when `a` itself
 *   cannot be evaluated;
 * - `&&` and `||` are commutative over errors: `false && error` is false, `true || error` is true,
 *   otherwise an error wins;
 * - `==` between values of different types is false (a null is not an empty string);
 * - the result must be a bool: anything else is an error;
 * - the webhook is skipped when any condition is false; called when all are true; when one errs
 *   (none false), skipped under failurePolicy Ignore, the request refused under Fail.
 */
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import type { Json, JsonObject } from './patch.ts';
import { isObject } from './patch.ts';

export type MatchCondition = { name: string; expression: string };

type Expr =
  | { kind: 'var'; name: 'object' | 'oldObject' | 'request' }
  | { kind: 'select'; of: Expr; field: string }
  | { kind: 'has'; of: Expr; field: string }
  | { kind: 'string'; value: string }
  | { kind: 'not'; of: Expr }
  | { kind: 'and' | 'or'; left: Expr; right: Expr }
  | { kind: 'eq' | 'ne'; left: Expr; right: Expr };

/** An expression the subset cannot compile: the emulator refuses its configuration. */
export class UnsupportedCelError extends Error {
  override name = 'UnsupportedCelError';
}

const VARIABLES = new Set(['object', 'oldObject', 'request']);
const TOKEN = /\s*(?:(\|\||&&|==|!=|!|\(|\)|\.)|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*))/y;

type Token = { text: string; kind: 'op' | 'string' | 'ident'; at: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    if (/^\s*$/.test(source.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(source);
    if (!m) throw new UnsupportedCelError(`unsupported CEL at offset ${at}: ${JSON.stringify(source.slice(at, at + 20))}`);
    const [, op, single, double, ident] = m;
    if (op !== undefined) tokens.push({ text: op, kind: 'op', at });
    else if (ident !== undefined) tokens.push({ text: ident, kind: 'ident', at });
    else {
      const raw = single ?? double ?? '';
      if (raw.includes('\\')) throw new UnsupportedCelError(`unsupported CEL at offset ${at}: escapes in string literals`);
      tokens.push({ text: raw, kind: 'string', at });
    }
  }
  return tokens;
}

/** Compiles `source` in the supported subset; throws UnsupportedCelError for anything else. */
export function compileCondition(source: string): Expr {
  const tokens = tokenize(source);
  let i = 0;
  const peek = () => tokens[i];
  const fail = (what: string): never => {
    const token = peek();
    throw new UnsupportedCelError(`unsupported CEL ${what} at offset ${token?.at ?? source.length}${token ? ` (${JSON.stringify(token.text)})` : ''}`);
  };
  const take = (text: string) => {
    if (peek()?.text !== text || peek()?.kind === 'string') fail(`: expected ${JSON.stringify(text)}`);
    i += 1;
  };
  const selection = (): Expr => {
    const head = peek();
    if (head?.kind !== 'ident' || !VARIABLES.has(head.text)) return fail(': expected object, oldObject or request');
    i += 1;
    let expr: Expr = { kind: 'var', name: head.text as 'object' | 'oldObject' | 'request' };
    while (peek()?.text === '.' && peek()?.kind === 'op') {
      i += 1;
      const field = peek();
      if (field?.kind !== 'ident') return fail(': expected a field name');
      i += 1;
      expr = { kind: 'select', of: expr, field: field.text };
    }
    return expr;
  };
  const operand = (): Expr => {
    const token = peek();
    if (token?.kind === 'string') {
      i += 1;
      return { kind: 'string', value: token.text };
    }
    if (token?.kind === 'ident' && token.text === 'has') {
      i += 1;
      take('(');
      const inner = selection();
      take(')');
      if (inner.kind !== 'select') return fail(': has() needs a field selection');
      return { kind: 'has', of: inner.of, field: inner.field };
    }
    if (token?.kind === 'op' && token.text === '(') {
      i += 1;
      const inner = or();
      take(')');
      return inner;
    }
    return selection();
  };
  const comparison = (): Expr => {
    const left = operand();
    const op = peek();
    if (op?.kind === 'op' && (op.text === '==' || op.text === '!=')) {
      i += 1;
      const right = operand();
      if (left.kind !== 'string' && right.kind !== 'string') return fail(': == and != compare with a string literal only');
      return { kind: op.text === '==' ? 'eq' : 'ne', left, right };
    }
    return left;
  };
  const atOp = (text: string): boolean => peek()?.kind === 'op' && peek()?.text === text;
  const unary = (): Expr => {
    if (atOp('!')) {
      i += 1;
      return { kind: 'not', of: unary() };
    }
    return comparison();
  };
  // A left-associative chain of one operator over the next tighter level.
  const chain = (kind: 'and' | 'or', text: string, next: () => Expr) => (): Expr => {
    let left = next();
    while (atOp(text)) {
      i += 1;
      left = { kind, left, right: next() };
    }
    return left;
  };
  const or = chain('or', '||', chain('and', '&&', unary));
  const expr = or();
  if (i < tokens.length) fail('');
  return expr;
}

/** An evaluation error (CEL's `no such key`, a null dereference, a type mismatch). */
const ERROR = Symbol('cel-error');
type Value = Json | typeof ERROR;
type Vars = { object: Json; oldObject: Json; request: Json };

function field(of: Value, name: string): Value {
  if (of === ERROR || !isObject(of) || !Object.hasOwn(of, name)) return ERROR;
  return (of as JsonObject)[name] ?? null;
}

function evaluate(expr: Expr, vars: Vars): Value {
  switch (expr.kind) {
    case 'var':
      return vars[expr.name];
    case 'string':
      return expr.value;
    case 'select':
      return field(evaluate(expr.of, vars), expr.field);
    case 'has': {
      const of = evaluate(expr.of, vars);
      if (of === ERROR || !isObject(of)) return ERROR;
      return Object.hasOwn(of, expr.field);
    }
    case 'not': {
      const of = evaluate(expr.of, vars);
      return typeof of === 'boolean' ? !of : ERROR;
    }
    case 'eq':
    case 'ne': {
      const left = evaluate(expr.left, vars);
      const right = evaluate(expr.right, vars);
      if (left === ERROR || right === ERROR) return ERROR;
      // One side is a string literal (compile time): equal only to the same string.
      const equal = left === right;
      return expr.kind === 'eq' ? equal : !equal;
    }
    case 'and':
    case 'or': {
      const absorbing = expr.kind === 'or';
      const left = evaluate(expr.left, vars);
      const right = evaluate(expr.right, vars);
      if (left === absorbing || right === absorbing) return absorbing;
      if (typeof left !== 'boolean' || typeof right !== 'boolean') return ERROR;
      return !absorbing;
    }
  }
}

export type MatchOutcome = { call: true } | { call: false; reason: 'false'; condition: string } | { call: false; reason: 'error'; condition: string };

export type CompiledConditions = (vars: Vars) => MatchOutcome;

/**
 * Compiles a webhook's conditions once; the result answers per request whether the webhook is
 * called (failurePolicy Ignore: an error skips it). Throws UnsupportedCelError naming the condition.
 */
export function compileMatchConditions(conditions: readonly MatchCondition[]): CompiledConditions {
  const compiled = conditions.map((condition, index) => {
    try {
      return { name: condition.name, expr: compileCondition(condition.expression) };
    } catch (error) {
      throw new UnsupportedCelError(`matchConditions[${index}] (${condition.name}): ${(error as Error).message}`, { cause: error });
    }
  });
  return (vars) => {
    const results = compiled.map(({ name, expr }) => ({ name, value: evaluate(expr, vars) }));
    const falsy = results.find((r) => r.value === false);
    if (falsy) return { call: false, reason: 'false', condition: falsy.name };
    const failed = results.find((r) => r.value !== true);
    if (failed) return { call: false, reason: 'error', condition: failed.name };
    return { call: true };
  };
}

const WEBHOOK_YAML = new URL('../../kubernetes/webhook.yaml', import.meta.url);

/** The matchConditions of webhook `name` in infra/kubernetes/webhook.yaml, so the emulator runs the deployed ones. */
export function manifestMatchConditions(name: string): MatchCondition[] {
  const manifest: unknown = load(readFileSync(WEBHOOK_YAML, 'utf8'));
  const webhooks: unknown = isObject(manifest) ? manifest.webhooks : undefined;
  const hook = Array.isArray(webhooks) ? webhooks.find((w: unknown) => isObject(w) && w.name === name) : undefined;
  if (!isObject(hook)) throw new Error(`infra/kubernetes/webhook.yaml has no webhook ${name}`);
  const conditions = hook.matchConditions ?? [];
  if (!Array.isArray(conditions)) throw new Error(`webhook ${name}: matchConditions is not a list`);
  return conditions.map((c, i) => {
    if (!isObject(c) || typeof c.name !== 'string' || typeof c.expression !== 'string') throw new Error(`webhook ${name}: matchConditions[${i}] needs a name and an expression`);
    return { name: c.name, expression: c.expression };
  });
}
