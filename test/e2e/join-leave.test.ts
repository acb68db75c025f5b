import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, podRoutes, routeLines } from './helpers.ts';

describe('nodes join and leave through the admission webhook (two route tables)', () => {
  let sandbox: Sandbox;
  const names = ['node-a', 'node-b', 'node-c'];

  beforeAll(async () => {
    sandbox = await startSandbox({ routeTables: 2 });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('gives every node its own pod CIDR, written by the admission patch', () => {
    const cidrs = names.map((name) => cidrsOf(sandbox, name));
    for (const list of cidrs) {
      expect(list).toHaveLength(1);
      expect(list[0]).toMatch(/^100\.\d+\.\d+\.0\/24$/);
    }
    expect(new Set(cidrs.flat()).size).toBe(names.length);
    expect(sandbox.kube.state.webhookCalls().filter((call) => call.operation === 'CREATE' && call.ok && call.allowed)).toHaveLength(3);
  });

  it('routes every pod CIDR to its node in every cluster table, and nothing else', () => {
    expect(sandbox.routeTableIds).toHaveLength(2);
    const wanted = names
      .map((name) => ({ destination: cidrsOf(sandbox, name)[0], instanceId: instanceOf(sandbox, name), state: 'active' }))
      .sort((a, b) => ((a.destination ?? '') < (b.destination ?? '') ? -1 : 1));
    for (const table of sandbox.routeTableIds) expect(podRoutes(sandbox, table)).toEqual(wanted);
  });

  it('leaves tables that are not the cluster’s alone', () => {
    const others = [...sandbox.ec2.state.routeTables.values()].filter((t) => !sandbox.routeTableIds.includes(t.id));
    expect(others).toHaveLength(1);
    for (const table of others) expect(podRoutes(sandbox, table.id)).toEqual([]);
  });

  it('marks every node NetworkUnavailable=False', () => {
    for (const name of names) expect(networkUnavailable(sandbox, name)).toBe('False');
  });

  it('leases exactly the nodes’ CIDRs, each to its node', async () => {
    expect(await leaseLines(sandbox)).toEqual(names.map((name) => `${cidrsOf(sandbox, name)[0]}=${name}`).sort());
  });

  it('releases the CIDR and deletes the routes of a node that leaves, and keeps the others', async () => {
    const gone = cidrsOf(sandbox, 'node-b')[0];
    const keptRoutes = routeLines(sandbox).filter((line) => !line.includes(`|${gone}|`));
    await sandbox.leaveNode('node-b');
    const report = await sandbox.settle({ timeoutMs: 25_000 });

    expect(sandbox.kube.state.getNode('node-b')).toBeUndefined();
    expect((await leaseLines(sandbox)).some((line) => line.startsWith(`${gone}=`))).toBe(false);
    expect(routeLines(sandbox)).toEqual(keptRoutes);
    expect(report).toMatchObject({ nodes: 2, nodesReady: 2, routesExpected: 4, routesProgrammed: 4, wrongRoutes: 0, leakedCidrs: 0, dlqMessages: 0 });
  });

  it('hands a released CIDR to a later node only through the allocator (no duplicates)', async () => {
    await sandbox.joinNode('node-d');
    const report = await sandbox.settle({ timeoutMs: 25_000 });
    expect(report.duplicateCidrs).toBe(0);
    expect(report).toMatchObject({ nodes: 3, nodesReady: 3, routesExpected: 6, routesProgrammed: 6 });
  });
});
