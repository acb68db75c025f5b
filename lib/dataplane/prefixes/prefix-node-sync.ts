/**
 * Prefixes mode: a node's pod CIDRs are prefixes delegated to its primary interface, so they must
 * lie in that interface's subnet (EC2 User Guide, "Assign prefixes to Amazon EC2 network
 * interfaces": a prefix comes from the interface's subnet CIDR), and in a range EC2 does not hand
 * to instances and interfaces: a subnet CIDR reservation (Amazon VPC User Guide, "Subnet CIDR
 * reservations"). No route table is touched.
 *
 * Which reservations are podroute's: those of the node's subnet whose Description is
 * PREFIX_RESERVATION_DESCRIPTION (default `podroute`, as `podroute reservations` creates them; EC2
 * API Reference, CreateSubnetCidrReservation: Description), cut to the cluster CIDR they overlap (a
 * "pod range"). Overlap alone is not enough: cluster CIDRs are often the VPC's own, and the VPC
 * CNI or an appliance may hold reservations there too. Each pod range is one CIDR set (one
 * partition of the CIDR table, same claim protocol as any set).
 *
 * One run (a reconcile tick, a webhook call) reads EC2 once: one DescribeInstances per 200 nodes,
 * one DescribeSubnets for their subnets, one GetSubnetCidrReservations per subnet, the adapters
 * running 4 calls at a time (never unbounded). A steady-state reconcile tick over N nodes in S
 * subnets thus costs ceil(N/200) + ceil(S/200) + S EC2 reads in about ceil(N/800) + 1 + ceil(S/4)
 * round trips, and no EC2 write (5,000 nodes, 6 subnets: 32 reads, about 10 round trips). Then per node:
 * - its subnet has no pod range for some cluster CIDR: it stays NetworkUnavailable=True, with an
 *   Event and a metric naming the subnet and the reservation to create; it gets nothing elsewhere;
 * - else node sync runs over the pod ranges' sets, with only the interface's prefixes inside the
 *   node's pod ranges as its cloud alias: the VPC CNI's prefixes on the same interface are neither
 *   adopted nor counted;
 * - SyncFromCluster: podroute picks the block and assigns exactly it. A prefix of a pod range that
 *   is on the interface while the node has no pod CIDR of its family (the webhook assigned it and
 *   timed out before its patch) is taken for the node (occupy) and then given to it by node sync's
 *   allocation, which answers the owner's block;
 * - SyncFromCloud: EC2 picks (a prefix count of one, against a `prefix` reservation) and node sync
 *   adopts what it picked.
 */
