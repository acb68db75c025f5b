/**
 * Shared validation pieces of the webhook: the Kubernetes node-name rule and the one-line message
 * a 400 answer carries (`request.operation must be CREATE, UPDATE or DELETE`).
 */
import type * as z from '../util/zod-mini.ts';
import { formatPath } from '../util/issue-path.ts';

export { isNodeName } from '../util/kube-names.ts';

export const NODE_NAME_MESSAGE = 'must be a Kubernetes node name';

/**
 * A schema-level error that still says "is required" when the field is missing:
 * `z.string({ error: orRequired('must be a string') })`.
 */
export function orRequired(message: string): (issue: { input?: unknown }) => string {
  return (issue) => (issue.input === undefined ? 'is required' : message);
}

/** The longest 400 message we send; a message never echoes much of what the caller sent. */
const MAX_MESSAGE_LENGTH = 200;

/**
 * Per-parse error map: zod's defaults for the issues our schemas do not word themselves, phrased
 * to follow the field path ("request.uid must be a string").
 */
export const issueWording: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${article(issue.expected)}`;
    case 'unrecognized_keys':
      return `has unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    default:
      return undefined;
  }
};

function article(expected: string): string {
  if (expected === 'array' || expected === 'object') return `an ${expected}`;
  return `a ${expected}`;
}

/**
 * The first issue as one line: `<path> <message>` when the message reads as a predicate
 * ("must …", "is …", "has …"), `<path>: <message>` otherwise. The top level is called "body".
 */
export function describeFirstIssue(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'body is invalid';
  const path = formatPath(issue.path, 'body');
  const message = issue.message.replace(/\s+/g, ' ').trim();
  const line = /^(must|is|has) /.test(message) ? `${path} ${message}` : `${path}: ${message}`;
  return line.length > MAX_MESSAGE_LENGTH ? `${line.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : line;
}
