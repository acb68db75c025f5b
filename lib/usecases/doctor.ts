/**
 * `podroute doctor`: a read-only preflight of an account and cluster, before (or after) deploying.
 * Gathers through ports, decides each check with pure code, returns one result per check; the CLI
 * prints them (`ok|FAIL|warn  <check>: <detail>`) and exits 1 when any failed. Nothing is written.
 *
 * Checks of every mode:
 * - nodes' pod CIDRs against the cluster CIDRs and the configured node mask;
 * - which nodes podroute manages and which it leaves alone;
 * - the Kubernetes permissions the functions use, asked for podroute's identity (its user and
 *   groups, SubjectAccessReview), not for whoever runs the doctor;
 * - a mutating admission webhook registered for node CREATE and DELETE;
 * - the stack's queue and CIDR table exist.
 * The data plane's own checks (route tables and quota, or subnets and reservations) come from the
 * plane chosen (doctor-checks.ts in lib/dataplane/routes and lib/dataplane/prefixes).
 */
import { errorText } from '../errors.ts';
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import { podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import { fail, gather, ok, warn } from './doctor-check.ts';
import type { CheckResult, PlaneDoctorChecks } from './doctor-check.ts';
import type { NodeSource, AccessQuestion, WebhookRegistration, AccessSubject, ClusterAccess, StackResources } from './ports.ts';

export type { CheckResult } from './doctor-check.ts';

/**
 * The Kubernetes calls podroute makes (lib/kube/kube-nodes.ts): list/get/patch nodes, patch
 * nodes/status, create events in the event namespace and get/patch them (a repeated warning adds
 * to its Event's count, lib/kube/kube-events.ts).
 */
function requiredPermissions(eventNamespace = 'default'): AccessQuestion[] {
  return [
    { verb: 'list', group: '', resource: 'nodes' },
    { verb: 'get', group: '', resource: 'nodes' },
    { verb: 'patch', group: '', resource: 'nodes' },
    { verb: 'patch', group: '', resource: 'nodes', subresource: 'status' },
    { verb: 'create', group: '', resource: 'events', namespace: eventNamespace },
    { verb: 'get', group: '', resource: 'events', namespace: eventNamespace },
    { verb: 'patch', group: '', resource: 'events', namespace: eventNamespace },
  ];
}

type DoctorConfig = Pick<Config, 'clusterCidrs' | 'nodeMaskSize' | 'queueUrl' | 'cidrTableName'> &
  Partial<Pick<Config, 'nodeSelector'>>;

interface DoctorDeps {
  config: DoctorConfig;
  /** The chosen data plane's own checks. */
  plane: PlaneDoctorChecks;
  nodes: Pick<NodeSource, 'listNodes'>;
  access: ClusterAccess;
  /** podroute's identity in the cluster (infra/kubernetes/rbac.yaml binds group `podroute`). */
  subject: AccessSubject;
  stack: StackResources;
}

export async function doctor(deps: DoctorDeps): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const { config } = deps;

  const nodes = await gather('nodes', results, () => deps.nodes.listNodes());
  let managed: Node[] | null = null;
  if (nodes) {
    managed = nodes.filter((node) => unmanagedReason(node, config.nodeSelector) === null);
    results.push(checkNodes(nodes, managed, config));
    results.push(checkPodCidrs(nodes, config));
  }
  results.push(...(await deps.plane(managed)));
  results.push(...(await checkPermissions(deps.access, deps.subject)));

  try {
    results.push(checkWebhook(await deps.access.mutatingWebhooks()));
  } catch (error) {
    results.push(fail('admission webhook', `cannot list MutatingWebhookConfigurations: ${errorText(error)}`));
  }

  results.push(await checkStack('queue', config.queueUrl, '--queue-url', (url) => deps.stack.queue(url)));
  results.push(await checkStack('cidr table', config.cidrTableName, '--cidr-table-name', (name) => deps.stack.table(name)));
  return results;
}

/** Formats one result as the CLI prints it. */
export function formatCheck(result: CheckResult): string {
  return `${result.status.padEnd(4)}  ${result.check}: ${result.detail}`;
}

// --- checks (pure) ------------------------------------------------------------------------------

