/**
 * `podroute doctor --stack NAME`: checks of the deployed stack, read from its resources
 * (CloudFormation DescribeStackResources): the EC2 writes its function roles are allowed, asked of
 * IAM with SimulatePrincipalPolicy for the role itself (not the caller; the statements' cluster-tag
 * condition is given as context), the depth of the route worker's dead-letter queue, the stack's
 * alarm states, and when a reconcile last completed (its heartbeat metric, ReconcileCompleted, as
 * serverless.yml's ReconcileHeartbeatAlarm reads it) and the webhook was last called (its function's
 * AWS/Lambda Invocations). The stack's queue and table also stand in for
 * --queue-url and --cidr-table-name.
 */
import { errorText } from '../errors.ts';
import { fail, ok, shortList, warn } from '../usecases/doctor-check.ts';
import type { CheckResult, RoleWrites } from '../usecases/doctor-check.ts';
import type { DeployedStack } from '../aws/stack-resources.ts';
import type { SimulationAnswer, SimulationQuestion } from '../aws/iam-simulator.ts';
import type { AlarmState } from '../aws/cloudwatch-reads.ts';

export interface StackDoctorPorts {
  stacks: { describe(name: string): Promise<DeployedStack> };
  simulator: { simulate(question: SimulationQuestion): Promise<SimulationAnswer[]> };
  queueDepth(url: string): Promise<number>;
  cloudWatch: {
    alarmStates(names: readonly string[]): Promise<AlarmState[]>;
    lastDatapoint(metric: { namespace: string; name: string; dimensions: Record<string, string> }, from: Date, to: Date): Promise<Date | null>;
  };
  now(): number;
}

/** ReconcileHeartbeatAlarm's window: no completed run for 15 minutes is an outage. */
const HEARTBEAT_MS = 15 * 60_000;
const LOOKBACK_MS = 24 * 3600_000;

/** A stack resource's physical id by its logical id in serverless.yml. */
export function physicalId(stack: DeployedStack, logicalId: string): string | undefined {
  return stack.resources.find((r) => r.logicalId === logicalId)?.physicalId;
}

export async function readStack(name: string, ports: StackDoctorPorts): Promise<{ stack: DeployedStack | null; result: CheckResult }> {
  try {
    const stack = await ports.stacks.describe(name);
    return { stack, result: ok('stack', `${name}: ${stack.resources.length} resources in ${stack.account} ${stack.region}`) };
  } catch (error) {
    return { stack: null, result: fail('stack', `cannot read ${name}: ${errorText(error)}; check the stack name (--stack) and the region`) };
  }
}

export async function stackChecks(stack: DeployedStack, clusterName: string, writes: readonly RoleWrites[], ports: StackDoctorPorts): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const role of [...new Set(writes.map((w) => w.role))]) {
    results.push(await checkRole(stack, role, clusterName, writes.filter((w) => w.role === role), ports));
  }
  results.push(await checkDeadLetters(stack, ports));
  results.push(await checkAlarms(stack, ports));
  results.push(await checkHeartbeat(clusterName, ports));
  results.push(await checkWebhookCalls(stack, ports));
  return results;
}

/** One simulation per resource type; the ARN a role's statement names (`<type>/*`) with the cluster tag as context. */
async function checkRole(stack: DeployedStack, role: RoleWrites['role'], clusterName: string, writes: readonly RoleWrites[], ports: StackDoctorPorts): Promise<CheckResult> {
  const label = `iam ${role}`;
  const name = physicalId(stack, role);
  if (!name) return fail(label, `the stack has no ${role}: deploy podroute's serverless.yml`);
  const principalArn = `arn:${stack.partition}:iam::${stack.account}:role/${name}`;
  const tag = `kubernetes.io/cluster/${clusterName}`;
  const denied: string[] = [];
  try {
    for (const write of writes) {
      const answers = await ports.simulator.simulate({
        principalArn,
        actions: write.actions,
        resourceArns: [`arn:${stack.partition}:ec2:${stack.region}:${stack.account}:${write.resource}/*`],
        context: { [`aws:ResourceTag/${tag}`]: 'owned' },
      });
      for (const action of write.actions) {
        const answer = answers.find((a) => a.action.toLowerCase() === action.toLowerCase());
        if (answer?.decision !== 'allowed') denied.push(`${action} on ${write.resource} (${answer?.decision ?? 'no answer'}${answer?.missingContext.length ? `, missing ${answer.missingContext.join(', ')}` : ''})`);
      }
    }
  } catch (error) {
    return fail(label, `cannot simulate ${name}'s policies: ${errorText(error)} (the caller needs iam:SimulatePrincipalPolicy)`);
  }
  const all = writes.flatMap((w) => w.actions);
  if (denied.length > 0) return fail(label, `${name} is denied ${shortList(denied, 5, '; ')}: redeploy the stack (serverless.yml ${role}), and check its permissions boundary and the account's SCPs`);
  return ok(label, `${name} may ${all.join(', ')} on resources tagged ${tag} (IAM SimulatePrincipalPolicy)`);
}

