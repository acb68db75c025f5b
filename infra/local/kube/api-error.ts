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
    /** Response headers of the answer (Retry-After of a 429). */
    readonly headers?: Record<string, string>,
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
    code: error.code,
  };
  if (error.reason !== '') status.reason = error.reason;
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
/** The AlreadyExists answer of a CREATE whose object exists (apimachinery errors `NewAlreadyExists`). */
export const alreadyExists = (resource: string, name: string) =>
  new ApiError(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });

/**
 * An admission webhook's refusal as the API server answers it (k8s.io/apiserver
 * admission/plugin/webhook/errors `ToStatusErr`): the webhook's own Status, with its code (400
 * when it gave none or one below 400), its reason and details only when it gave them, and the
 * message `admission webhook "<webhook>" denied the request: <message or reason>` (or `... denied
 * the request without explanation`).
 */
export function webhookDenied(webhook: string, status: { code?: number; reason?: string; message?: string; details?: JsonObject }): ApiError {
  const code = status.code !== undefined && status.code >= 400 ? status.code : 400;
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const message = status.message ? `${deniedBy}: ${status.message}` : status.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  return new ApiError(code, status.reason ?? '', message, status.details);
}
