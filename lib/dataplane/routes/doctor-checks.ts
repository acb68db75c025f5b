/**
 * Routes mode's `podroute doctor` checks, read-only: the cluster's route tables are found; each
 * has room under the route quota for the routes it will hold; the managed nodes' primary
 * interfaces carry the cluster tag (the route worker turns their source/destination check off,
 * ModifyNetworkInterfaceAttribute, and its IAM statement allows that only on interfaces tagged
 * `kubernetes.io/cluster/<name>`).
 */
import { containsCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Config } from '../../config.ts';
import { errorText } from '../../errors.ts';
import { instanceIdOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import type { RouteTable } from '../../routes/index.ts';
import { clusterTagKey } from '../../routes/route-tables.ts';
import { fail, gather, ok, shortList, warn } from '../../usecases/doctor-check.ts';
import type { CheckResult, PlaneDoctorChecks } from '../../usecases/doctor-check.ts';
import type { PrimaryInterfaces, RouteTables } from '../../usecases/ports.ts';

type RoutesDoctorConfig = Pick<Config, 'clusterName' | 'clusterCidrs' | 'routeTableIds'>;

export interface RoutesDoctorPorts {
  config: RoutesDoctorConfig;
  /** Routes per route table in this account. */
  routeQuota: number;
  /** The most the quota can be raised to, named in a FAIL line. */
  maxRouteQuota: number;
  routeTables: Pick<RouteTables, 'listRouteTables'>;
  interfaces: PrimaryInterfaces;
}

/** A table this full (share of the quota) is a warning. */
const QUOTA_WARN_SHARE = 0.8;
/** Interfaces named in one FAIL line. */
const SHOWN_INTERFACES = 10;

export function doctorChecks(ports: RoutesDoctorPorts): PlaneDoctorChecks {
  return async (managed) => {
    const results: CheckResult[] = [];
    const tables = await gather('route tables', results, () => ports.routeTables.listRouteTables());
    if (tables) results.push(checkTablesFound(tables, ports.config));
    if (managed === null) return results;
    if (tables) results.push(...checkQuota(tables, managed, ports));
    const instances = new Map(managed.flatMap((node) => {
      const id = instanceIdOf(node);
      return id === null ? [] : [[id, node.metadata.name] as const];
    }));
    try {
      const interfaces = instances.size === 0 ? [] : await ports.interfaces.primaryInterfaces([...instances.keys()]);
      results.push(checkInterfaceTags(interfaces, instances, ports.config));
    } catch (error) {
      results.push(fail('interface tags', `cannot read the nodes' network interfaces: ${errorText(error)}`));
    }
    return results;
  };
}

function checkTablesFound(tables: RouteTable[], config: RoutesDoctorConfig): CheckResult {
  const ids = tables.map((table) => table.routeTableId).sort();
  const how = config.routeTableIds.length > 0 ? 'by id' : `by tag kubernetes.io/cluster/${config.clusterName}`;
  if (config.routeTableIds.length > 0) {
    const missing = config.routeTableIds.filter((id) => !ids.includes(id));
    if (missing.length > 0) return fail('route tables', `not found: ${missing.join(', ')} (found ${ids.join(', ') || 'none'})`);
  }
  if (ids.length === 0) return fail('route tables', `none found ${how}; tag the cluster's route tables or pass --route-table-ids`);
  return ok('route tables', `${ids.length} found ${how}: ${ids.join(', ')}`);
}

function checkQuota(tables: RouteTable[], managed: Node[], ports: RoutesDoctorPorts): CheckResult[] {
  const { config, routeQuota: quota } = ports;
  const clusters = config.clusterCidrs.map((text) => tryParseCidr(text)).filter((c) => c !== null);
  const inCluster = (text: string): boolean => {
    const cidr = tryParseCidr(text);
    return cidr !== null && clusters.some((cluster) => containsCidr(cluster, cidr));
  };
  // One route per managed node and family it has a pod CIDR of.
  const needed = managed.reduce((sum, node) => sum + new Set(podCidrsOf(node).filter(inCluster).map((text) => tryParseCidr(text)?.family)).size, 0);
  return tables.map((table) => {
    // Every route outside the cluster CIDRs (gateways, peerings, prefix lists) counts as another's;
    // the VPC's local routes do not count against the quota.
    const others = table.routes.filter((route) => route.target !== 'local' && !inCluster(route.destinationCidr)).length + table.skippedRoutes;
    const projected = others + needed;
    const label = `route quota ${table.routeTableId}`;
    const detail = `${projected} of ${quota} routes (${others} not podroute's + ${needed} for ${managed.length} managed nodes)`;
    if (projected > quota) return fail(label, `${detail}: over the quota; raise "Routes per route table" (up to ${ports.maxRouteQuota}) and pass --route-quota`);
    if (projected > quota * QUOTA_WARN_SHARE) return warn(label, `${detail}: little room to grow`);
    return ok(label, detail);
  });
}

function checkInterfaceTags(
  interfaces: Awaited<ReturnType<PrimaryInterfaces['primaryInterfaces']>>,
  nodeOfInstance: ReadonlyMap<string, string>,
  config: RoutesDoctorConfig,
): CheckResult {
  const tag = clusterTagKey(config.clusterName);
  const ordered = [...interfaces].sort((a, b) => a.networkInterfaceId.localeCompare(b.networkInterfaceId));
  const untagged = ordered.filter((eni) => !Object.hasOwn(eni.tags, tag));
  if (untagged.length === 0) return ok('interface tags', `the primary interfaces of ${interfaces.length} managed nodes carry ${tag}`);
  const shown = untagged.map((eni) => `${eni.networkInterfaceId} (${nodeOfInstance.get(eni.instanceId) ?? eni.instanceId})`);
  return fail(
    'interface tags',
    `${untagged.length} of ${interfaces.length} managed nodes' primary interfaces lack ${tag}: ${shortList(shown, SHOWN_INTERFACES)}; ` +
      `the route worker cannot turn off their source/destination check: tag them (aws ec2 create-tags --resources <eni> --tags Key=${tag},Value=owned) ` +
      `and tag new ones in the nodes' launch template (TagSpecifications, ResourceType network-interface)`,
  );
}
