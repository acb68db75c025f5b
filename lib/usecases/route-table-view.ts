/**
 * The cluster's route tables as one worker invocation sees them: listed once, on first use, and
 * shared by every message of the SQS batch (a listing per message would cost O(routes) each, so
 * O(n²) in a mass join). The batch's own writes are applied to the view as they succeed, so a
 * message that finishes after another sees that other's route: a node whose routes are made by
 * several messages of one batch has its condition settled by the last of them.
 *
 * What the view may answer, and what is read again from EC2 (lib/usecases/route-writes.ts):
 * - "no route here": trusted; CreateRoute itself refuses a destination that holds a route
 *   (`RouteAlreadyExists`, EC2 API reference, CreateRoute / error codes), and that conflict is
 *   decided again on a fresh read;
 * - "the node's route is here": trusted; nothing is written;
 * - anything else (a blackhole, another instance, a foreign target): read again with DescribeRouteTables
 *   for that one table before acting, because ReplaceRoute overwrites whatever the route holds
 *   (EC2 API reference, ReplaceRoute), and the view may be as old as the invocation;
 * - deletes and failure reports never decide on the view: they re-read (DeleteRoute, like
 *   ReplaceRoute, has no condition on the route's target, and a report flips a node's condition).
 * A failed listing stays failed for the batch: every message that needs it fails alike (retryable
 * when the listing was throttled) instead of each trying again against a throttled API.
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
