/**
 * Prefixes mode's EC2 read of one run (a reconcile tick, a webhook call): the nodes' primary
 * interfaces and subnets, and the CIDR sets of their pod ranges. One DescribeInstances per 200
 * nodes, one DescribeSubnets, one GetSubnetCidrReservations per subnet, 4 calls at a time: 5,000
 * nodes in 6 subnets cost 32 reads in about 10 round trips, and no write.
 */
import type { CidrSet } from '../../ipam/index.ts';
import type { Logger } from '../../log.ts';
import { errorText } from '../../errors.ts';
import { unmanagedReason } from '../../nodes/managed-node.ts';
import { instanceIdOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import { mapSettled } from '../../util/concurrency.ts';
import type { EniPrefixes, NodeInterface, ReservationSets, Subnet, Subnets } from '../../usecases/ports.ts';
import { podRanges, undersizedRanges } from './pod-ranges.ts';
import type { PrefixConfig, PrefixWorld } from './pod-ranges.ts';
import { DELEGATED_PREFIX } from './reservation-plan.ts';

/** The Warning event reason / metric for a podroute reservation too small for one delegated prefix. */
const UNDERSIZED_RESERVATION_METRIC = 'UndersizedReservations';

/** What the EC2 read needs. */
export interface PrefixReadPorts {
  config: PrefixConfig;
  prefixes: Pick<EniPrefixes, 'describeInterfaces'>;
  subnets: Subnets;
  reservationSets: ReservationSets;
  log: Logger;
}

/** Reads the interfaces of these nodes' instances and their subnets: a few batched calls, not per node. */
export async function readPrefixWorld(nodes: readonly Node[], deps: Pick<PrefixReadPorts, 'prefixes' | 'subnets'>): Promise<PrefixWorld> {
  const { prefixes, subnets } = deps;
  const ids = [...new Set(nodes.flatMap((node) => instanceIdOf(node) ?? []))];
  const interfaces = ids.length > 0 ? await prefixes.describeInterfaces(ids) : new Map<string, NodeInterface>();
  const subnetIds = [...new Set([...interfaces.values()].map((eni) => eni.subnetId))];
  return { interfaces, subnets: subnetIds.length > 0 ? await subnets.describeSubnets(subnetIds) : new Map<string, Subnet>() };
}

/** A pod range whose CIDR set could not be made this run. */
interface FailedRange {
  range: string;
  message: string;
}

/**
 * The CIDR sets of every pod range of the subnets read, in a stable order (for leases). A range
 * too small for a delegated prefix is skipped and told (log line and metric naming the subnet and
 * the reservation); a set that cannot be made is left out and answered in `failed`: neither stops
 * the other subnets' sets.
 */
export async function prefixCidrSets(world: PrefixWorld, deps: PrefixReadPorts): Promise<{ sets: CidrSet[]; failed: FailedRange[] }> {
  const { reservationSets } = deps;
  for (const subnet of world.subnets.values()) {
    for (const r of undersizedRanges(subnet, deps.config)) {
      deps.log.log('warn', 'prefix.undersized-reservation', { subnetId: subnet.subnetId, reservationId: r.reservation.reservationId, cidr: r.reservation.cidr, range: r.range, prefixLength: DELEGATED_PREFIX[r.family] });
      deps.log.metric(UNDERSIZED_RESERVATION_METRIC, 1, 'Count', { SubnetId: subnet.subnetId, ReservationId: r.reservation.reservationId });
    }
  }
  const ranges = [...new Set([...world.subnets.values()].flatMap((subnet) => podRanges(subnet, deps.config).map((r) => r.range)))].sort();
  const settled = await mapSettled(ranges, SET_CONCURRENCY, (range) => reservationSets(range));
  const sets: CidrSet[] = [];
  const failed: FailedRange[] = [];
  settled.forEach((result, i) => {
    const range = ranges[i] ?? '?';
    if (result.status === 'fulfilled') sets.push(result.value);
    else {
      const message = `pod range ${range}: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`;
      deps.log.log('error', 'prefix.set-failed', { range, error: result.reason });
      failed.push({ range, message });
    }
  });
  return { sets, failed };
}

/** CIDR sets made (or DynamoDB partitions opened) at once. */
const SET_CONCURRENCY = 4;

/**
 * One run's read: the managed nodes' interfaces and subnets, and the sets of their pod ranges. A
 * failed read is reported; the run then syncs and reclaims nothing.
 */
export async function readPrefixes(nodes: Node[], deps: PrefixReadPorts): Promise<{ world: PrefixWorld; sets: CidrSet[]; error?: string }> {
  const managed = nodes.filter((node) => unmanagedReason(node, deps.config.nodeSelector) === null);
  try {
    const world = await readPrefixWorld(managed, deps);
    const { sets, failed } = await prefixCidrSets(world, deps);
    // A failed set is told; the world stays, so the other subnets' nodes still sync.
    return { world, sets, ...(failed.length > 0 ? { error: failed.map((f) => f.message).join('; ') } : {}) };
  } catch (error) {
    deps.log.log('error', 'prefix.read-failed', { error });
    return { world: { interfaces: new Map(), subnets: new Map() }, sets: [], error: errorText(error) };
  }
}
