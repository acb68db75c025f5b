/**
 * The cluster's route tables as one worker invocation sees them: listed once on first use, shared
 * by the SQS batch, with the batch's own writes applied. "No route" and "the node's route" are
 * trusted (CreateRoute refuses a taken destination with `RouteAlreadyExists`, EC2 API reference);
 * anything else, every delete and every failure report read again, because ReplaceRoute and
 * DeleteRoute have no condition on the target (EC2 API reference). A failed listing fails the batch.
 */
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Route, RouteTable } from '../routes/route-tables.ts';
import type { RouteTables } from './ports.ts';

export class RouteTableView {
  private listing: Promise<void> | undefined;
  private tables: RouteTable[] = [];

  constructor(private readonly source: Pick<RouteTables, 'listRouteTables'>) {}

  /** The tables: listed on first use, then that listing with this view's recorded writes applied. */
  async current(): Promise<readonly RouteTable[]> {
    this.listing ??= this.source.listRouteTables().then((tables) => {
      this.tables = tables;
    });
    await this.listing;
    return this.tables;
  }

  /** Records that the static route of `routeTableId` to `destinationCidr` now targets the instance's interface. */
  recordRoute(routeTableId: string, destinationCidr: string, target: { instanceId: string; networkInterfaceId: string }): void {
    const cidr = tryParseCidr(destinationCidr);
    if (cidr === null) return;
    // A route to an instance's interface is described with the instance too (EC2 API reference,
    // Route: InstanceId, NetworkInterfaceId), so it is an `instance` route to the planner.
    const route: Route = {
      routeTableId,
      destinationCidr: formatCidr(cidr),
      family: cidr.family,
      instanceId: target.instanceId,
      networkInterfaceId: target.networkInterfaceId,
      target: 'instance',
      blackhole: false,
    };
    this.update(routeTableId, route.destinationCidr, route);
  }

  /** Records that the static route of `routeTableId` to `destinationCidr` is gone. */
  recordDeleted(routeTableId: string, destinationCidr: string): void {
    const cidr = tryParseCidr(destinationCidr);
    if (cidr !== null) this.update(routeTableId, formatCidr(cidr), null);
  }

  /** Replaces the table's static routes to the destination (propagated ones stay: no route call changes them). */
  private update(routeTableId: string, destinationCidr: string, route: Route | null): void {
    this.tables = this.tables.map((table) => {
      if (table.routeTableId !== routeTableId) return table;
      const kept = table.routes.filter((r) => r.destinationCidr !== destinationCidr || r.propagated !== undefined);
      return { ...table, routes: route === null ? kept : [...kept, route] };
    });
  }
}
