import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { leaseLines, networkUnavailable, queueIdle, routeLines } from './helpers.ts';

describe('an API server that answers an empty node list', () => {
  let sandbox: Sandbox;
  const names = ['keep-1', 'keep-2', 'keep-3'];

  beforeAll(async () => {
    // No schedule: the one reconcile that sees the empty list is the test's own.
    sandbox = await startSandbox({ tickMs: 0, routeTables: 2 });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('deletes no route, releases no lease and changes no node', async () => {
    const routes = routeLines(sandbox);
    const leases = await leaseLines(sandbox);
    expect(routes).toHaveLength(6);
    // Leases are older than the sandbox's 1 s grace period: only the empty-world rule keeps them.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    sandbox.kube.state.setFailure({ kind: 'emptyList', times: 1 });
    // Empty means stop: the run fails (retryably) before it writes anything.
    await expect(sandbox.tick()).rejects.toThrow(/node listing is empty while 3 CIDR leases exist/);
    await queueIdle(sandbox);

    expect(routeLines(sandbox)).toEqual(routes);
    expect(await leaseLines(sandbox)).toEqual(leases);
    for (const name of names) expect(networkUnavailable(sandbox, name)).toBe('False');
  });

  it('goes back to normal once the list is right again', async () => {
    const result = await sandbox.tick();
    expect(result.nodes).toBe(3);
    expect(result.delete).toBe(0);
    expect(routeLines(sandbox)).toHaveLength(6);
  });
});
