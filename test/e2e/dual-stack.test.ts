import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, podRoutes } from './helpers.ts';

describe('dual-stack cluster', () => {
  let sandbox: Sandbox;
  const names = ['dual-1', 'dual-2'];

  beforeAll(async () => {
    sandbox = await startSandbox({ dualStack: true, routeTables: 2 });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('gives each node one IPv4 and one IPv6 pod CIDR, IPv4 first, all distinct', () => {
    for (const name of names) {
      const [v4, v6, ...rest] = cidrsOf(sandbox, name);
      expect(v4).toMatch(/^100\.\d+\.\d+\.0\/24$/);
      expect(v6).toMatch(/^fd00:10:244:[0-9a-f:]*\/64$/);
      expect(rest).toEqual([]);
    }
    expect(new Set(names.flatMap((name) => cidrsOf(sandbox, name))).size).toBe(4);
  });

  it('routes both families of every node in every table', () => {
    const wanted = names
      .flatMap((name) => cidrsOf(sandbox, name).map((destination) => ({ destination, instanceId: instanceOf(sandbox, name), state: 'active' })))
      .sort((a, b) => (a.destination < b.destination ? -1 : 1));
    for (const table of sandbox.routeTableIds) expect(podRoutes(sandbox, table)).toEqual(wanted);
  });

  it('leases both CIDRs to their node and marks the nodes ready', async () => {
    expect(await leaseLines(sandbox)).toEqual(names.flatMap((name) => cidrsOf(sandbox, name).map((cidr) => `${cidr}=${name}`)).sort());
    for (const name of names) expect(networkUnavailable(sandbox, name)).toBe('False');
  });

  it('removes both routes and both leases when a node leaves', async () => {
    const gone = cidrsOf(sandbox, 'dual-1');
    await sandbox.leaveNode('dual-1');
    await sandbox.settle({ timeoutMs: 25_000 });
    const destinations = sandbox.routeTableIds.flatMap((table) => podRoutes(sandbox, table).map((r) => r.destination));
    for (const cidr of gone) expect(destinations).not.toContain(cidr);
    expect((await leaseLines(sandbox)).filter((line) => line.endsWith('=dual-1'))).toEqual([]);
    expect(destinations).toHaveLength(4);
  });
});
