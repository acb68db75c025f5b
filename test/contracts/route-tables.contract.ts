/**
 * The RouteTables and RouteTargets contract (lib/usecases/ports.ts): what the use cases rely on from any route-table
 * adapter, run against MemoryRouteTables and Ec2RouteTables over the EC2 emulator
 * (route-tables.contract.test.ts). The world is seeded through the harness, never through the port.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { ROUTE_TABLE_FULL_TAG } from '../../lib/routes/table-full.ts';
import { ResourceNotFoundError, RouteConflictError, RouteMissingError, RouteTableFullError } from '../../lib/usecases/port-errors.ts';
import type { RouteTables, RouteTargets } from '../../lib/usecases/ports.ts';

/** The cluster the harness's port is built for; its tables carry `kubernetes.io/cluster/alpha`. */
export const CONTRACT_CLUSTER = 'alpha';

export interface RouteTablesHarness {
  port: RouteTables;
  targets: RouteTargets;
  /** A table; tagged for CONTRACT_CLUSTER unless `tags` says otherwise. */
  addTable(tags?: Record<string, string>): string;
  addInstance(input?: { sourceDestCheck?: boolean; secondaryEnis?: number }): { instanceId: string; eniId: string; eniIds: string[] };
  terminateInstance(instanceId: string): void;
  addPropagatedRoute(tableId: string, cidr: string): void;
}

