/**
 * Reading the sandbox's stand-ins in end-to-end tests: routes as the EC2 emulator holds them,
 * nodes as the Kubernetes emulator stores them. Assertions are on this state, never on time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { networkUnavailableOf, nodeSchema, podCidrsOf } from '../../lib/nodes/node.ts';
import type { Node } from '../../lib/nodes/node.ts';
import { serializeWorkMessage } from '../../lib/messages/work-message.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';

export interface SimpleRoute {
  destination: string;
  instanceId: string | null;
  state: string;
}

/** The routes of one table that are not local and not to a gateway, sorted by destination. */
export function podRoutes(sandbox: Sandbox, tableId: string): SimpleRoute[] {
  return sandbox.ec2.state
    .routes(tableId)
    .filter((route) => route.gatewayId === undefined)
    .map((route) => ({
      destination: route.destinationCidrBlock ?? route.destinationIpv6CidrBlock ?? '?',
      instanceId: route.instanceId ?? null,
      state: route.state,
    }))
    .sort((a, b) => (a.destination < b.destination ? -1 : 1));
}

/** Every route of every cluster table, as `table|destination|instance|state` lines. */
export function routeLines(sandbox: Sandbox): string[] {
  return sandbox.routeTableIds.flatMap((id) => podRoutes(sandbox, id).map((r) => `${id}|${r.destination}|${r.instanceId}|${r.state}`));
}

export function nodes(sandbox: Sandbox): Node[] {
  return sandbox.kube.state.nodes().map((raw) => nodeSchema().parse(raw));
}

export function node(sandbox: Sandbox, name: string): Node {
  const raw = sandbox.kube.state.getNode(name);
  if (!raw) throw new Error(`no node ${name}`);
  return nodeSchema().parse(raw);
}

export const cidrsOf = (sandbox: Sandbox, name: string): string[] => podCidrsOf(node(sandbox, name));
export const networkUnavailable = (sandbox: Sandbox, name: string) => networkUnavailableOf(node(sandbox, name));

export function instanceOf(sandbox: Sandbox, name: string): string {
  const id = sandbox.instanceOf(name);
  if (!id) throw new Error(`no instance for ${name}`);
  return id;
}

/** Leases as sorted `cidr=owner` strings. */
export async function leaseLines(sandbox: Sandbox): Promise<string[]> {
  return (await sandbox.leases()).map((lease) => `${lease.cidr}=${lease.owner ?? ''}`).sort();
}

/** Sends messages to the work queue as raw SQS messages, one SendMessage each, in order. */
export async function sendRaw(sandbox: Sandbox, messages: WorkMessage[]): Promise<void> {
  for (const message of messages) {
    await sandbox.queue.client.send(new SendMessageCommand({ QueueUrl: sandbox.queue.queueUrl, MessageBody: serializeWorkMessage(message) }));
  }
}

/** Waits until the work queue is empty and no worker invocation runs (no reconcile involved). */
export async function queueIdle(sandbox: Sandbox, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const depth = await sandbox.queue.depth();
    if (depth.visible + depth.inFlight + depth.delayed + depth.running === 0) return;
    if (Date.now() > deadline) throw new Error(`queue not idle: ${JSON.stringify(depth)}`);
    await sleep(50);
  }
}
