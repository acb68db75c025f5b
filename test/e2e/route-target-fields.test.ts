/**
 * podroute against an EC2 that describes a route with only the target field it was made with
 * (the EC2 emulator's `routeTargetFields: 'as-created'`): real EC2 is observed to name both the
 * interface and its instance, but the EC2 API reference does not promise it. podroute makes its
 * routes with NetworkInterfaceId, so here they come back without InstanceId, and podroute must
 * still see them as its nodes' routes: converge, mark the nodes ready, and touch nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../infra/local/sandbox/index.ts';
import type { Sandbox } from '../../infra/local/sandbox/index.ts';
import { cidrsOf, instanceOf, networkUnavailable, queueIdle } from './helpers.ts';

describe('an EC2 that describes routes with only NetworkInterfaceId', () => {
  let sandbox: Sandbox;
  const names = ['node-a', 'node-b', 'node-c'];

  beforeAll(async () => {
    sandbox = await startSandbox({ routeTables: 2, routeTargetFields: 'as-created' });
    for (const name of names) await sandbox.joinNode(name);
    await sandbox.settle({ timeoutMs: 25_000 });
  });
  afterAll(() => sandbox?.stop());

  it('converges: every pod CIDR routed to its node’s primary interface, no wrong route, every node ready', async () => {
    const report = await sandbox.snapshot();
    expect(report).toMatchObject({ nodes: 3, nodesReady: 3, routesExpected: 6, routesProgrammed: 6, wrongRoutes: 0, routesToNonLeaseholder: 0, readyNodesTainted: 0 });
    for (const name of names) expect(networkUnavailable(sandbox, name)).toBe('False');
  });

  it('is described as the switch says: the interface, no instance', () => {
    const routes = sandbox.routeTableIds.flatMap((id) => sandbox.ec2.state.routes(id).filter((r) => r.origin === 'CreateRoute' && r.gatewayId === undefined));
    expect(routes).toHaveLength(6);
    for (const route of routes) expect([route.networkInterfaceId !== undefined, route.instanceId]).toEqual([true, undefined]);
  });

  it('stays put: later reconciles plan nothing for these routes', async () => {
    const result = await sandbox.tick();
    expect(result).toMatchObject({ nodes: 3, create: 0, replace: 0, delete: 0, conditionsPatched: 0, errors: 0 });
    expect(sandbox.logLines.filter((line) => line.event === 'plan.warning')).toEqual([]);
  });

  it('deletes a departed node’s routes (blackholes) and keeps the others', async () => {
    await sandbox.leaveNode('node-b');
    const report = await sandbox.settle({ timeoutMs: 25_000 });
    expect(report).toMatchObject({ nodes: 2, nodesReady: 2, routesExpected: 4, routesProgrammed: 4, wrongRoutes: 0, routesToNonLeaseholder: 0 });
  });

  it('deletes a stale route named by a node’s interface alone (the delete expects the route matched to its instance)', async () => {
    const eni = sandbox.ec2.state.primaryInterface(instanceOf(sandbox, 'node-a'))?.id;
    if (eni === undefined) throw new Error('node-a has no primary interface');
    const taken = new Set(names.flatMap((name) => (sandbox.kube.state.getNode(name) ? cidrsOf(sandbox, name) : [])));
    const stale = ['100.64.5.0/24', '100.64.6.0/24', '100.64.7.0/24'].find((cidr) => !taken.has(cidr));
    if (stale === undefined) throw new Error('no free /24 for the stale route');
    const table = sandbox.routeTableIds[0];
    if (table === undefined) throw new Error('no route table');
    sandbox.ec2.state.addRoute({ routeTableId: table, destinationCidr: stale, networkInterfaceId: eni });
    await sandbox.tick();
    await queueIdle(sandbox);
    const left = sandbox.ec2.state.routes(table).filter((route) => route.destinationCidrBlock === stale);
    expect(left).toEqual([]);
  });
});
