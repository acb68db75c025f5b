import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { containsCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, podRoutes } from './helpers.ts';

describe('prefix mode (ENI prefix delegation, dual-stack, three subnets in three zones)', () => {
  let sandbox: Sandbox;
  const names = ['pfx-1', 'pfx-2', 'pfx-3', 'pfx-4', 'pfx-5', 'pfx-6'];

  beforeAll(async () => {
    sandbox = await startSandbox({ mode: 'prefixes', dualStack: true, subnets: 3 });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('gives each node a /28 and a /80 inside its own subnet’s podroute reservations', () => {
    const zones = new Set<string>();
    for (const name of names) {
      const instance = sandbox.ec2.state.instances.get(instanceOf(sandbox, name));
      const subnetId = sandbox.ec2.state.primaryInterface(instanceOf(sandbox, name))?.subnetId ?? '';
      zones.add(instance?.availabilityZone ?? '');
      const reservations = sandbox.ec2.state.reservationsOf(subnetId).filter((r) => r.description === 'podroute');
      const [v4, v6] = cidrsOf(sandbox, name);
      expect(v4).toMatch(/\/28$/);
      expect(v6).toMatch(/\/80$/);
      for (const cidr of [v4, v6]) expect(reservations.some((r) => containsCidr(parseCidr(r.cidr), parseCidr(cidr))), `${name} ${cidr} in ${subnetId}`).toBe(true);
    }
    expect(zones.size).toBe(3);
    expect(new Set(names.flatMap((name) => cidrsOf(sandbox, name))).size).toBe(12);
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
