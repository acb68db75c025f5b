/**
 * EC2 route tables of the cluster: list them (all pages), and create, replace, delete and re-read
 * the pod-CIDR routes in them, idempotently. Also the node side of a route: the instance's primary
 * interface and its source/destination check.
 */
import {
  CreateRouteCommand,
  CreateTagsCommand,
  DeleteRouteCommand,
  DeleteTagsCommand,
  DescribeRouteTablesCommand,
  ModifyInstanceAttributeCommand,
  ReplaceRouteCommand,
} from '@aws-sdk/client-ec2';
import type { DescribeRouteTablesCommandInput, EC2Client, Route, RouteTable } from '@aws-sdk/client-ec2';
import { cidrEquals, tryParseCidr } from '../cidr/cidr.ts';
import { clusterTagKey } from '../routes/route-tables.ts';
import { ROUTE_TABLE_FULL_TAG, formatFullMark } from '../routes/table-full.ts';
import type { FullMark } from '../routes/table-full.ts';
import type { Cidr } from '../cidr/cidr.ts';
import { InvalidInputError, PodrouteError } from '../errors.ts';
import { RouteConflictError, classifyEc2Error, toPodrouteError } from './ec2-errors.ts';
import { primaryInterface } from './ec2-instances.ts';

export interface Ec2RouteTablesOptions {
  /** Tables tagged `kubernetes.io/cluster/<clusterName>` (any value) are the cluster's. */
  clusterName: string;
  /** Explicit tables from configuration; when given, these are used instead of the tag. */
  routeTableIds?: readonly string[];
  /** MaxResults per DescribeRouteTables page (5..100). Default 100. */
  pageSize?: number;
}

export interface RouteSpec {
  routeTableId: string;
  destinationCidr: string;
  networkInterfaceId: string;
}

export interface NodeTarget {
  instanceId: string;
  primaryEniId: string;
  sourceDestCheck: boolean;
}


export class Ec2RouteTables {
  private readonly pageSize: number;