async function checkDeadLetters(stack: DeployedStack, ports: StackDoctorPorts): Promise<CheckResult> {
  const url = physicalId(stack, 'DeadLetterQueue');
  if (!url) return fail('dead-letter queue', 'the stack has no DeadLetterQueue: deploy podroute\'s serverless.yml');
  try {
    const depth = await ports.queueDepth(url);
    if (depth === 0) return ok('dead-letter queue', `empty (${url})`);
    return warn('dead-letter queue', `${depth} route messages the worker gave up on: read and redrive them (docs/operate/dlq-redrive.md); the next reconcile also repairs what they named`);
  } catch (error) {
    return fail('dead-letter queue', `cannot read ${url}: ${errorText(error)}`);
  }
}

async function checkAlarms(stack: DeployedStack, ports: StackDoctorPorts): Promise<CheckResult> {
  const names = stack.resources.filter((r) => r.type === 'AWS::CloudWatch::Alarm').map((r) => r.physicalId);
  if (names.length === 0) return warn('alarms', 'the stack has no alarms');
  try {
    const states = await ports.cloudWatch.alarmStates(names);
    const firing = states.filter((a) => a.state === 'ALARM').map((a) => `${a.name}${a.reason ? ` (${a.reason})` : ''}`);
    const unknown = states.filter((a) => a.state === 'INSUFFICIENT_DATA').map((a) => a.name);
    if (firing.length > 0) return fail('alarms', `${firing.length} of ${names.length} in ALARM: ${shortList(firing, 3, '; ')}; runbooks in docs/operate/alarms.md`);
    if (unknown.length > 0) return warn('alarms', `${unknown.length} of ${names.length} have insufficient data: ${shortList(unknown, 5)}`);
    return ok('alarms', `all ${names.length} OK`);
  } catch (error) {
    return fail('alarms', `cannot read: ${errorText(error)} (the caller needs cloudwatch:DescribeAlarms)`);
  }
}

async function checkHeartbeat(clusterName: string, ports: StackDoctorPorts): Promise<CheckResult> {
  const label = 'last reconcile';
  const now = ports.now();
  try {
    const metric = { namespace: 'podroute', name: 'ReconcileCompleted', dimensions: { cluster: clusterName, function: 'reconcile' } };
    const last = await ports.cloudWatch.lastDatapoint(metric, new Date(now - LOOKBACK_MS), new Date(now));
    if (last === null) return fail(label, 'no reconcile completed in 24 hours (podroute/ReconcileCompleted): check the schedule and the reconcile function\'s logs');
    const minutes = Math.floor((now - last.getTime()) / 60_000);
    const detail = `completed ${minutes} min ago (${last.toISOString()}, podroute/ReconcileCompleted)`;
    return now - last.getTime() > HEARTBEAT_MS ? fail(label, `${detail}: none in 15 minutes; check the schedule and the reconcile function's logs`) : ok(label, detail);
  } catch (error) {
    return fail(label, `cannot read: ${errorText(error)} (the caller needs cloudwatch:GetMetricData)`);
  }
}

/** The node webhook's last invocation; none in a day is a warning only: no node may have joined or left. */
async function checkWebhookCalls(stack: DeployedStack, ports: StackDoctorPorts): Promise<CheckResult> {
  const label = 'webhook last call';
  const name = physicalId(stack, 'NodeWebhookLambdaFunction');
  if (!name) return warn(label, 'the stack has no NodeWebhookLambdaFunction');
  const now = ports.now();
  try {
    const metric = { namespace: 'AWS/Lambda', name: 'Invocations', dimensions: { FunctionName: name } };
    const last = await ports.cloudWatch.lastDatapoint(metric, new Date(now - LOOKBACK_MS), new Date(now));
    if (last === null) return warn(label, `${name} was not called in 24 hours: no node joined or left, or the API server does not reach it (check the MutatingWebhookConfiguration's URL)`);
    return ok(label, `${name} called ${Math.floor((now - last.getTime()) / 60_000)} min ago (${last.toISOString()}, AWS/Lambda Invocations)`);
  } catch (error) {
    return fail(label, `cannot read: ${errorText(error)} (the caller needs cloudwatch:GetMetricData)`);
  }
}
