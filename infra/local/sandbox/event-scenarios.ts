/**
 * Event-driven repair in the sandbox (`cloudEvents`), with no reconcile in between: the schedule is
 * the caller's to stop. Each step does what EC2, an operator or an attacker would, then watches the
 * stand-ins' state until the repair is done (or `timeoutMs` passes) and says how long it took:
 *
 * - `terminateNode`: terminates a node's instance (the emulator sends shutting-down and terminated);
 *   done when no cluster table holds a route to any of the node's pod CIDRs;
 * - `tamperRoute`: another principal (an IAM user) deletes a node's route, or re-points it at
 *   another node's interface (the emulator sends the CloudTrail event); done when the route is back,
 *   active, to the node's instance;
 * - `forgedTermination` / `replayEvent`: an event put on the bus by hand (a termination of a running
 *   instance, or an event delivered before, again): nothing may change.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteRouteCommand, ReplaceRouteCommand } from '@aws-sdk/client-ec2';
import { instanceStateEvent } from '../ec2/cloud-events.ts';
import type { Delivered, EventBus } from './event-bus.ts';
import { readNode } from './report.ts';
import type { Sandbox } from './types.ts';

const POLL_MS = 10;

export interface Repair {
  /** From the act to the repair observed, or null when it was not repaired within the timeout. */
  ms: number | null;
}

function busOf(sandbox: Sandbox): EventBus {
  if (!sandbox.events) throw new Error('event-driven repair needs a sandbox started with cloudEvents: true');
  return sandbox.events;
}

const podCidrsOf = (sandbox: Sandbox, name: string): string[] => readNode(sandbox.kube.state.getNode(name))?.podCidrs ?? [];

async function watch(done: () => boolean, timeoutMs: number): Promise<Repair> {
  const started = performance.now();
  for (;;) {
    if (done()) return { ms: Math.round(performance.now() - started) };
    if (performance.now() - started > timeoutMs) return { ms: null };
    await sleep(POLL_MS);
  }
}

/** Whether table `tableId` routes `cidr` to `instanceId` (active). */
function routedTo(sandbox: Sandbox, tableId: string, cidr: string, instanceId: string): boolean {
  return sandbox.ec2.state.routes(tableId).some((r) => (r.destinationCidrBlock ?? r.destinationIpv6CidrBlock) === cidr && r.state === 'active' && r.instanceId === instanceId);
}

export async function terminateNode(sandbox: Sandbox, name: string, timeoutMs = 10_000): Promise<Repair> {
  busOf(sandbox);
  const instanceId = sandbox.instanceOf(name);
  if (instanceId === undefined) throw new Error(`no node ${name}`);
  const cidrs = new Set(podCidrsOf(sandbox, name));
  const anyLeft = () => sandbox.routeTableIds.some((id) => sandbox.ec2.state.routes(id).some((r) => cidrs.has(r.destinationCidrBlock ?? r.destinationIpv6CidrBlock ?? '')));
  const started = performance.now();
  sandbox.ec2.state.terminateInstance(instanceId);
  const repair = await watch(() => !anyLeft(), timeoutMs);
  return repair.ms === null ? repair : { ms: Math.round(performance.now() - started) };
}

export async function tamperRoute(sandbox: Sandbox, name: string, how: { kind: 'delete' } | { kind: 'replace'; toNode: string }, timeoutMs = 10_000): Promise<Repair> {
  busOf(sandbox);
  const instanceId = sandbox.instanceOf(name);
  const cidr = podCidrsOf(sandbox, name).find((c) => !c.includes(':'));
  const tableId = sandbox.routeTableIds[0];
  if (instanceId === undefined || cidr === undefined || tableId === undefined) throw new Error(`node ${name} has no IPv4 route to tamper with`);
  const operator = sandbox.operatorEc2();
  const started = performance.now();
  if (how.kind === 'delete') {
    await operator.send(new DeleteRouteCommand({ RouteTableId: tableId, DestinationCidrBlock: cidr }));
  } else {
    const other = sandbox.instanceOf(how.toNode);
    const eni = other === undefined ? undefined : sandbox.ec2.state.primaryInterface(other)?.id;
    if (eni === undefined) throw new Error(`no node ${how.toNode} to point the route at`);
    await operator.send(new ReplaceRouteCommand({ RouteTableId: tableId, DestinationCidrBlock: cidr, NetworkInterfaceId: eni }));
  }
  const repair = await watch(() => routedTo(sandbox, tableId, cidr, instanceId), timeoutMs);
  return repair.ms === null ? repair : { ms: Math.round(performance.now() - started) };
}

/** A termination event for a node's running instance, put on the bus as if EC2 had sent it. */
export async function forgedTermination(sandbox: Sandbox, name: string): Promise<Delivered | null> {
  const instanceId = sandbox.instanceOf(name);
  if (instanceId === undefined) throw new Error(`no node ${name}`);
  return busOf(sandbox).put(instanceStateEvent(instanceId, 'terminated', Date.now()));
}

/** Puts an event delivered before on the bus again (EventBridge may deliver an event more than once, late). */
export async function replayEvent(sandbox: Sandbox, event: Record<string, unknown>): Promise<Delivered | null> {
  return busOf(sandbox).put(structuredClone(event));
}

/** The honest live nodes' IPv4/IPv6 routes, as `table cidr instance state` lines (to compare before and after). */
export function honestRoutes(sandbox: Sandbox): string[] {
  const lines: string[] = [];
  for (const raw of sandbox.kube.state.nodes()) {
    const node = readNode(raw);
    const own = node ? sandbox.record.get(node.name) : undefined;
    if (!node || !own || own.hostile) continue;
    for (const tableId of sandbox.routeTableIds) {
      for (const r of sandbox.ec2.state.routes(tableId)) {
        const cidr = r.destinationCidrBlock ?? r.destinationIpv6CidrBlock ?? '';
        if (node.podCidrs.includes(cidr)) lines.push(`${tableId} ${cidr} ${r.instanceId ?? r.networkInterfaceId ?? '-'} ${r.state}`);
      }
    }
  }
  return lines.sort();
}