function checkPodCidrs(nodes: Node[], config: DoctorConfig): CheckResult {
  const clusters = config.clusterCidrs.map((text) => tryParseCidr(text)).filter((c) => c !== null);
  const problems: string[] = [];
  let count = 0;
  for (const node of nodes) {
    for (const text of podCidrsOf(node)) {
      count += 1;
      const cidr = tryParseCidr(text);
      if (!cidr) {
        problems.push(`${node.metadata.name} has an invalid pod CIDR ${JSON.stringify(text)}`);
        continue;
      }
      const cluster = clusters.find((c) => c.family === cidr.family);
      const mask = config.nodeMaskSize[cidr.family];
      if (!cluster || !containsCidr(cluster, cidr)) problems.push(`${node.metadata.name} ${formatCidr(cidr)} is outside the cluster CIDRs`);
      else if (cidr.prefix !== mask) problems.push(`${node.metadata.name} ${formatCidr(cidr)} is a /${cidr.prefix}, configured mask is /${mask}`);
    }
  }
  const wanted = clusters.map((c) => `/${config.nodeMaskSize[c.family]} in ${formatCidr(c)}`).join(', ');
  if (problems.length > 0) {
    const shown = problems.slice(0, 5).join('; ');
    return fail('pod CIDRs', `${problems.length} of ${count} do not match ${wanted}: ${shown}${problems.length > 5 ? '; ...' : ''} (--node-cidr-mask-size must equal podroute's mask)`);
  }
  return ok('pod CIDRs', `${count} pod CIDRs, all ${wanted}`);
}

function checkNodes(nodes: Node[], managed: Node[], config: DoctorConfig): CheckResult {
  const left = nodes.flatMap((node) => {
    const reason = unmanagedReason(node, config.nodeSelector);
    return reason === null ? [] : [`${node.metadata.name} (${reason})`];
  });
  const leftText = left.length === 0 ? 'none left alone' : `leaves ${left.length} alone: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ', ...' : ''}`;
  const detail = `manages ${managed.length} of ${nodes.length}; ${leftText}`;
  return managed.length === 0 ? warn('nodes', detail) : ok('nodes', detail);
}

/** A webhook rule covers node `operation` when its groups, versions, operations and resources all match ("*" matches any). */
function covers(rule: WebhookRegistration['rules'][number], operation: 'CREATE' | 'DELETE'): boolean {
  const has = (list: string[], value: string) => list.includes(value) || list.includes('*');
  return has(rule.apiGroups, '') && has(rule.apiVersions, 'v1') && has(rule.operations, operation) && (has(rule.resources, 'nodes') || rule.resources.includes('*/*'));
}

function checkWebhook(webhooks: WebhookRegistration[]): CheckResult {
  const creates = webhooks.filter((hook) => hook.rules.some((rule) => covers(rule, 'CREATE')));
  const deletes = webhooks.filter((hook) => hook.rules.some((rule) => covers(rule, 'DELETE')));
  const name = (hook: WebhookRegistration) => `${hook.configuration}/${hook.webhook}${hook.host ? ` -> ${hook.host}` : ''}`;
  if (creates.length === 0 && deletes.length === 0) {
    return fail('admission webhook', 'no MutatingWebhookConfiguration covers node CREATE or DELETE; apply infra/kubernetes (nodes then wait for the schedule)');
  }
  if (creates.length === 0) return fail('admission webhook', `no webhook for node CREATE (DELETE: ${deletes.map(name).join(', ')})`);
  if (deletes.length === 0) return fail('admission webhook', `no webhook for node DELETE (CREATE: ${creates.map(name).join(', ')})`);
  const all = [...new Set([...creates, ...deletes].map(name))];
  return ok('admission webhook', `node CREATE and DELETE go to ${all.join(', ')}`);
}

async function checkPermissions(access: ClusterAccess, subject: AccessSubject): Promise<CheckResult[]> {
  const who = describeSubject(subject);
  const results: CheckResult[] = [];
  for (const question of requiredPermissions()) {
    const label = `permission ${describeQuestion(question)}`;
    try {
      const answer = await access.allows(subject, question);
      results.push(
        answer.allowed
          ? ok(label, `allowed for ${who}`)
          : fail(label, `denied for ${who}${answer.reason ? ` (${answer.reason})` : ''}: grant it in podroute's ClusterRole and bind that to podroute's group (infra/kubernetes/rbac.yaml)`),
      );
    } catch (error) {
      results.push(fail(label, `cannot ask the API server: ${errorText(error)}`));
    }
  }
  return results;
}

function describeSubject(subject: AccessSubject): string {
  const user = subject.user ? `user ${subject.user}` : '';
  const groups = subject.groups.length > 0 ? `group${subject.groups.length > 1 ? 's' : ''} ${subject.groups.join(',')}` : '';
  return [user, groups].filter(Boolean).join(' in ');
}

async function checkStack(
  label: string,
  id: string,
  flag: string,
  probe: (id: string) => Promise<{ exists: boolean; detail: string }>,
): Promise<CheckResult> {
  if (!id) return warn(label, `not checked: pass ${flag}`);
  try {
    const found = await probe(id);
    return found.exists ? ok(label, found.detail) : fail(label, `${found.detail}: deploy the stack, or check the name and region`);
  } catch (error) {
    return fail(label, `cannot check: ${errorText(error)}`);
  }
}

function describeQuestion(q: AccessQuestion): string {
  const resource = `${q.resource}${q.subresource ? `/${q.subresource}` : ''}${q.group ? `.${q.group}` : ''}`;
  return `${q.verb} ${resource}${q.namespace ? ` in ${q.namespace}` : ''}`;
}
