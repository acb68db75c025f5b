/**
 * Issue 7, item 5, end to end through the handlers: node DELETEs that podroute's webhook admits and
 * a later validating webhook then refuses (the Kubernetes emulator's `denyDeletes`). The refused
 * nodes keep their pod CIDRs, leases, routes and Ready condition; the nodes really deleted lose
 * their leases (once 404 past the grace: the node-left check or reclaim) and their routes (planner).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, routeLines } from './helpers.ts';

describe('node deletes refused after admission (denyDeletes 0.5, two route tables)', () => {
  let sandbox: Sandbox;
  const names = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e', 'node-f', 'node-g', 'node-h'];
  const leaving = ['node-a', 'node-c', 'node-e', 'node-g'];
  const outcome = new Map<string, 'deleted' | 'refused'>();
  const before = new Map<string, { cidrs: string[]; instanceId: string; routes: string[] }>();
  const writesBefore: Record<string, number> = {};
  const writesDuringLeave = (action: string) => (sandbox.ec2.stats.calls[action] ?? 0) - (writesBefore[action] ?? 0);

  beforeAll(async () => {
    // The sandbox's short lease grace: a 404 frees a lease only past it, by one rule for the
    // worker's node-left check and reconcile's reclaim (lib/usecases/absence.ts pastGrace), so
    // the deleted nodes' leases go by whichever runs first; a refused node's never.
    sandbox = await startSandbox({ routeTables: 2, denyDeletes: 0.5 });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 30_000 });
    for (const name of leaving) {
      const cidrs = cidrsOf(sandbox, name);
      before.set(name, { cidrs, instanceId: instanceOf(sandbox, name), routes: routeLines(sandbox).filter((line) => cidrs.some((c) => line.includes(`|${c}|`))) });
    }
    for (const action of ['CreateRoute', 'ReplaceRoute', 'DeleteRoute']) writesBefore[action] = sandbox.ec2.stats.calls[action] ?? 0;
    // One at a time, so the seeded draw refuses the same nodes on every run.
    for (const name of leaving) outcome.set(name, await sandbox.leaveNode(name));
    await sandbox.settle({ timeoutMs: 40_000 });
  }, 90_000);
  afterAll(() => sandbox?.stop());

  const refused = () => leaving.filter((name) => outcome.get(name) === 'refused');
  const deleted = () => leaving.filter((name) => outcome.get(name) === 'deleted');

  it('refuses some of the admitted deletes and carries out the others', () => {
    expect(refused().length).toBeGreaterThan(0);
    expect(deleted().length).toBeGreaterThan(0);
    expect(sandbox.kube.state.refusedDeletes()).toEqual(refused());
    // podroute's webhook admitted every one of them first.
    const admitted = sandbox.kube.state.webhookCalls().filter((call) => call.operation === 'DELETE' && call.ok && call.allowed);
    expect(admitted.map((call) => call.name)).toEqual(leaving);
  });

  it('leaves a refused node its pod CIDR, its lease, its routes and its Ready condition', async () => {
    const leases = await leaseLines(sandbox);
    for (const name of refused()) {
      const then = before.get(name);
      expect(cidrsOf(sandbox, name)).toEqual(then?.cidrs);
      for (const cidr of then?.cidrs ?? []) expect(leases).toContain(`${cidr}=${name}`);
      for (const line of then?.routes ?? []) expect(routeLines(sandbox)).toContain(line);
      expect(then?.routes).toHaveLength(2);
      expect(networkUnavailable(sandbox, name)).toBe('False');
    }
    // Never unrouted in between: no route had to be made again after the leave phase began.
    expect(writesDuringLeave('CreateRoute')).toBe(0);
    expect(writesDuringLeave('ReplaceRoute')).toBe(0);
  });

  it('takes the lease (once the node is 404 past the grace) and the routes (the planner) of a node really deleted', async () => {
    const leases = await leaseLines(sandbox);
    const checks = sandbox.logLines.filter((line) => line.event === 'message.done' && line.kind === 'node-left');
    // Only deleted nodes' leases are released by a check (the others, if any, went by reclaim).
    const releasedBy = checks.filter((line) => String(line.status).startsWith('released:') && line.status !== 'released:none').map((line) => String(line.node));
    expect(releasedBy.every((name) => deleted().includes(name))).toBe(true);
    // A queued check may be delivered more than once (SQS is at-least-once): every refused node was
    // found still there, and no other node was; how many times is the queue's business.
    expect([...new Set(checks.filter((line) => line.status === 'stale:node-exists').map((line) => line.node))].sort()).toEqual(refused());
    for (const name of deleted()) {
      expect(sandbox.kube.state.getNode(name)).toBeUndefined();
      expect(leases.some((line) => line.endsWith(`=${name}`))).toBe(false);
      const instanceId = before.get(name)?.instanceId ?? 'none';
      expect(routeLines(sandbox).some((line) => line.includes(`|${instanceId}|`))).toBe(false);
    }
  });

  it('converges, and the report counts the refused deletes', async () => {
    const report = await sandbox.snapshot();
    expect(report).toMatchObject({
      nodes: names.length - deleted().length,
      deletesRefused: refused().length,
      refusedNodesBroken: 0,
      departedLeftovers: 0,
      duplicateCidrs: 0,
      leakedCidrs: 0,
      wrongRoutes: 0,
      dlqMessages: 0,
    });
    expect(report.nodesReady).toBe(report.nodes);
    expect(report.routesProgrammed).toBe(report.routesExpected);
  });
});