import { containsCidr, formatCidr, intersection, tryParseCidr } from '../cidr/cidr.ts';
import type { Cidr, Family } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import { DELEGATED_PREFIX, PODROUTE_RESERVATION_DESCRIPTION, RESERVATION_TYPE } from '../prefixes/reservation-plan.ts';
import { PodrouteError } from '../errors.ts';
import { PrefixUnavailableError } from './port-errors.ts';
import type { CidrSet } from '../ipam/index.ts';
import type { Logger } from '../log.ts';
import { mapSettled } from '../util/concurrency.ts';
import { instanceIdOf, networkUnavailableOf, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { syncNodeDualStack } from '../nodesync/index.ts';
import type { DualStackCloudAlias, DualStackKubeNodes } from '../nodesync/index.ts';
import type { EniPrefixes, NodeInterface, NodeSource, ReservationSets, Subnet, SubnetReservation, Subnets } from './ports.ts';

/** The Warning event reason on a node whose subnet has no podroute reservation. */
const NO_RESERVATION_EVENT = 'PodCidrNoReservation';
/** The metric counting such nodes, per subnet (dimension `SubnetId`). */
const NO_RESERVATION_METRIC = 'NodesWithoutReservation';

/** The Warning event reason / metric for a podroute reservation too small for one delegated prefix. */
const UNDERSIZED_RESERVATION_METRIC = 'UndersizedReservations';

/**
 * The owner of a block EC2 refused to delegate (already delegated to an interface podroute did not
 * read, e.g. of a Node deleted while its instance runs). Not a node name (Kubernetes node names are
 * DNS subdomains: no ':'), so no node ever holds it; reclaim frees it after the lease grace, and a
 * later allocation tries it again.
 */
const CLOUD_HELD_OWNER = 'ec2:prefix-in-use';

/** How many blocks one node sync may find refused by EC2 before the run gives up on the node. */
const REFUSED_BLOCK_TRIES = 3;

type PrefixConfig = Pick<Config, 'clusterCidrs' | 'nodeSyncMode'> & Partial<Pick<Config, 'nodeSelector' | 'prefixReservationDescription'>>;

interface PrefixModeDeps {
  config: PrefixConfig;
  prefixes?: EniPrefixes;
  subnets?: Subnets;
  reservationSets?: ReservationSets;
  nodes: NodeSource;
  log: Logger;
}

/** What one run read from EC2: the nodes' primary interfaces and their subnets. */
export interface PrefixWorld {
  interfaces: Map<string, NodeInterface>;
  subnets: Map<string, Subnet>;
}

/** A podroute reservation cut to the cluster CIDR it overlaps. */
interface PodRange {
  range: string;
  family: Family;
  clusterCidr: string;
  reservation: SubnetReservation;
}

type Placement =
  | { kind: 'unlisted'; message: string }
  | { kind: 'no-reservation'; subnet: Subnet; message: string }
  | { kind: 'placed'; eni: NodeInterface; subnet: Subnet; ranges: PodRange[] };

type PrefixSyncResult = 'synced' | 'no-reservation' | 'shared-prefix-reservation';

/** The Warning event reason on a SyncFromCloud node whose subnet has another owner's prefix reservation. */
const SHARED_PREFIX_RESERVATION_EVENT = 'PodCidrSharedPrefixReservation';
/** The metric counting such nodes, per subnet (dimension `SubnetId`). */
const SHARED_PREFIX_RESERVATION_METRIC = 'NodesInSharedPrefixSubnet';

/**
 * SyncFromCloud: EC2 picks an automatic prefix from any of the subnet's `prefix` reservations, at
 * random among them (Amazon VPC User Guide, "Subnet CIDR reservations"). With another owner's
 * prefix reservation in the subnet (the VPC CNI's), podroute's count-of-one could land there (a
 * prefix podroute cannot adopt: one leaked per try) and the CNI's picks could land in podroute's.
 * So such a subnet is refused: podroute's prefix reservations must be the subnet's only ones.
 */
function foreignPrefixReservations(subnet: Subnet, config: Pick<PrefixConfig, 'prefixReservationDescription'>): SubnetReservation[] {
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  return subnet.reservations.filter((r) => r.type === 'prefix' && r.description !== mark);
}

/** Reads the interfaces of these nodes' instances and their subnets: a few batched calls, not per node. */
export async function readPrefixWorld(nodes: readonly Node[], deps: PrefixModeDeps): Promise<PrefixWorld> {
  const { prefixes, subnets } = requirePorts(deps);
  const ids = [...new Set(nodes.flatMap((node) => instanceIdOf(node) ?? []))];
  const interfaces = ids.length > 0 ? await prefixes.describeInterfaces(ids) : new Map<string, NodeInterface>();
  const subnetIds = [...new Set([...interfaces.values()].map((eni) => eni.subnetId))];
  return { interfaces, subnets: subnetIds.length > 0 ? await subnets.describeSubnets(subnetIds) : new Map<string, Subnet>() };
}

/** Pure: podroute's pod ranges in a subnet, in cluster CIDR order, then by range (none narrower than a delegated prefix). */
export function podRanges(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): PodRange[] {
  return podroutesCuts(subnet, config).filter((r) => !undersized(r));
}

/** Pure: podroute's reservations of a subnet whose cut to a cluster CIDR is too small for one delegated prefix. */
function undersizedRanges(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): PodRange[] {
  return podroutesCuts(subnet, config).filter(undersized);
}

function undersized(r: PodRange): boolean {
  const cidr = tryParseCidr(r.range);
  return cidr === null || cidr.prefix > DELEGATED_PREFIX[cidr.family];
}

function podroutesCuts(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): PodRange[] {
  const found: PodRange[] = [];
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  for (const clusterText of config.clusterCidrs) {
    const cluster = tryParseCidr(clusterText);
    if (!cluster) continue;
    const inCluster: PodRange[] = [];
    for (const reservation of subnet.reservations) {
      if (reservation.description !== mark) continue;
      const cidr = tryParseCidr(reservation.cidr);
      const cut = cidr ? intersection(cluster, cidr) : null;
      if (cut) inCluster.push({ range: formatCidr(cut), family: cut.family, clusterCidr: formatCidr(cluster), reservation });
    }
    found.push(...inCluster.sort((a, b) => a.range.localeCompare(b.range)));
  }
  return found;
}

/** One line about reservations skipped as too small (empty when none). */
function undersizedNote(subnet: Subnet, config: Pick<PrefixConfig, 'clusterCidrs' | 'prefixReservationDescription'>): string {
  return undersizedRanges(subnet, config)
    .map((r) => `; reservation ${r.reservation.reservationId} (${r.reservation.cidr}) is skipped: its pod range ${r.range} is smaller than the /${DELEGATED_PREFIX[r.family]} prefix EC2 delegates`)
    .join('');
}

/**
 * Pure: where a node's pod CIDRs come from (one pod range per cluster CIDR), or why nowhere.
 * Exported for its test (test/usecases/prefix-mode.test.ts).
 */
export function placeNode(node: Node, world: PrefixWorld, config: PrefixConfig): Placement {
  const instanceId = instanceIdOf(node);
  const eni = instanceId ? world.interfaces.get(instanceId) : undefined;
  if (!instanceId || !eni) return { kind: 'unlisted', message: `EC2 does not list instance ${instanceId ?? '(none)'} of node ${node.metadata.name} (yet)` };
  const subnet = world.subnets.get(eni.subnetId);
  if (!subnet) return { kind: 'unlisted', message: `EC2 does not list subnet ${eni.subnetId} of node ${node.metadata.name} (yet)` };
  const all = podRanges(subnet, config);
  const held = [...podCidrsOf(node), ...eni.prefixes].flatMap((text) => tryParseCidr(text) ?? []);
  const chosen: PodRange[] = [];
  const missing: string[] = [];
  for (const clusterText of config.clusterCidrs) {
    const cluster = tryParseCidr(clusterText);
    const candidates = all.filter((r) => cluster !== null && r.clusterCidr === formatCidr(cluster));
    // The range that already holds the node's pod CIDR (or a prefix of it) first; else the first.
    const pick = candidates.find((r) => held.some((c) => inside(c, r.range))) ?? candidates[0];
    if (pick) chosen.push(pick);
    else missing.push(clusterText);
  }
  if (missing.length > 0) return { kind: 'no-reservation', subnet, message: noReservationMessage(subnet, missing, config) };
  return { kind: 'placed', eni, subnet, ranges: chosen };
}

/**
 * What to tell the operator about a subnet without a pod range (an Event message: one line).
 * Exported for its table-driven test (test/usecases/prefix-mode.test.ts).
 */
export function noReservationMessage(subnet: Subnet, clusterCidrs: readonly string[], config: Pick<PrefixConfig, 'nodeSyncMode' | 'prefixReservationDescription'>): string {
  // SyncFromCloud lets EC2 pick, which only a `prefix` reservation serves; SyncFromCluster names
  // its prefixes, and an `explicit` one keeps EC2's automatic picks (the VPC CNI's) out of it.
  const type = RESERVATION_TYPE[config.nodeSyncMode];
  const mark = config.prefixReservationDescription ?? PODROUTE_RESERVATION_DESCRIPTION;
  const parts = clusterCidrs.map((clusterText) => {
    const cluster = tryParseCidr(clusterText);
    const room = subnet.cidrs.flatMap((text) => {
      const cidr = tryParseCidr(text);
      const cut = cidr && cluster ? intersection(cluster, cidr) : null;
      return cut ? [formatCidr(cut)] : [];
    });
    return room.length > 0
      ? `aws ec2 create-subnet-cidr-reservation --subnet-id ${subnet.subnetId} --reservation-type ${type} --description ${mark} --cidr <a range inside ${room.join(' or ')}>`
      : `none can be made for cluster CIDR ${clusterText}: the subnet's blocks (${subnet.cidrs.join(', ')}) do not overlap it`;
  });
  const skipped = undersizedNote(subnet, { ...config, clusterCidrs: [...clusterCidrs] });
  return `subnet ${subnet.subnetId}${subnet.availabilityZone ? ` (${subnet.availabilityZone})` : ''} has no podroute subnet CIDR reservation (Description ${mark}) inside cluster CIDR(s) ${clusterCidrs.join(', ')}, so this node gets no pod CIDR: ${parts.join('; ')}${skipped}`;
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
export async function prefixCidrSets(world: PrefixWorld, deps: PrefixModeDeps): Promise<{ sets: CidrSet[]; failed: FailedRange[] }> {
  const { reservationSets } = requirePorts(deps);
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
 * Syncs one node in prefixes mode over the run's EC2 reads; `kube` is node sync's Kubernetes side
 * (the webhook captures the pod CIDRs for its patch instead of writing them).
 */
export async function syncPrefixNode(node: Node, world: PrefixWorld, deps: PrefixModeDeps, kube: DualStackKubeNodes): Promise<PrefixSyncResult> {
  const { prefixes, reservationSets } = requirePorts(deps);
  const name = node.metadata.name;
  const placement = placeNode(node, world, deps.config);
  if (placement.kind === 'unlisted') throw new PodrouteError(placement.message, { retryable: true });
  /** A node podroute gives nothing in its subnet: logged, counted per subnet, told on the node, and kept NetworkUnavailable. */
  const refuse = async <R extends PrefixSyncResult>(result: R, event: string, metric: string, subnetId: string, message: string, fields: Record<string, unknown>): Promise<R> => {
    deps.log.log('warn', `prefix.${result}`, { node: name, subnetId, ...fields });
    deps.log.metric(metric, 1, 'Count', { SubnetId: subnetId });
    await deps.nodes.warn(name, event, message).catch((error: unknown) => deps.log.log('warn', 'event.failed', { node: name, error }));
    if (networkUnavailableOf(node) !== 'True') await kube.setNetworkUnavailable(name, true);
    return result;
  };
  if (placement.kind === 'no-reservation') {
    return refuse('no-reservation', NO_RESERVATION_EVENT, NO_RESERVATION_METRIC, placement.subnet.subnetId, placement.message, { detail: placement.message });
  }
  const { eni, ranges } = placement;
  const foreign = deps.config.nodeSyncMode === 'SyncFromCloud' ? foreignPrefixReservations(placement.subnet, deps.config) : [];
  if (foreign.length > 0) {
    const subnetId = placement.subnet.subnetId;
    const message = `subnet ${subnetId} has prefix-type reservations that are not podroute's (${foreign.map((r) => `${r.reservationId} ${r.cidr}`).join(', ')}); with SyncFromCloud EC2 picks among all of a subnet's prefix reservations, so podroute assigns nothing here: make podroute's the subnet's only prefix reservations, or use SyncFromCluster`;
    return refuse('shared-prefix-reservation', SHARED_PREFIX_RESERVATION_EVENT, SHARED_PREFIX_RESERVATION_METRIC, subnetId, message, { reservations: foreign.map((r) => r.reservationId) });
  }
  const sets = await Promise.all(ranges.map((r) => reservationSets(r.range)));
  // Only prefixes inside the node's pod ranges are podroute's; the VPC CNI's are left alone.
  const onEni = eni.prefixes.filter((text) => ranges.some((r) => inside(tryParseCidr(text), r.range)));
  const podCidrs = podCidrsOf(node).flatMap((text) => tryParseCidr(text) ?? []);
  const lacking = ranges.filter((r) => !podCidrs.some((c) => c.family === r.family));
  const hidden = new Set<Family>();
  const notOurs = new Set<string>();
  const heldBefore = new Set<string>();
  for (const [i, r] of ranges.entries()) {
    if (!lacking.includes(r)) continue;
    const present = onEni.find((text) => inside(tryParseCidr(text), r.range));
    if (deps.config.nodeSyncMode === 'SyncFromCluster') {
      if (present === undefined) {
        // A block the node leases already, not on the interface (yet): an admission may be assigning it.
        const held = (await sets[i]?.ownedLease(name))?.cidr;
        if (held !== undefined) heldBefore.add(held);
        continue;
      }
      // A timed-out admission: the prefix is on the interface, the node never got its patch.
      await sets[i]?.occupy(present, name);
      hidden.add(r.family);
      deps.log.log('info', 'action', { action: 'adopt-prefix', cidr: present, node: name, networkInterfaceId: eni.networkInterfaceId });
    } else {
      // SyncFromCloud adopts only a prefix podroute was answered by EC2 (now) or one its lease names:
      // a prefix merely found in the range may be another owner's automatic pick.
      const leased = (await sets[i]?.ownedLease(name))?.cidr;
      const ours = present !== undefined && onEni.find((text) => text === leased && inside(tryParseCidr(text), r.range));
      for (const text of onEni.filter((t) => t !== ours && inside(tryParseCidr(t), r.range))) notOurs.add(text);
      if (!ours) onEni.push(await assignFromEc2(prefixes, eni, r, name, deps.log));
    }
  }
  // Node sync reads one alias a family: the one matching the node's pod CIDR comes first.
  const matches = (text: string) => podCidrs.some((c) => formatCidr(c) === text);
  const cloud: DualStackCloudAlias = {
    alias: async () =>
      [...onEni.filter(matches), ...onEni.filter((t) => !matches(t))].filter((t) => !notOurs.has(t) && !hidden.has(tryParseCidr(t)?.family ?? 4)),
    addAlias: async (_node, cidrs) => {
      for (const cidr of cidrs) {
        if (onEni.includes(cidr)) continue;
        try {
          await prefixes.assignPrefix(eni.networkInterfaceId, cidr);
          deps.log.log('info', 'action', { action: 'assign-prefix', cidr, node: name, networkInterfaceId: eni.networkInterfaceId });
        } catch (error) {
          if (!(error instanceof PrefixUnavailableError)) throw error;
          // Refused as in use: an earlier call for this node (an admission past its timeout, whose
          // Lambda ran on) may have put it on this very interface since the run's read. Then it is done.
          const fresh = await prefixes.describeInterfaces([eni.instanceId]).catch((readError: unknown) => {
            throw new PodrouteError(`EC2 refused prefix ${cidr} for ${eni.networkInterfaceId} and reading the interface again failed; left for the next run`, { retryable: true, cause: readError });
          });
          const mine = fresh.get(eni.instanceId);
          if (mine?.networkInterfaceId !== eni.networkInterfaceId || !mine.prefixes.includes(cidr)) {
            // A block the node leased before this run is that earlier call's, maybe not listed yet
            // (EC2's reads are eventually consistent): never another owner's, so never held for the cloud.
            if (heldBefore.has(cidr)) throw new PodrouteError(`EC2 refused prefix ${cidr} for ${eni.networkInterfaceId}, already leased to node ${name}: an earlier assignment of it may still be landing; left for the next run`, { retryable: true, cause: error });
            // InvalidParameterValue is EC2's catch-all for validation errors: the block is in use only
            // when a re-read shows it on another interface (on this one, it is done). Otherwise the
            // refusal is an error of its own, reported for the node; the block is not held away.
            const holder = prefixes.prefixHolder ? await prefixes.prefixHolder(eni.subnetId, cidr) : undefined;
            if (holder === null) {
              throw new PodrouteError(`EC2 refused prefix ${cidr} for ${eni.networkInterfaceId} (InvalidParameterValue), and no other interface holds it: not a prefix in use`, { cause: error });
            }
            if (holder !== eni.networkInterfaceId) {
              await holdForCloud(cidr, error);
              throw error;
            }
          }
          deps.log.log('info', 'action', { action: 'adopt-prefix', cidr, node: name, networkInterfaceId: eni.networkInterfaceId, reason: 'already-on-interface' });
        }
        onEni.push(cidr);
      }
    },
  };
  // A block EC2 refuses is taken from the node and held for the cloud, so the next allocation
  // (node sync releases the node's blocks on a failed alias) moves on to another block.
  const holdForCloud = async (cidr: string, error: PrefixUnavailableError): Promise<void> => {
    const set = sets.find((s, i) => s !== undefined && inside(tryParseCidr(cidr), ranges[i]?.range ?? ''));
    if (!set) return;
    await set.release(cidr, name);
    await set.occupy(cidr, CLOUD_HELD_OWNER);
    deps.log.log('warn', 'prefix.refused', { cidr, node: name, networkInterfaceId: eni.networkInterfaceId, heldAs: CLOUD_HELD_OWNER, error });
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await syncNodeDualStack({ kind: 'update', nodeName: name, node }, { mode: deps.config.nodeSyncMode, cidrSets: sets, cloud, kube });
      break;
    } catch (error) {
      if (!(error instanceof PrefixUnavailableError) || attempt >= REFUSED_BLOCK_TRIES) throw error;
    }
  }
  // Upstream's validate branch writes nothing: a node whose pod CIDRs are all delegated is reachable.
  if (lacking.length === 0 && networkUnavailableOf(node) !== 'False' && podCidrs.every((c) => onEni.includes(formatCidr(c)))) {
    await kube.setNetworkUnavailable(name, false);
  }
  return 'synced';
}

/** SyncFromCloud: EC2 picks a prefix from the pod range's `prefix` reservation; anything else is refused. */
async function assignFromEc2(prefixes: EniPrefixes, eni: NodeInterface, r: PodRange, node: string, log: Logger): Promise<string> {
  if (r.reservation.type !== 'prefix') {
    throw new PodrouteError(
      `SyncFromCloud lets EC2 pick prefixes, which it takes only from a prefix-type reservation; reservation ${r.reservation.reservationId} (${r.reservation.cidr}) in subnet ${eni.subnetId} is ${r.reservation.type}`,
    );
  }
  const picked = await prefixes.assignAnyPrefix(eni.networkInterfaceId, r.family);
  if (!inside(tryParseCidr(picked), r.range)) {
    throw new PodrouteError(`EC2 assigned ${picked} to ${eni.networkInterfaceId}, outside pod range ${r.range}: not adopted`);
  }
  log.log('info', 'action', { action: 'assign-prefix', cidr: picked, node, networkInterfaceId: eni.networkInterfaceId, pickedBy: 'ec2' });
  return picked;
}

function requirePorts(deps: PrefixModeDeps): Required<Pick<PrefixModeDeps, 'prefixes' | 'subnets' | 'reservationSets'>> {
  const { prefixes, subnets, reservationSets } = deps;
  if (!prefixes || !subnets || !reservationSets) throw new PodrouteError('prefixes mode needs the ENI prefix, subnet and reservation-set ports');
  return { prefixes, subnets, reservationSets };
}

function inside(cidr: Cidr | null, rangeText: string): boolean {
  const range = tryParseCidr(rangeText);
  return cidr !== null && range !== null && containsCidr(range, cidr);
}
