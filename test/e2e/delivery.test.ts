import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { syncNodeMessage, type WorkMessage } from '../../lib/messages/work-message.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, podRoutes, queueIdle, routeLines, sendRaw } from './helpers.ts';

/** The schedule is off, so what the worker does with these deliveries is all that happens. */
describe('duplicate, out-of-order and overlapping work', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ tickMs: 0, routeTables: 2 });
    await sandbox.joinNode('dup-a');
    await sandbox.joinNode('dup-b');
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('converges when a create is delivered twice and a stale delete arrives after it', async () => {
    const [table = ''] = sandbox.routeTableIds;
    const cidr = cidrsOf(sandbox, 'dup-a')[0] ?? '';
    const instanceId = instanceOf(sandbox, 'dup-a');
    sandbox.ec2.state.deleteRoute({ routeTableId: table, destinationCidr: cidr });
    expect(podRoutes(sandbox, table).some((r) => r.destination === cidr)).toBe(false);

    const create: WorkMessage = { v: 1, kind: 'create', routeTableId: table, destinationCidr: cidr, node: 'dup-a', instanceId };
    // Planned while the route was still a blackhole; it arrives after the route was fixed.
    const staleDelete: WorkMessage = {
      v: 1,
      kind: 'delete',
      routeTableId: table,
      destinationCidr: cidr,
      reason: 'no-owner',
      expect: { instanceId: null, blackhole: true },
    };
    await sendRaw(sandbox, [create, create, staleDelete, syncNodeMessage('dup-b'), syncNodeMessage('dup-b')]);
    await queueIdle(sandbox);

    expect(podRoutes(sandbox, table).filter((r) => r.destination === cidr)).toEqual([{ destination: cidr, instanceId, state: 'active' }]);
    expect(await sandbox.queue.dlqDepth()).toBe(0);
    const report = await sandbox.snapshot();
    expect(report).toMatchObject({ nodesReady: 2, routesExpected: 4, routesProgrammed: 4, wrongRoutes: 0 });
  });

  it('ignores a delete of a route that now belongs to another instance', async () => {
    const [, table = ''] = sandbox.routeTableIds;
    const cidr = cidrsOf(sandbox, 'dup-b')[0] ?? '';
    const before = routeLines(sandbox);
    await sendRaw(sandbox, [
      { v: 1, kind: 'delete', routeTableId: table, destinationCidr: cidr, reason: 'no-owner', expect: { instanceId: 'i-0000000000000dead', blackhole: false } },
    ]);
    await queueIdle(sandbox);
    expect(routeLines(sandbox)).toEqual(before);
  });

  it('two overlapping reconciles allocate each node one CIDR and create no extra routes', async () => {
    const fresh = ['ovl-1', 'ovl-2', 'ovl-3', 'ovl-4'];
    // Nodes created without the webhook: the reconcile has to allocate their CIDRs.
    for (const name of fresh) await sandbox.joinNode(name, { webhook: false });
    for (const name of fresh) expect(cidrsOf(sandbox, name)).toEqual([]);

    const [first, second] = await Promise.all([sandbox.tick(), sandbox.tick()]);
    expect((first?.allocated ?? 0) + (second?.allocated ?? 0)).toBeGreaterThanOrEqual(fresh.length);
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    const all = ['dup-a', 'dup-b', ...fresh];
    const cidrs = all.map((name) => cidrsOf(sandbox, name));
    for (const list of cidrs) expect(list).toHaveLength(1);
    expect(new Set(cidrs.flat()).size).toBe(all.length);
    expect(report).toMatchObject({ nodes: 6, nodesReady: 6, duplicateCidrs: 0, wrongRoutes: 0, routesExpected: 12, routesProgrammed: 12 });
    for (const table of sandbox.routeTableIds) expect(podRoutes(sandbox, table)).toHaveLength(all.length);
    expect(await leaseLines(sandbox)).toEqual(all.map((name) => `${cidrsOf(sandbox, name)[0]}=${name}`).sort());
    for (const name of all) expect(networkUnavailable(sandbox, name)).toBe('False');
  });
});
