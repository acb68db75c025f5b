/**
 * Field errors and the 422 Invalid answer built from them, worded as the API server words them
 * (k8s.io/apimachinery pkg/util/validation/field `Error.Error()` / `ErrorBody()`, and
 * apimachinery pkg/api/errors `NewInvalid`): one error reads `<field>: <body>`, several read
 * `[<e1>, <e2>]`, and each is a cause `{reason, message: <body>, field}`.
 */
import { ApiError } from './api-error.ts';
import type { Json } from './patch.ts';

export type FieldError = { type: 'Invalid' | 'Forbidden' | 'Required'; field: string; detail: string; value?: Json };

const CAUSE_REASON = { Invalid: 'FieldValueInvalid', Forbidden: 'FieldValueForbidden', Required: 'FieldValueRequired' } as const;

/** A value as Go's `%#v` prints it: `"x"` for a string, `[]string{"a", "b"}` for a list of strings. */
function goValue(value: Json | undefined): string {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}`;
  return JSON.stringify(value ?? '');
}

function bodyOf(error: FieldError): string {
  if (error.type === 'Invalid') return `Invalid value: ${goValue(error.value)}${error.detail ? `: ${error.detail}` : ''}`;
  if (error.type === 'Forbidden') return `Forbidden${error.detail ? `: ${error.detail}` : ''}`;
  return `Required value${error.detail ? `: ${error.detail}` : ''}`;
}

export const invalidValue = (field: string, value: Json | undefined, detail: string): FieldError => ({ type: 'Invalid', field, value: value ?? '', detail });
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });
export const required = (field: string): FieldError => ({ type: 'Required', field, detail: '' });

/** 422 Invalid for `kind` "name" with these errors (none: no error to throw). */
export function invalidObject(kind: string, name: string, errors: readonly FieldError[]): ApiError {
  const parts = errors.map((e) => `${e.field}: ${bodyOf(e)}`);
  const summary = parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
    name,
    kind,
    causes: errors.map((e) => ({ reason: CAUSE_REASON[e.type], message: bodyOf(e), field: e.field })),
  });
}

/** Throws the 422 when there is any error. */
export function throwIfInvalid(kind: string, name: string, errors: readonly FieldError[]): void {
  if (errors.length > 0) throw invalidObject(kind, name, errors);
}
