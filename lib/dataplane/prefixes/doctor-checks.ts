/**
 * Prefixes mode's `podroute doctor` checks, read-only: EC2 lists the managed nodes' primary
 * interfaces and subnets; each of those subnets has a podroute reservation (a pod range) inside
 * every cluster CIDR, and no other owner's `prefix` reservation under SyncFromCloud
 * (./pod-ranges.ts says why); each pod range has free blocks left in the lease table (a count
 * query: nothing is registered or written).
 */
import { formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Config } from '../../config.ts';
import { errorText } from '../../errors.ts';
import { instanceIdOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import { fail, gather, ok, shortList, warn } from '../../usecases/doctor-check.ts';
import type { CheckResult, PlaneDoctorChecks, RoleWrites } from '../../usecases/doctor-check.ts';
import type { EniPrefixes, Subnet, Subnets } from '../../usecases/ports.ts';
import { foreignPrefixReservations, noReservationMessage, placeNode, podRanges, undersizedRanges } from './pod-ranges.ts';
import type { PrefixConfig, PrefixWorld } from './pod-ranges.ts';
import { readPrefixWorld } from './prefix-world.ts';
import { PODROUTE_RESERVATION_DESCRIPTION } from './reservation-plan.ts';

type PrefixesDoctorConfig = PrefixConfig & Pick<Config, 'nodeMaskSize'>;

export interface PrefixesDoctorPorts {
  config: PrefixesDoctorConfig;
  prefixes: Pick<EniPrefixes, 'describeInterfaces'>;
  subnets: Subnets;
  /** Blocks used and in all of a pod range's CIDR set, read from the lease table; null: no table to read. */
  rangeUsage: ((range: string) => Promise<{ used: number; total: number }>) | null;
}

/** Prefix delegation and a departed node's unassign, by reconcile and by the worker (serverless.yml EniPrefixes in both roles). */
export const WRITE_PERMISSIONS: readonly RoleWrites[] = [
  { role: 'ReconcileRole', actions: ['ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses'], resource: 'network-interface' },
  { role: 'RouteWorkerRole', actions: ['ec2:AssignPrivateIpAddresses', 'ec2:AssignIpv6Addresses', 'ec2:UnassignPrivateIpAddresses', 'ec2:UnassignIpv6Addresses'], resource: 'network-interface' },
];

/** A pod range this used (share of its blocks) is a warning. */
const USAGE_WARN_SHARE = 0.8;
/** Nodes named in one line. */
const SHOWN_NODES = 10;

export function doctorChecks(ports: PrefixesDoctorPorts): PlaneDoctorChecks {
  return async (managed) => {
    if (managed === null) return [warn('subnets', 'not checked: the nodes could not be read')];
    const results: CheckResult[] = [];
    const world = await gather('subnets', results, () => readPrefixWorld(managed, ports));
    if (!world) return results;
    results.push(checkSubnets(managed, world, ports.config));
    const subnets = [...world.subnets.values()].sort((a, b) => a.subnetId.localeCompare(b.subnetId));
    for (const subnet of subnets) results.push(checkReservations(subnet, nodesIn(subnet, managed, world), ports.config));
    results.push(...(await checkFreeBlocks(subnets, ports)));
    return results;
  };
}

/** The managed nodes whose primary interface is in `subnet`. */
function nodesIn(subnet: Subnet, managed: Node[], world: PrefixWorld): Node[] {
  return managed.filter((node) => {
    const instanceId = instanceIdOf(node);
    return instanceId !== null && world.interfaces.get(instanceId)?.subnetId === subnet.subnetId;
  });
}

function checkSubnets(managed: Node[], world: PrefixWorld, config: PrefixesDoctorConfig): CheckResult {
  const unlisted = managed.flatMap((node) => {
    const placement = placeNode(node, world, config);
    return placement.kind === 'unlisted' ? [placement.message] : [];
  });
  const named = [...world.subnets.values()].map((s) => `${s.subnetId}${s.availabilityZone ? ` (${s.availabilityZone})` : ''}`).sort();
  const detail = `${managed.length} managed nodes in ${named.length} subnets${named.length > 0 ? `: ${named.join(', ')}` : ''}`;
  if (unlisted.length > 0) return fail('subnets', `${detail}; ${unlisted.length} not placed: ${shortList(unlisted, SHOWN_NODES, '; ')}`);
  return ok('subnets', detail);
}

function checkReservations(subnet: Subnet, nodes: Node[], config: PrefixesDoctorConfig): CheckResult {
  const label = `reservations ${subnet.subnetId}`;
  const ranges = podRanges(subnet, config);
  const missing = config.clusterCidrs.filter((cluster) => !ranges.some((r) => r.clusterCidr === formatted(cluster)));
  const names = nodes.map((node) => node.metadata.name).sort();
  const held = `${nodes.length} managed nodes${names.length > 0 ? ` (${shortList(names, SHOWN_NODES)})` : ''}`;
  if (missing.length > 0) return fail(label, `${held}: ${noReservationMessage(subnet, missing, config)}`);
  const foreign = config.nodeSyncMode === 'SyncFromCloud' ? foreignPrefixReservations(subnet, config) : [];
  if (foreign.length > 0) {
    const list = foreign.map((r) => `${r.reservationId} (${r.cidr}, Description ${r.description ?? 'none'})`).join(', ');
    return fail(label, `${held}: another owner's prefix reservations ${list}: under SyncFromCloud EC2 may pick a node's prefix there; podroute's must be the subnet's only prefix reservations`);
  }
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  const detail = `${held}; pod ranges ${ranges.map((r) => r.range).join(', ')} (Description ${mark})`;
  const undersized = undersizedRanges(subnet, config);
  if (undersized.length > 0) return warn(label, `${detail}; skipped as smaller than a delegated prefix: ${undersized.map((r) => `${r.reservation.reservationId} (${r.range})`).join(', ')}`);
  return ok(label, detail);
}

async function checkFreeBlocks(subnets: Subnet[], ports: PrefixesDoctorPorts): Promise<CheckResult[]> {
  const ranges = [...new Set(subnets.flatMap((subnet) => podRanges(subnet, ports.config).map((r) => r.range)))].sort();
  if (ranges.length === 0) return [];
  const { rangeUsage } = ports;
  if (rangeUsage === null) return [warn('free blocks', 'not checked: pass --cidr-table-name')];
  return Promise.all(ranges.map(async (range) => {
    const label = `free blocks ${range}`;
    const mask = ports.config.nodeMaskSize[tryParseCidr(range)?.family ?? 4];
    try {
      const { used, total } = await rangeUsage(range);
      const detail = `${total - used} of ${total} /${mask} blocks free`;
      if (used >= total) return fail(label, `${detail}: new nodes of its subnet get no pod CIDR; add a podroute reservation to the subnet`);
      if (used > total * USAGE_WARN_SHARE) return warn(label, `${detail}: little room to grow`);
      return ok(label, detail);
    } catch (error) {
      return fail(label, `cannot read the lease table: ${errorText(error)}`);
    }
  }));
}

const formatted = (text: string): string => {
  const cidr = tryParseCidr(text);
  return cidr ? formatCidr(cidr) : text;
};
