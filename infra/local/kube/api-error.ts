/** API errors as the Kubernetes API server answers them: a `Status` object with code and reason. */
import type { StatusObject } from './types.ts';
import type { JsonObject } from './patch.ts';

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: JsonObject,
    readonly listMeta?: JsonObject,
  ) {
    super(message);
  }
}

export const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function statusOf(error: ApiError): StatusObject {
  const status: StatusObject = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: error.listMeta ?? {},
    status: 'Failure',
    message: error.message,
    reason: error.reason,
    code: error.code,
  };
  if (error.details) status.details = error.details;
  return status;
}

export const notFound = (name: string) =>
  new ApiError(404, 'NotFound', `nodes "${name}" not found`, { name, kind: 'nodes' });
export const conflict = (name: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on nodes "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, kind: 'nodes' },
  );
export const invalid = (name: string, field: string, message: string) =>
  new ApiError(422, 'Invalid', `Node "${name}" is invalid: ${field}: ${message}`, {
    name,
    kind: 'Node',
    causes: [{ reason: 'FieldValueInvalid', message, field }],
  });

/**
 * A validating admission webhook's refusal as the API server answers it
 * (k8s.io/apiserver admission/plugin/webhook/errors `ToStatusErr`): code 403 unless the webhook set
 * one, reason Forbidden, message `<resource> "<name>" is forbidden: admission webhook "<webhook>"
 * denied the request: <message>`, details {group, kind: the resource, name}.
 */
export function webhookDenied(name: string, webhook: string, status: { code?: number; reason?: string; message?: string }): ApiError {
  const code = status.code !== undefined && status.code !== 0 ? status.code : 403;
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const why = status.message ? `${deniedBy}: ${status.message}` : status.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  const prefix = code === 500 ? 'Internal error occurred' : `nodes "${name}" is forbidden`;
  const reason = status.reason ?? (code === 500 ? 'InternalError' : 'Forbidden');
  return new ApiError(code, reason, `${prefix}: ${why}`, { group: '', kind: 'nodes', name });
}
