import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox, SandboxReport } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, podRoutes } from './helpers.ts';

describe('a throttling storm: tight EC2 token buckets and a share of failing calls', () => {
  let sandbox: Sandbox;
  let report: SandboxReport;
  const names = ['storm-1', 'storm-2', 'storm-3', 'storm-4', 'storm-5'];

  beforeAll(async () => {
    sandbox = await startSandbox({
      routeTables: 2,
      faults: 0.1,
      throttle: { mutating: { capacity: 2, refillPerSecond: 2 }, nonMutating: { capacity: 5, refillPerSecond: 8 } },
    });
    await Promise.all(names.map((name) => sandbox.joinNode(name)));
    report = await sandbox.settle({ timeoutMs: 50_000 });
  }, 60_000);
  afterAll(() => sandbox?.stop());

  it('was a storm: calls were throttled and faults injected', () => {
    expect(report.throttled).toBeGreaterThan(0);
    expect(sandbox.ec2.stats.faults).toBeGreaterThan(0);
  });

  it('still converges: every route in place, every node ready', () => {
    expect(report).toMatchObject({ nodes: 5, nodesReady: 5, routesExpected: 10, routesProgrammed: 10, wrongRoutes: 0, duplicateCidrs: 0 });
    for (const table of sandbox.routeTableIds) {
      expect(podRoutes(sandbox, table).map((r) => `${r.destination}>${r.instanceId}`).sort()).toEqual(
        names.map((name) => `${cidrsOf(sandbox, name)[0]}>${instanceOf(sandbox, name)}`).sort(),
      );
    }
  });

  it('sends nothing to the dead-letter queue', async () => {
    expect(report.dlqMessages).toBe(0);
    expect(await sandbox.queue.dlqDepth()).toBe(0);
  });
});