export function routeTablesContract(name: string, make: (options: { routeLimit?: number }) => Promise<RouteTablesHarness>): void {
  describe(`RouteTables contract: ${name}`, () => {
    const route = async (h: RouteTablesHarness, table: string, cidr: string) => {
      const found = await h.port.describeRoute(table, cidr);
      return found === null ? null : { instanceId: found.instanceId, networkInterfaceId: found.networkInterfaceId, target: found.target, blackhole: found.blackhole, propagated: found.propagated ?? null };
    };

    it('lists the cluster\'s tagged tables only, each with its local route and its tags', async () => {
      const h = await make({});
      const mine = h.addTable();
      h.addTable({ 'kubernetes.io/cluster/beta': 'owned' });
      h.addTable({});
      const listed = await h.port.listRouteTables();
      expect(listed.map((t) => t.routeTableId)).toEqual([mine]);
      expect(listed[0]?.tags).toEqual({ 'kubernetes.io/cluster/alpha': 'owned' });
      expect(listed[0]?.routes.length).toBeGreaterThan(0);
      expect(listed[0]?.routes.every((r) => r.target === 'local' && r.gatewayId === 'local')).toBe(true);
    });

    it.each(['100.64.1.0/24', 'fd00:10:0:1::/64'])('creates a route to %s once: again to the same interface is `exists`, to another a RouteConflictError', async (cidr) => {
      const h = await make({});
      const table = h.addTable();
      const a = h.addInstance();
      const b = h.addInstance();
      expect(await h.port.createRoute({ routeTableId: table, destinationCidr: cidr, networkInterfaceId: a.eniId })).toBe('created');
      expect(await h.port.createRoute({ routeTableId: table, destinationCidr: cidr, networkInterfaceId: a.eniId })).toBe('exists');
      await expect(h.port.createRoute({ routeTableId: table, destinationCidr: cidr, networkInterfaceId: b.eniId })).rejects.toBeInstanceOf(RouteConflictError);
      // A route to an attached interface names its instance too (EC2 API reference, Route).
      expect(await route(h, table, cidr)).toEqual({ instanceId: a.instanceId, networkInterfaceId: a.eniId, target: 'instance', blackhole: false, propagated: null });
      const listed = (await h.port.listRouteTables())[0]?.routes.filter((r) => r.target !== 'local').map((r) => r.destinationCidr);
      expect(listed).toEqual([cidr]);
    });

    it('replaces a route\'s target; a replace of a destination without a route is a RouteMissingError', async () => {
      const h = await make({});
      const table = h.addTable();
      const [a, b] = [h.addInstance(), h.addInstance()];
      await h.port.createRoute({ routeTableId: table, destinationCidr: '100.64.2.0/24', networkInterfaceId: a.eniId });
      await h.port.replaceRoute({ routeTableId: table, destinationCidr: '100.64.2.0/24', networkInterfaceId: b.eniId });
      expect((await route(h, table, '100.64.2.0/24'))?.instanceId).toBe(b.instanceId);
      await expect(h.port.replaceRoute({ routeTableId: table, destinationCidr: '100.64.3.0/24', networkInterfaceId: b.eniId })).rejects.toBeInstanceOf(RouteMissingError);
      expect(await route(h, table, '100.64.3.0/24')).toBeNull();
    });

    it('deletes a route once: again is `absent`, and the re-read finds none', async () => {
      const h = await make({});
      const table = h.addTable();
      const a = h.addInstance();
      await h.port.createRoute({ routeTableId: table, destinationCidr: '100.64.4.0/24', networkInterfaceId: a.eniId });
      expect(await h.port.deleteRoute({ routeTableId: table, destinationCidr: '100.64.4.0/24' })).toBe('deleted');
      expect(await h.port.deleteRoute({ routeTableId: table, destinationCidr: '100.64.4.0/24' })).toBe('absent');
      expect(await route(h, table, '100.64.4.0/24')).toBeNull();
    });

    it('a route to a terminated instance is a blackhole; a create to another interface conflicts, a replace repairs it', async () => {
      const h = await make({});
      const table = h.addTable();
      const [a, b] = [h.addInstance(), h.addInstance()];
      await h.port.createRoute({ routeTableId: table, destinationCidr: '100.64.5.0/24', networkInterfaceId: a.eniId });
      h.terminateInstance(a.instanceId);
      expect(await route(h, table, '100.64.5.0/24')).toMatchObject({ instanceId: null, networkInterfaceId: a.eniId, blackhole: true });
      await expect(h.port.createRoute({ routeTableId: table, destinationCidr: '100.64.5.0/24', networkInterfaceId: b.eniId })).rejects.toBeInstanceOf(RouteConflictError);
      await h.port.replaceRoute({ routeTableId: table, destinationCidr: '100.64.5.0/24', networkInterfaceId: b.eniId });
      expect(await route(h, table, '100.64.5.0/24')).toMatchObject({ instanceId: b.instanceId, blackhole: false });
    });

    it('reads the static route beside a propagated one, the propagated one alone, and never deletes it', async () => {
      const h = await make({});
      const table = h.addTable();
      const a = h.addInstance();
      h.addPropagatedRoute(table, '100.64.6.0/24');
      h.addPropagatedRoute(table, '100.64.7.0/24');
      await h.port.createRoute({ routeTableId: table, destinationCidr: '100.64.6.0/24', networkInterfaceId: a.eniId });
      expect(await route(h, table, '100.64.6.0/24')).toMatchObject({ instanceId: a.instanceId, propagated: null });
      expect(await route(h, table, '100.64.7.0/24')).toMatchObject({ target: 'gateway', propagated: 'vgw' });
      expect(await h.port.deleteRoute({ routeTableId: table, destinationCidr: '100.64.7.0/24' })).toBe('absent');
      expect(await route(h, table, '100.64.7.0/24')).toMatchObject({ propagated: 'vgw' });
    });

    it('a full table refuses a create with a RouteTableFullError naming the table', async () => {
      const h = await make({ routeLimit: 2 });
      const table = h.addTable();
      const a = h.addInstance();
      for (const cidr of ['100.64.8.0/24', '100.64.9.0/24']) await h.port.createRoute({ routeTableId: table, destinationCidr: cidr, networkInterfaceId: a.eniId });
      const refused = await h.port.createRoute({ routeTableId: table, destinationCidr: '100.64.10.0/24', networkInterfaceId: a.eniId }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(RouteTableFullError);
      expect(refused).toMatchObject({ routeTableId: table, retryable: false });
      expect(await route(h, table, '100.64.10.0/24')).toBeNull();
    });

    it('refuses a destination that is not a CIDR with an InvalidInputError and changes nothing; an unknown table is a ResourceNotFoundError', async () => {
      const h = await make({});
      const table = h.addTable();
      const a = h.addInstance();
      await expect(h.port.createRoute({ routeTableId: table, destinationCidr: 'pods', networkInterfaceId: a.eniId })).rejects.toBeInstanceOf(InvalidInputError);
      await expect(h.port.deleteRoute({ routeTableId: table, destinationCidr: '100.64.0.0/33' })).rejects.toBeInstanceOf(InvalidInputError);
      expect((await h.port.listRouteTables())[0]?.routes.filter((r) => r.target !== 'local')).toEqual([]);
      await expect(h.port.createRoute({ routeTableId: 'rtb-0000000000000dead', destinationCidr: '100.64.1.0/24', networkInterfaceId: a.eniId })).rejects.toBeInstanceOf(ResourceNotFoundError);
    });

    it('prepares a route target: the primary interface, its check turned off once; an unknown instance may be launch lag', async () => {
      const h = await make({});
      const a = h.addInstance({ secondaryEnis: 1 });
      expect(await h.targets.prepareRouteTarget(a.instanceId)).toMatchObject({ instanceId: a.instanceId, primaryEniId: a.eniId, sourceDestCheckChanged: true });
      expect(await h.targets.prepareRouteTarget(a.instanceId)).toMatchObject({ primaryEniId: a.eniId, sourceDestCheckChanged: false });
      const off = h.addInstance({ sourceDestCheck: false });
      expect(await h.targets.prepareRouteTarget(off.instanceId)).toMatchObject({ primaryEniId: off.eniId, sourceDestCheckChanged: false });
      const missing = await h.targets.prepareRouteTarget('i-0000000000000dead').catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(ResourceNotFoundError);
      expect(missing).toMatchObject({ mayBeLaunchLag: true, retryable: false });
    });

    it('names the instance of a primary interface only', async () => {
      const h = await make({});
      const a = h.addInstance({ secondaryEnis: 1 });
      expect(await h.targets.interfaceInstance?.(a.eniId)).toBe(a.instanceId);
      expect(await h.targets.interfaceInstance?.(a.eniIds[1] ?? '')).toBeNull();
      expect(await h.targets.interfaceInstance?.('eni-0000000000000dead')).toBeNull();
    });

    it('marks a table full with a tag and clears it', async () => {
      const h = await make({});
      const table = h.addTable();
      await h.port.markRouteTableFull?.(table, { routeCount: 50, at: Date.UTC(2026, 0, 1) });
      expect((await h.port.listRouteTables())[0]?.tags[ROUTE_TABLE_FULL_TAG]).toBe('50@2026-01-01T00:00:00.000Z');
      await h.port.clearRouteTableFull?.(table);
      await h.port.clearRouteTableFull?.(table);
      expect(Object.keys((await h.port.listRouteTables())[0]?.tags ?? {})).toEqual(['kubernetes.io/cluster/alpha']);
    });
  });
}
