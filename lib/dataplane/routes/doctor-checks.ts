/**
 * Routes mode's `podroute doctor` checks, read-only: the cluster's route tables are found; the
 * route quota is read from Service Quotas (applied value, else AWS's default, else ROUTE_QUOTA with
 * a warning); each table has room under it for every route it holds (podroute's or not, as the
 * RouteTableHeadroom gauge counts them: lib/routes/route-table-headroom.ts) plus the managed
 * nodes' routes it still lacks; the managed nodes' primary
 * interfaces carry the cluster tag (the route worker turns their source/destination check off,
 * ModifyNetworkInterfaceAttribute, and its IAM statement allows that only on interfaces tagged
 * `kubernetes.io/cluster/<name>`). With a DryRun port, EC2 is asked whether the credentials in
 * use may create a route in each table and turn off a managed node's source/destination check.
 */
import { formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Config } from '../../config.ts';
import { errorText } from '../../errors.ts';
import { instanceIdOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import type { RouteTable } from '../../routes/index.ts';
import { clusterTagKey } from '../../routes/route-tables.ts';
import { MAX_ROUTE_QUOTA, routeCounts } from '../../routes/route-table-headroom.ts';
import { fail, gather, ok, shortList, warn } from '../../usecases/doctor-check.ts';
import type { CheckResult, PlaneDoctorChecks, RoleWrites } from '../../usecases/doctor-check.ts';
import type { PrimaryInterfaces, RouteQuotaSource, RouteTables } from '../../usecases/ports.ts';

type RoutesDoctorConfig = Pick<Config, 'clusterName' | 'clusterCidrs' | 'routeTableIds'>;

export interface RoutesDoctorPorts {
  config: RoutesDoctorConfig;
  /** Where the account's quota is read. */
  quotas: RouteQuotaSource;
  /** The quota used when Service Quotas answers none (ROUTE_QUOTA, --route-quota). */
  fallbackQuota: number;
  routeTables: Pick<RouteTables, 'listRouteTables'>;
  interfaces: PrimaryInterfaces;
  /** EC2 DryRun of the worker's writes, as the caller; null: not asked. */
  dryRun: WriteDryRun | null;
}

type DryRunAnswer = { allowed: true } | { allowed: false; reason: string };
export interface WriteDryRun {
  mayCreateRoute(routeTableId: string, destinationCidr: string, networkInterfaceId: string): Promise<DryRunAnswer>;
  mayTurnOffSourceDestCheck(networkInterfaceId: string): Promise<DryRunAnswer>;
}

/** The route worker's EC2 writes (serverless.yml RouteWorkerRole: RouteWrites, SourceDestCheck). */
export const WRITE_PERMISSIONS: readonly RoleWrites[] = [
  { role: 'RouteWorkerRole', actions: ['ec2:CreateRoute', 'ec2:ReplaceRoute', 'ec2:DeleteRoute'], resource: 'route-table' },
  { role: 'RouteWorkerRole', actions: ['ec2:ModifyNetworkInterfaceAttribute'], resource: 'network-interface' },
];

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
    if (tables) {
      const quota = await readQuota(ports);
      results.push(quota.result, ...checkQuota(tables, managed, quota.value));
    }
    const instances = new Map(managed.flatMap((node) => {
      const id = instanceIdOf(node);
      return id === null ? [] : [[id, node.metadata.name] as const];
    }));
    try {
      const interfaces = instances.size === 0 ? [] : await ports.interfaces.primaryInterfaces([...instances.keys()]);
      results.push(checkInterfaceTags(interfaces, instances, ports.config));
      if (ports.dryRun && tables) results.push(await dryRunWrites(ports.dryRun, tables, interfaces[0]?.networkInterfaceId, ports.config));
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

/** The quota: applied, else AWS's default, else the fallback with a warning; a value outside 1..MAX_ROUTE_QUOTA is no answer. */
async function readQuota(ports: RoutesDoctorPorts): Promise<{ value: number; result: CheckResult }> {
  const errors: string[] = [];
  const reads: Array<[string, () => Promise<number>]> = [
    ['applied', () => ports.quotas.applied()],
    ["AWS's default", () => ports.quotas.awsDefault()],
  ];
  for (const [what, read] of reads) {
    try {
      const value = await read();
      if (Number.isInteger(value) && value >= 1 && value <= MAX_ROUTE_QUOTA) return { value, result: ok('route quota', `${value} routes per route table (Service Quotas vpc/L-93826ACB, ${what})`) };
      errors.push(`${what}: ${String(value)} is outside 1..${MAX_ROUTE_QUOTA}`);
    } catch (error) {
      errors.push(`${what}: ${errorText(error)}`);
    }
  }
  const value = ports.fallbackQuota;
  return { value, result: warn('route quota', `${value} routes per route table from ROUTE_QUOTA (--route-quota): Service Quotas answered none (${errors.join('; ')})`) };
}

function checkQuota(tables: RouteTable[], managed: Node[], quota: number): CheckResult[] {
  return tables.map((table) => {
    const present = new Set(table.routes.map((route) => route.destinationCidr));
    // The routes podroute will add: one per managed node's pod CIDR the table lacks.
    const missing = { 4: 0, 6: 0 };
    for (const text of managed.flatMap((node) => podCidrsOf(node))) {
      const cidr = tryParseCidr(text);
      if (cidr && !present.has(formatCidr(cidr))) missing[cidr.family] += 1;
    }
    const now = routeCounts(table);
    const family = now[6] + missing[6] > now[4] + missing[4] ? 6 : 4;
    const projected = now[family] + missing[family];
    const label = `route quota ${table.routeTableId}`;
    const detail = `${projected} of ${quota} IPv${family} routes (${now[family]} in the table, podroute's or not, + ${missing[family]} for ${managed.length} managed nodes)`;
    if (projected > quota) return fail(label, `${detail}: over the quota; raise "Routes per route table" (up to ${MAX_ROUTE_QUOTA})`);
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

/** DryRun CreateRoute in every table (to a managed node's interface) and the source/destination check of that interface. */
async function dryRunWrites(dryRun: WriteDryRun, tables: RouteTable[], eni: string | undefined, config: RoutesDoctorConfig): Promise<CheckResult> {
  const label = 'dry run writes';
  const destination = config.clusterCidrs[0];
  if (eni === undefined || destination === undefined || tables.length === 0) return warn(label, 'not checked: no managed node with a primary interface, or no route table');
  const asks: Array<[string, () => Promise<DryRunAnswer>]> = [
    ...tables.map((t): [string, () => Promise<DryRunAnswer>] => [`ec2:CreateRoute on ${t.routeTableId}`, () => dryRun.mayCreateRoute(t.routeTableId, destination, eni)]),
    [`ec2:ModifyNetworkInterfaceAttribute on ${eni}`, () => dryRun.mayTurnOffSourceDestCheck(eni)],
  ];
  const denied: string[] = [];
  for (const [what, ask] of asks) {
    try {
      const answer = await ask();
      if (!answer.allowed) denied.push(what);
    } catch (error) {
      return fail(label, `cannot ask EC2 (${what}): ${errorText(error)}`);
    }
  }
  if (denied.length > 0) return fail(label, `your credentials may not ${shortList(denied, 5)} (EC2 DryRun: UnauthorizedOperation); with podroute's role, grant its RouteWrites and SourceDestCheck statements (serverless.yml)`);
  return ok(label, `your credentials may ${asks.map(([what]) => what).join(', ')} (EC2 DryRun)`);
}
