import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, podRoutes } from './helpers.ts';

/** The schedule is off: each repair is one explicit reconcile, then the worker drains the queue. */
describe('the reconcile repairs routes that drifted', () => {
  let sandbox: Sandbox;
  let subnetId: string;
  let table1: string;
  let table2: string;

  const spareInstance = () => sandbox.ec2.state.addInstance({ subnetId }).id;
  const routeIn = (table: string, destination: string) => podRoutes(sandbox, table).find((r) => r.destination === destination);

  beforeAll(async () => {
    sandbox = await startSandbox({ tickMs: 0, routeTables: 2 });
    await sandbox.joinNode('fix-a');
    await sandbox.joinNode('fix-b');
    await sandbox.settle({ timeoutMs: 25_000 });
    subnetId = sandbox.ec2.state.instances.get(instanceOf(sandbox, 'fix-a'))?.subnetId ?? '';
    [table1 = '', table2 = ''] = sandbox.routeTableIds;
  });
  afterAll(() => sandbox?.stop());

  it('replaces a route that points at an old instance (a moved pod CIDR)', async () => {
    const cidr = cidrsOf(sandbox, 'fix-a')[0] ?? '';
    const old = spareInstance();
    sandbox.ec2.state.replaceRoute({ routeTableId: table1, destinationCidr: cidr, instanceId: old });
    expect(routeIn(table1, cidr)).toEqual({ destination: cidr, instanceId: old, state: 'active' });
    const replacesBefore = sandbox.ec2.stats.count('ReplaceRoute');

    const result = await sandbox.tick();
    expect(result.replace).toBe(1);
    await sandbox.settle({ timeoutMs: 20_000 });

    expect(routeIn(table1, cidr)).toEqual({ destination: cidr, instanceId: instanceOf(sandbox, 'fix-a'), state: 'active' });
    expect(sandbox.ec2.stats.count('ReplaceRoute')).toBeGreaterThan(replacesBefore);
  });

  it('replaces a blackholed route whose pod CIDR a live node still owns', async () => {
    const cidr = cidrsOf(sandbox, 'fix-b')[0] ?? '';
    const doomed = spareInstance();
    sandbox.ec2.state.replaceRoute({ routeTableId: table2, destinationCidr: cidr, instanceId: doomed });
    sandbox.ec2.state.terminateInstance(doomed);
    expect(routeIn(table2, cidr)?.state).toBe('blackhole');

    await sandbox.tick();
    await sandbox.settle({ timeoutMs: 20_000 });

    expect(routeIn(table2, cidr)).toEqual({ destination: cidr, instanceId: instanceOf(sandbox, 'fix-b'), state: 'active' });
  });

  it('deletes a blackholed route that no live node owns', async () => {
    const orphan = '100.64.200.0/24';
    const doomed = spareInstance();
    sandbox.ec2.state.addRoute({ routeTableId: table1, destinationCidr: orphan, instanceId: doomed });
    sandbox.ec2.state.terminateInstance(doomed);
    expect(routeIn(table1, orphan)?.state).toBe('blackhole');

    const result = await sandbox.tick();
    expect(result.delete).toBe(1);
    await sandbox.settle({ timeoutMs: 20_000 });

    expect(routeIn(table1, orphan)).toBeUndefined();
    expect(podRoutes(sandbox, table1)).toHaveLength(2);
  });

  it('never touches a route in a table that is not the cluster’s', async () => {
    const other = [...sandbox.ec2.state.routeTables.values()].find((t) => !sandbox.routeTableIds.includes(t.id))?.id ?? '';
    const stranger = spareInstance();
    sandbox.ec2.state.addRoute({ routeTableId: other, destinationCidr: '100.64.201.0/24', instanceId: stranger });

    await sandbox.tick();
    await sandbox.settle({ timeoutMs: 20_000 });

    expect(podRoutes(sandbox, other)).toEqual([{ destination: '100.64.201.0/24', instanceId: stranger, state: 'active' }]);
  });
});