  constructor(
    private readonly client: EC2Client,
    private readonly options: Ec2RouteTablesOptions,
  ) {
    this.pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 5 || this.pageSize > 100) {
      throw new InvalidInputError(`route table page size ${options.pageSize}: want 5..100`);
    }
    if (options.clusterName === '' && (options.routeTableIds ?? []).length === 0) {
      throw new InvalidInputError('a cluster name (for the route table tag) or explicit route table ids are required');
    }
  }

  /** Every route table of the cluster, as EC2 describes them, all pages. */
  async listRouteTables(): Promise<RouteTable[]> {
    const ids = this.options.routeTableIds ?? [];
    const base: DescribeRouteTablesCommandInput =
      ids.length > 0
        ? { RouteTableIds: [...ids] }
        : { Filters: [{ Name: 'tag-key', Values: [clusterTagKey(this.options.clusterName)] }], MaxResults: this.pageSize };
    const tables: RouteTable[] = [];
    const seen = new Set<string>();
    let nextToken: string | undefined;
    do {
      let out;
      try {
        out = await this.client.send(new DescribeRouteTablesCommand({ ...base, ...(nextToken ? { NextToken: nextToken } : {}) }));
      } catch (error) {
        throw toPodrouteError(error, { operation: 'DescribeRouteTables' });
      }
      tables.push(...(out.RouteTables ?? []));
      nextToken = out.NextToken || undefined;
      if (nextToken !== undefined) {
        if (seen.has(nextToken)) throw new PodrouteError('EC2 DescribeRouteTables returned the same NextToken twice', { retryable: true });
        seen.add(nextToken);
      }
    } while (nextToken !== undefined);
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
      if (classifyEc2Error(error) !== 'route-exists') {
        throw toPodrouteError(error, { operation: 'CreateRoute', routeTableId: spec.routeTableId, subject: spec.destinationCidr });
      }
      const existing = await this.describeRoute(spec.routeTableId, spec.destinationCidr);
      if (!existing) {
        throw new PodrouteError(`route ${spec.destinationCidr} in ${spec.routeTableId} existed at create and vanished before re-read`, {
          retryable: true,
          cause: error,
        });
      }
      if (existing.NetworkInterfaceId === spec.networkInterfaceId && existing.State !== 'blackhole') return 'exists';
      throw new RouteConflictError(
        spec.routeTableId,
        spec.destinationCidr,
        spec.networkInterfaceId,
        {
          ...(existing.NetworkInterfaceId !== undefined ? { networkInterfaceId: existing.NetworkInterfaceId } : {}),
          ...(existing.InstanceId !== undefined ? { instanceId: existing.InstanceId } : {}),
          ...(existing.GatewayId !== undefined ? { gatewayId: existing.GatewayId } : {}),
          ...(existing.State !== undefined ? { state: existing.State } : {}),
        },
        { cause: error },
      );
    }
  }

  /** Points an existing route at another interface (a blackhole or a moved pod CIDR). */
  async replaceRoute(spec: RouteSpec): Promise<void> {
    const dest = destination(spec.destinationCidr);
    try {
      await this.client.send(new ReplaceRouteCommand({ RouteTableId: spec.routeTableId, ...dest.param, NetworkInterfaceId: spec.networkInterfaceId }));
    } catch (error) {
      throw toPodrouteError(error, { operation: 'ReplaceRoute', routeTableId: spec.routeTableId, subject: spec.destinationCidr });
    }
  }

  /** Deletes the route; `'absent'` when there was none (an earlier attempt won). */
  async deleteRoute(spec: { routeTableId: string; destinationCidr: string }): Promise<'deleted' | 'absent'> {
    const dest = destination(spec.destinationCidr);
    try {
      await this.client.send(new DeleteRouteCommand({ RouteTableId: spec.routeTableId, ...dest.param }));
      return 'deleted';
    } catch (error) {
      if (classifyEc2Error(error) === 'route-missing') return 'absent';
      throw toPodrouteError(error, { operation: 'DeleteRoute', routeTableId: spec.routeTableId, subject: spec.destinationCidr });
    }
  }

  /** Re-reads one table and returns its route for the destination, or null. */
  async describeRoute(routeTableId: string, destinationCidr: string): Promise<Route | null> {
    const wanted = destination(destinationCidr).cidr;
    let tables: RouteTable[];
    try {
      const out = await this.client.send(new DescribeRouteTablesCommand({ RouteTableIds: [routeTableId] }));
      tables = out.RouteTables ?? [];
    } catch (error) {
      throw toPodrouteError(error, { operation: 'DescribeRouteTables', routeTableId });
    }
    const routes = tables.find((t) => t.RouteTableId === routeTableId)?.Routes ?? [];
    return (
      routes.find((route) => {
        const cidr = tryParseCidr(wanted.family === 4 ? route.DestinationCidrBlock : route.DestinationIpv6CidrBlock);
        return cidr !== null && cidrEquals(cidr, wanted);
      }) ?? null
    );
  }

  /** The instance's primary interface (the route target) and its source/destination check. */
  async nodeTarget(instanceId: string): Promise<NodeTarget> {
    const { instance, eni } = await primaryInterface(this.client, instanceId, 'DescribeInstances');
    return { instanceId, primaryEniId: eni.NetworkInterfaceId, sourceDestCheck: instance.SourceDestCheck ?? eni.SourceDestCheck ?? true };
  }

  /** Turns the instance's source/destination check off. Call it only when `nodeTarget` says it is on. */
  async disableSourceDestCheck(instanceId: string): Promise<void> {
    try {
      await this.client.send(new ModifyInstanceAttributeCommand({ InstanceId: instanceId, SourceDestCheck: { Value: false } }));
    } catch (error) {
      throw toPodrouteError(error, { operation: 'ModifyInstanceAttribute', subject: instanceId });
    }
  }

  /** `nodeTarget`, then the check turned off if (and only if) it was on. */
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

  async prepareRouteTarget(instanceId: string): Promise<NodeTarget & { sourceDestCheckChanged: boolean }> {
    const target = await this.nodeTarget(instanceId);
    if (!target.sourceDestCheck) return { ...target, sourceDestCheckChanged: false };
    await this.disableSourceDestCheck(instanceId);
    return { ...target, sourceDestCheck: false, sourceDestCheckChanged: true };
  }
}

/** The destination as the right request parameter for its family. */
function destination(text: string): { cidr: Cidr; param: { DestinationCidrBlock: string } | { DestinationIpv6CidrBlock: string } } {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new InvalidInputError(`invalid route destination ${JSON.stringify(text)}: want an IPv4 or IPv6 CIDR`);
  return { cidr, param: cidr.family === 4 ? { DestinationCidrBlock: text } : { DestinationIpv6CidrBlock: text } };
}
