import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, podRoutes } from './helpers.ts';

describe('prefix mode (ENI prefix delegation, dual-stack)', () => {
  let sandbox: Sandbox;
  const names = ['pfx-1', 'pfx-2', 'pfx-3'];

  beforeAll(async () => {
    sandbox = await startSandbox({ mode: 'prefixes', dualStack: true });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('gives each node a /28 and a /80 from its subnet', () => {
    for (const name of names) {
      const [v4, v6] = cidrsOf(sandbox, name);
      expect(v4).toMatch(/^10\.0\.\d+\.\d+\/28$/);
      expect(v6).toMatch(/^2600:1f18:1234:5600:[0-9a-f:]*\/80$/);
    }
    expect(new Set(names.flatMap((name) => cidrsOf(sandbox, name))).size).toBe(6);
  });

  it('delegates exactly the node’s pod CIDRs to its primary interface', () => {
    for (const name of names) {
      const eni = sandbox.ec2.state.primaryInterface(instanceOf(sandbox, name));
      expect([...(eni?.ipv4Prefixes ?? []), ...(eni?.ipv6Prefixes ?? [])]).toEqual(cidrsOf(sandbox, name));
    }
  });

  it('touches no route table and marks the nodes ready', () => {
    for (const table of sandbox.routeTableIds) expect(podRoutes(sandbox, table)).toEqual([]);
    for (const name of names) expect(networkUnavailable(sandbox, name)).toBe('False');
  });

  it('leases each prefix to its node', async () => {
    expect(await leaseLines(sandbox)).toEqual(names.flatMap((name) => cidrsOf(sandbox, name).map((cidr) => `${cidr}=${name}`)).sort());
  });
});
