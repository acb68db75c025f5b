/**
 * Event-driven repair end to end: the EC2 emulator sends instance state changes and CloudTrail route
 * writes to the sandbox's EventBridge bus, the cloud-events function queues work, the worker
 * repairs; no reconcile runs in between (the schedule is off and nothing ticks until the end).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { forgedTermination, honestRoutes, replayEvent, tamperRoute, terminateNode } from '../../infra/local/sandbox/event-scenarios.ts';

describe('event-driven repair (EventBridge -> cloud-events -> worker)', () => {
  let sandbox: Sandbox;
  const reconciles = () => sandbox.logLines.filter((line) => line.event === 'reconcile.summary').length;
  const statuses = () => (sandbox.events?.delivered ?? []).map((d) => d.result.status);

  beforeAll(async () => {
    // No schedule, but the functions' waits fast-forwarded as a 1 s schedule would: the node-left
    // check's 10 s delay after the Node's DELETE is 1 s here.
    sandbox = await startSandbox({ tickMs: 0, timeScale: 60, routeTables: 2, nodes: 4, cloudEvents: true });
    await sandbox.settle({ timeoutMs: 30_000 });
  }, 60_000);
  afterAll(() => sandbox?.stop());

  it('deletes a terminated node\'s routes without a reconcile, and converges once its Node is gone', async () => {
    const before = reconciles();
    const repair = await terminateNode(sandbox, 'node-001');
    expect(repair.ms).not.toBeNull();
    expect(reconciles()).toBe(before);
    expect(statuses()).toContain('queued:delete-blackholes');
    // The node lifecycle controller deletes the Node of a terminated instance; then all converges.
    expect(await sandbox.leaveNode('node-001')).toBe('deleted');
    const report = await sandbox.settle({ timeoutMs: 30_000 });
    expect(report).toMatchObject({ wrongRoutes: 0, duplicateCidrs: 0, leakedCidrs: 0, liveRoutesRemoved: 0, dlqMessages: 0 });
  }, 60_000);

  it.each([
    ['deleted', { kind: 'delete' as const }],
    ['re-pointed at another node', { kind: 'replace' as const, toNode: 'node-004' }],
  ])('repairs a route another principal %s, without a reconcile', async (_what, how) => {
    const before = reconciles();
    const repair = await tamperRoute(sandbox, 'node-002', how);
    expect(repair.ms).not.toBeNull();
    expect(reconciles()).toBe(before);
    expect(statuses()).toContain('queued:sync-node');
  }, 30_000);

  it('ignores podroute\'s own route writes', () => {
    const own = (sandbox.events?.delivered ?? []).filter((d) => JSON.stringify(d.event).includes('podroute-sandbox'));
    expect(own.length).toBeGreaterThan(0);
    expect(new Set(own.map((d) => d.result.status))).toEqual(new Set(['ignored:own-write']));
  });

  it('changes nothing on a forged termination of a running instance, or on a stale termination delivered again', async () => {
    const routes = honestRoutes(sandbox);
    const forged = await forgedTermination(sandbox, 'node-003');
    expect(forged?.result.status).toBe('kept:running');
    const old = (sandbox.events?.delivered ?? []).find((d) => d.result.status === 'queued:delete-blackholes');
    if (!old) throw new Error('no termination was delivered');
    const stale = await replayEvent(sandbox, old.event);
    expect(stale?.result.status).toBe('done:no-node');
    expect(honestRoutes(sandbox)).toEqual(routes);
    const report = await sandbox.settle({ timeoutMs: 30_000 });
    expect(report).toMatchObject({ wrongRoutes: 0, duplicateCidrs: 0, leakedCidrs: 0, liveRoutesRemoved: 0, honestNodesNotReady: 0 });
  }, 60_000);
});
