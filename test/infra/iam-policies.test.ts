/**
 * infra/iam/: the standalone policy of each function's role, generated from serverless.yml by
 * infra/scripts/iam-policies.ts. The committed files must be what the script makes of the template
 * now (run it after editing a role), and each must be a plain IAM policy document.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allIamPolicies, iamPolicies } from '../../infra/scripts/iam-policies.ts';

const root = join(import.meta.dirname, '..', '..');
const iamDir = join(root, 'infra', 'iam');
const generated = allIamPolicies();
const committed = readdirSync(iamDir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
  .map((entry) => join(entry.parentPath, entry.name).slice(iamDir.length + 1))
  .sort();

/** The placeholders the files may hold, as infra/iam/README.md lists them. */
const PLACEHOLDERS = new Set(['${AWS::Partition}', '${AWS::Region}', '${AWS::AccountId}', '${ClusterName}', '${EksClusterName}',
  '${ReconcileLogGroup.Arn}', '${RouteWorkerLogGroup.Arn}', '${NodeWebhookLogGroup.Arn}', '${CidrTable.Arn}', '${WorkQueue.Arn}',
  '${WebhookSecret}', '${WebhookSigningSecret}', '${CloudEventsLogGroup.Arn}', '${EventsDeadLetterQueue.Arn}']);

describe('infra/iam: one policy per function and mode, generated from serverless.yml', () => {
  it('holds exactly the generated files', () => {
    expect(committed).toEqual(Object.keys(generated).sort());
    expect(committed).toHaveLength(8);
  });

  it.each(Object.entries(generated))('%s matches the template (node --import tsx infra/scripts/iam-policies.ts rewrites it)', (path, text) => {
    expect(readFileSync(join(iamDir, path), 'utf8')).toBe(text);
  });

  it.each(Object.keys(generated))('%s is a plain IAM policy: Allow statements with a Sid, no intrinsic left, known placeholders only', (path) => {
    const text = readFileSync(join(iamDir, path), 'utf8');
    const policy = JSON.parse(text) as { Version: string; Statement: { Sid?: string; Effect: string; Action: string[]; Resource: unknown }[] };
    expect(policy.Version).toBe('2012-10-17');
    expect(policy.Statement.length).toBeGreaterThan(0);
    for (const statement of policy.Statement) {
      expect(statement.Effect).toBe('Allow');
      expect(statement.Sid).toMatch(/^[A-Za-z0-9]+$/);
      expect(statement.Action.length).toBeGreaterThan(0);
    }
    expect(text).not.toMatch(/Fn::|"Ref"|\$\{param:|\$\{file\(/);
    expect(new Set(text.match(/\$\{[^}]+\}/g) ?? [])).toSatisfy((found: Set<string>) => [...found].every((p) => PLACEHOLDERS.has(p)));
  });

  it('gives prefixes mode the prefix actions and routes mode none', () => {
    const actions = (path: string): string[] => (JSON.parse(readFileSync(join(iamDir, path), 'utf8')) as { Statement: { Action: string[] }[] }).Statement.flatMap((s) => s.Action);
    expect(actions('reconcile.json')).not.toContain('ec2:AssignPrivateIpAddresses');
    expect(actions('prefixes/reconcile.json')).toEqual(expect.arrayContaining(['ec2:AssignPrivateIpAddresses', 'ec2:GetSubnetCidrReservations']));
    expect(actions('node-webhook.json').filter((action) => action.startsWith('ec2:'))).toEqual([]);
  });

  // The worker delegates an admitted node's prefixes (lib/dataplane/prefixes/prefix-assign.ts) and takes
  // a departed node's off (lib/dataplane/prefixes/free-departed-prefix.ts), on the cluster's tagged
  // interfaces only, as reconcile's role does; routes mode's worker delegates none.
  it.each(['prefixes/route-worker.json', 'prefixes/reconcile.json'])('%s delegates and unassigns prefixes only on the cluster’s tagged interfaces', (path) => {
    type Statement = { Action: string[]; Resource: unknown; Condition?: unknown };
    const statements = (JSON.parse(readFileSync(join(iamDir, path), 'utf8')) as { Statement: Statement[] }).Statement;
    const assigning = statements.filter((s) => s.Action.includes('ec2:AssignPrivateIpAddresses') || s.Action.includes('ec2:AssignIpv6Addresses'));
    expect(assigning.map((s) => [[...s.Action].sort(), s.Resource, s.Condition])).toEqual([
      [
        ['ec2:AssignIpv6Addresses', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses'],
        'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:network-interface/*',
        { StringLike: { 'aws:ResourceTag/kubernetes.io/cluster/${ClusterName}': '*' } },
      ],
    ]);
    const worker = (JSON.parse(readFileSync(join(iamDir, 'route-worker.json'), 'utf8')) as { Statement: Statement[] }).Statement.flatMap((s) => s.Action);
    expect(worker.filter((action) => /^ec2:(Un)?[aA]ssign/.test(action))).toEqual([]);
  });

  // Prefixes mode lists no route table and writes no route, tag or source/dest check: only the routes
  // plane reads the tables (lib/dataplane/routes/routes-plane.ts), and the worker's prefix join reads
  // the node's interface (lib/dataplane/prefixes/prefix-join.ts settlePrefixJoin, DescribeInstances).
  const ROUTE_TABLE_ACTIONS = ['ec2:DescribeRouteTables', 'ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute', 'ec2:CreateTags', 'ec2:DeleteTags', 'ec2:ModifyNetworkInterfaceAttribute'];
  it.each([
    ['prefixes/reconcile.json', [], ['ec2:DescribeInstances', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets']],
    ['prefixes/route-worker.json', [], ['ec2:DescribeInstances', 'ec2:DescribeNetworkInterfaces']],
    ['reconcile.json', ['ec2:DescribeRouteTables', 'ec2:DeleteTags'], ['ec2:DescribeInstances']],
    ['route-worker.json', ROUTE_TABLE_ACTIONS, ['ec2:DescribeInstances']],
    // The cloud-events function confirms an instance's state in both modes; only routes mode has tables to list.
    ['prefixes/cloud-events.json', [], ['ec2:DescribeInstances']],
    ['cloud-events.json', ['ec2:DescribeRouteTables'], ['ec2:DescribeInstances']],
  ])('%s grants exactly these route-table actions, and keeps its reads', (path, routeTableActions, reads) => {
    const granted = (JSON.parse(readFileSync(join(iamDir, path), 'utf8')) as { Statement: { Action: string[] }[] }).Statement.flatMap((s) => s.Action);
    expect(granted.filter((action) => ROUTE_TABLE_ACTIONS.includes(action)).sort()).toEqual([...routeTableActions].sort());
    expect(granted).toEqual(expect.arrayContaining(reads));
  });

  it('follows a role edited in serverless.yml', () => {
    const yml = readFileSync(join(root, 'serverless.yml'), 'utf8');
    const edited = yml.replace('Action: [sqs:ReceiveMessage, sqs:DeleteMessage,', 'Action: [sqs:ReceiveMessage, sqs:PurgeQueue, sqs:DeleteMessage,');
    expect(edited).not.toBe(yml);
    const policies = iamPolicies(edited, 'routes');
    expect(policies['route-worker.json']).toContain('sqs:PurgeQueue');
    expect(policies['route-worker.json']).not.toBe(generated['route-worker.json']);
  });
});
