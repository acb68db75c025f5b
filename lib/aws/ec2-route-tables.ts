/**
 * EC2 route tables of the cluster: list them (all pages), and create, replace, delete and re-read
 * the pod-CIDR routes in them, idempotently. The node side of a route is lib/aws/ec2-route-targets.ts.
 */
import { CreateRouteCommand, CreateTagsCommand, DeleteRouteCommand, DeleteTagsCommand, DescribeRouteTablesCommand, ReplaceRouteCommand } from '@aws-sdk/client-ec2';
import type { DescribeRouteTablesCommandInput, EC2Client } from '@aws-sdk/client-ec2';
import { formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import { clusterTagKey, parseRouteTables } from '../routes/route-tables.ts';
import type { Route, RouteTable } from '../routes/route-tables.ts';
import { ROUTE_TABLE_FULL_TAG, formatFullMark } from '../routes/table-full.ts';
import type { FullMark } from '../routes/table-full.ts';
import type { Cidr } from '../cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../errors.ts';
import type { RouteSpec, RouteTables } from '../usecases/ports.ts';
import { awsErrorCode } from './aws-errors.ts';
import { RouteConflictError, classifyEc2Error, toPodrouteError } from './ec2-errors.ts';
import { RouteMissingError } from '../usecases/port-errors.ts';
import { allPages } from './ec2-paging.ts';

interface Ec2RouteTablesOptions {
  /** Tables tagged `kubernetes.io/cluster/<clusterName>` (any value) are the cluster's. */
  clusterName: string;
  /** Explicit tables from configuration; when given, these are used instead of the tag. */
  routeTableIds?: readonly string[];
  /** MaxResults per DescribeRouteTables page (5..100). Default 100. */
  pageSize?: number;
}

/**
 * ROUTE_TABLE_IDS names tables that podroute cannot use: missing ones, or ones without the cluster
 * tag that the worker's IAM requires for route writes. Configuration, so not retryable.
 */
class RouteTableConfigError extends InvalidInputError {
  override name = 'RouteTableConfigError';
  constructor(
    message: string,
    readonly missing: readonly string[],
    readonly untagged: readonly string[],
  ) {
    super(message);
  }
}

function checkListedTables(ids: readonly string[], tables: readonly RouteTable[], tag: string): void {
  const found = new Map(tables.map((table) => [table.routeTableId, table]));
  const missing = ids.filter((id) => !found.has(id));
  const untagged = ids.filter((id) => {
    const table = found.get(id);
    return table !== undefined && !Object.hasOwn(table.tags, tag);
  });
  if (missing.length === 0 && untagged.length === 0) return;
  const parts = [
    ...(missing.length > 0 ? [`${missing.join(', ')} ${missing.length === 1 ? 'does' : 'do'} not exist`] : []),
    ...(untagged.length > 0
      ? [`${untagged.join(', ')} ${untagged.length === 1 ? 'lacks' : 'lack'} the tag ${tag} (add it, any value: the worker may only write routes in tables that carry it)`]
      : []),
  ];
  throw new RouteTableConfigError(`ROUTE_TABLE_IDS: ${parts.join('; ')}`, missing, untagged);
}

export class Ec2RouteTables implements RouteTables {
  private readonly pageSize: number;

  constructor(
    private readonly client: EC2Client,
    private readonly options: Ec2RouteTablesOptions,
  ) {
    this.pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 5 || this.pageSize > 100) {
      throw new InvalidInputError(`route table page size ${options.pageSize}: want 5..100`);
    }
    if (options.clusterName === '') {
      throw new InvalidInputError('a cluster name is required: the cluster\'s route tables carry the tag kubernetes.io/cluster/<name>, listed or not');
    }
  }

  /**
   * Every route table of the cluster, all pages, translated to podroute's terms by the one
   * translation the plan CLI uses too (`parseRouteTables`, lib/routes/route-tables.ts). With explicit
   * ids, those tables, each of which must carry the cluster tag: the worker's IAM allows route writes
   * only on tagged tables, so an untagged listed table would be planned for and then refused at
   * every write. A listed id that is missing or untagged is a RouteTableConfigError (not retryable)
   * naming them all.
   */
  async listRouteTables(): Promise<RouteTable[]> {
    const ids = this.options.routeTableIds ?? [];
    const tag = clusterTagKey(this.options.clusterName);
    // EC2 API Reference, DescribeRouteTables: the `route-table-id` filter matches listed ids and, as
    // every filter, simply matches nothing for an id that does not exist, whereas RouteTableIds fails
    // the whole call with InvalidRouteTableID.NotFound naming only one id. The filter lets every
    // missing id be named at once, and keeps MaxResults paging (both filters page alike).
    const filter = ids.length > 0 ? { Name: 'route-table-id', Values: [...ids] } : { Name: 'tag-key', Values: [tag] };
    const base: DescribeRouteTablesCommandInput = { Filters: [filter], MaxResults: this.pageSize };
    const raw = await allPages('DescribeRouteTables', async (nextToken) => {
      const out = await this.client.send(new DescribeRouteTablesCommand({ ...base, ...(nextToken ? { NextToken: nextToken } : {}) }));
      return { items: out.RouteTables, nextToken: out.NextToken };
    });
    const tables = parseRouteTables({ RouteTables: raw });
    if (ids.length > 0) checkListedTables(ids, tables, tag);
    return tables;
  }

  /**
   * Creates the route. `'exists'` when the destination already routes to the same interface
   * (an earlier attempt won); a `RouteConflictError` when it routes elsewhere.
   */
  async createRoute(spec: RouteSpec): Promise<'created' | 'exists'> {
    const dest = destination(spec.destinationCidr);
    try {
      await this.client.send(new CreateRouteCommand({ RouteTableId: spec.routeTableId, ...dest.param, NetworkInterfaceId: spec.networkInterfaceId }));
      return 'created';
    } catch (error) {
      // A conflict on CreateRoute is `RouteAlreadyExists`: the destination has a route already.
      if (classifyEc2Error(error) !== 'conflict') {
        throw toPodrouteError(error, { operation: 'CreateRoute', routeTableId: spec.routeTableId, subject: spec.destinationCidr });
      }
      const existing = await this.describeRoute(spec.routeTableId, spec.destinationCidr);
      if (!existing) {
        throw new PodrouteError(`route ${spec.destinationCidr} in ${spec.routeTableId} existed at create and vanished before re-read`, {
          retryable: true,
          cause: error,
        });
      }
      if (existing.networkInterfaceId === spec.networkInterfaceId && !existing.blackhole) return 'exists';
      throw new RouteConflictError(
        spec.routeTableId,
        spec.destinationCidr,
        spec.networkInterfaceId,
        {
          ...(existing.networkInterfaceId !== null ? { networkInterfaceId: existing.networkInterfaceId } : {}),
          ...(existing.instanceId !== null ? { instanceId: existing.instanceId } : {}),
          ...(existing.gatewayId !== undefined ? { gatewayId: existing.gatewayId } : {}),
          state: existing.blackhole ? 'blackhole' : 'active',
        },
        { cause: error },
      );
    }
  }

  /**
   * Points an existing route at another interface (a blackhole or a moved pod CIDR). A
   * `RouteMissingError` when the destination has no route (any more): EC2 answers that with
   * `InvalidParameterValue`, not `InvalidRoute.NotFound` (seen on AWS and reproduced by moto,
   * getmoto/moto#6425; the API reference names no code), and `InvalidParameterValue` is EC2's
   * catch-all for validation errors, so it means "no route" only when a re-read shows none.
   */
  async replaceRoute(spec: RouteSpec): Promise<void> {
    const dest = destination(spec.destinationCidr);
    try {
      await this.client.send(new ReplaceRouteCommand({ RouteTableId: spec.routeTableId, ...dest.param, NetworkInterfaceId: spec.networkInterfaceId }));
    } catch (error) {
      const mapped = toPodrouteError(error, { operation: 'ReplaceRoute', routeTableId: spec.routeTableId, subject: spec.destinationCidr });
      if (awsErrorCode(error) !== 'InvalidParameterValue') throw mapped;
      const now = await this.describeRoute(spec.routeTableId, spec.destinationCidr);
      if (now === null || now.propagated === 'vgw') throw new RouteMissingError(spec.routeTableId, spec.destinationCidr, { cause: mapped });
      throw mapped;
    }
  }

  /** Deletes the route; `'absent'` when there was none (an earlier attempt won). */
  async deleteRoute(spec: { routeTableId: string; destinationCidr: string }): Promise<'deleted' | 'absent'> {
    const dest = destination(spec.destinationCidr);
    try {
      await this.client.send(new DeleteRouteCommand({ RouteTableId: spec.routeTableId, ...dest.param }));
      return 'deleted';
    } catch (error) {
      // The route is gone (`InvalidRoute.NotFound`); a missing table is an error of its own.
      if (awsErrorCode(error) === 'InvalidRoute.NotFound') return 'absent';
      throw toPodrouteError(error, { operation: 'DeleteRoute', routeTableId: spec.routeTableId, subject: spec.destinationCidr });
    }
  }

  /**
   * Re-reads one table and returns its route for the destination in podroute's terms (the static
   * one first), or null.
   */
  async describeRoute(routeTableId: string, destinationCidr: string): Promise<Route | null> {
    const wanted = formatCidr(destination(destinationCidr).cidr);
    const tables = parseRouteTables({ RouteTables: await this.describeTable(routeTableId) });
    const routes = (tables.find((t) => t.routeTableId === routeTableId)?.routes ?? []).filter((route) => route.destinationCidr === wanted);
    // A static and a propagated route may share the destination (Amazon VPC User Guide, "How route
    // priority works"): the static one is the route calls act on, so it is the answer when there is
    // one; a propagated one is answered only when it is alone (and is never changed by podroute).
    return routes.find((route) => route.propagated === undefined) ?? routes[0] ?? null;
  }

  private async describeTable(routeTableId: string) {
    try {
      const out = await this.client.send(new DescribeRouteTablesCommand({ RouteTableIds: [routeTableId] }));
      return out.RouteTables ?? [];
    } catch (error) {
      throw toPodrouteError(error, { operation: 'DescribeRouteTables', routeTableId });
    }
  }

  /** Tags the table `podroute.io/route-table-full = <routeCount>@<ISO time>` (lib/routes/table-full.ts). */
  async markRouteTableFull(routeTableId: string, mark: FullMark): Promise<void> {
    try {
      await this.client.send(
        new CreateTagsCommand({ Resources: [routeTableId], Tags: [{ Key: ROUTE_TABLE_FULL_TAG, Value: formatFullMark(mark) }] }),
      );
    } catch (error) {
      throw toPodrouteError(error, { operation: 'CreateTags', routeTableId });
    }
  }

  /** Removes the full mark (whatever its value); removing an absent tag is no error in EC2. */
  async clearRouteTableFull(routeTableId: string): Promise<void> {
    try {
      await this.client.send(new DeleteTagsCommand({ Resources: [routeTableId], Tags: [{ Key: ROUTE_TABLE_FULL_TAG }] }));
    } catch (error) {
      throw toPodrouteError(error, { operation: 'DeleteTags', routeTableId });
    }
  }
}

/** The destination as the right request parameter for its family. */
function destination(text: string): { cidr: Cidr; param: { DestinationCidrBlock: string } | { DestinationIpv6CidrBlock: string } } {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new InvalidInputError(`invalid route destination ${JSON.stringify(text)}: want an IPv4 or IPv6 CIDR`);
  return { cidr, param: cidr.family === 4 ? { DestinationCidrBlock: text } : { DestinationIpv6CidrBlock: text } };
}
