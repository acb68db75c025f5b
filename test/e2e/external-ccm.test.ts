/**
 * Nodes that join as under an external cloud controller manager (kubeadm's and kOps' default): the
 * kubelet's CREATE has no providerID, so the CREATE webhook leaves the node alone, and the stand-in
 * CCM's update that sets it goes to the node-provider-id webhook (the manifest's matchConditions,
 * evaluated by the Kubernetes emulator). With no schedule running, only that fast path can give
 * the nodes their pod CIDRs, routes and NetworkUnavailable=False.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { UNINITIALIZED_TAINT } from '../../infra/local/sandbox/ccm.ts';
import { cidrsOf, instanceOf, leaseLines, networkUnavailable, node, podRoutes } from './helpers.ts';

const names = ['ccm-a', 'ccm-b', 'ccm-c'];

/** Waits (no reconcile: the schedule is off) until every node is ready with all its routes. */
async function untilRouted(sandbox: Sandbox, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const status = await sandbox.status();
    if (status.honestNodesNotReady === 0 && status.routesExpected === names.length * sandbox.routeTableIds.length && status.routesProgrammed === status.routesExpected) return;
    if (performance.now() > deadline) throw new Error(`not routed through the webhook within ${timeoutMs} ms: ${JSON.stringify(status)}`);
    await sleep(100);
  }
}

describe('external CCM: the update that sets the providerID is the join', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ externalCcm: true, tickMs: 0, routeTables: 2 });
    for (const name of names) await sandbox.joinNode(name);
    await untilRouted(sandbox, 25_000);
  });
  afterAll(() => sandbox?.stop());

  it('the CCM initialized every node: providerID of its instance, no uninitialized taint', () => {
    for (const name of names) {
      const stored = node(sandbox, name);
      expect(stored.spec?.providerID).toMatch(new RegExp(`/${instanceOf(sandbox, name)}$`));
      const taints = (sandbox.kube.state.getNode(name) as { spec?: { taints?: Array<{ key: string }> } } | undefined)?.spec?.taints ?? [];
      expect(taints.map((t) => t.key)).not.toContain(UNINITIALIZED_TAINT.key);
    }
  });

  it('one admitted UPDATE per node reached podroute; every other update was skipped by the matchConditions', () => {
    const updates = sandbox.kube.state.webhookCalls().filter((call) => call.operation === 'UPDATE');
    expect(updates.map((call) => call.name).sort()).toEqual(names);
    expect(updates.every((call) => call.ok && call.allowed)).toBe(true);
  });

  it('gives each node its own leased pod CIDR, routed to it in every cluster table, and marks it ready', async () => {
    const cidrs = names.map((name) => cidrsOf(sandbox, name));
    expect(new Set(cidrs.flat()).size).toBe(names.length);
    expect(await leaseLines(sandbox)).toEqual(names.map((name, i) => `${cidrs[i]?.[0]}=${name}`).sort());
    for (const table of sandbox.routeTableIds) {
      const routed = podRoutes(sandbox, table).map((r) => `${r.destination}>${r.instanceId}`).sort();
      expect(routed).toEqual(names.map((name, i) => `${cidrs[i]?.[0]}>${instanceOf(sandbox, name)}`).sort());
    }
    for (const name of names) expect(networkUnavailable(sandbox, name)).toBe('False');
  });

  it('a reconcile afterwards finds nothing to change', async () => {
    const report = await sandbox.snapshot();
    expect(report).toMatchObject({ wrongRoutes: 0, duplicateCidrs: 0, leakedCidrs: 0, honestNodesNotReady: 0 });
    expect(report.joinToReadyMs.p50).not.toBeNull();
    const result = await sandbox.tick();
    expect(result).toMatchObject({ nodes: names.length, create: 0, replace: 0, delete: 0, allocated: 0, conditionsPatched: 0, errors: 0 });
  });
});
