/**
 * Prefixes mode's node sync of one node, over the run's EC2 reads (./prefix-world.ts) and placement
 * (./pod-ranges.ts); no route table is touched. A node whose subnet lacks a pod range stays
 * NetworkUnavailable=True with an Event naming the reservation to create; otherwise node sync runs
 * over the pod ranges' sets, with only the interface's prefixes inside them as its alias. In
 * SyncFromCluster podroute picks the block; in SyncFromCloud EC2 picks and node sync adopts it.
 * An admission's node sync takes the block and leaves its assignment to the worker (`AssignWhen`).
 */
import { formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Cidr, Family } from '../../cidr/cidr.ts';
import { PodrouteError } from '../../errors.ts';
import type { CidrSet } from '../../ipam/index.ts';
import type { Logger } from '../../log.ts';
import { networkUnavailableOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import { syncNodeDualStack } from '../../nodesync/index.ts';
import type { DualStackCloudAlias, DualStackKubeNodes } from '../../nodesync/index.ts';
import { PrefixUnavailableError } from '../../usecases/port-errors.ts';
import type { EniPrefixes, NodeInterface, NodeSource, ReservationSets } from '../../usecases/ports.ts';
import { foreignPrefixReservations, inside, placeNode } from './pod-ranges.ts';
import type { PodRange, PrefixConfig, PrefixWorld } from './pod-ranges.ts';
import { prefixReadiness } from './readiness.ts';

/** The Warning event reason on a node whose subnet has no podroute reservation. */
const NO_RESERVATION_EVENT = 'PodCidrNoReservation';
/** The metric counting such nodes, per subnet (dimension `SubnetId`). */
const NO_RESERVATION_METRIC = 'NodesWithoutReservation';

/**
 * The owner of a block EC2 refused to delegate (already delegated to an interface podroute did not
 * read, e.g. of a Node deleted while its instance runs). Not a node name (Kubernetes node names are
 * DNS subdomains: no ':'), so no node ever holds it; reclaim frees it after the lease grace, and a
 * later allocation tries it again.
 */
const CLOUD_HELD_OWNER = 'ec2:prefix-in-use';

/** Whether a lease's owner is that hold, not a node. */
export const isCloudHold = (owner: string): boolean => owner === CLOUD_HELD_OWNER;

/** How many blocks one node sync may find refused by EC2 before the run gives up on the node. */
const REFUSED_BLOCK_TRIES = 3;

type PrefixSyncResult = 'synced' | 'no-reservation' | 'shared-prefix-reservation';

/** The Warning event reason on a SyncFromCloud node whose subnet has another owner's prefix reservation. */
const SHARED_PREFIX_RESERVATION_EVENT = 'PodCidrSharedPrefixReservation';
/** The metric counting such nodes, per subnet (dimension `SubnetId`). */
const SHARED_PREFIX_RESERVATION_METRIC = 'NodesInSharedPrefixSubnet';

/** What one node's sync writes through. */
export interface PrefixSyncPorts {
  config: PrefixConfig;
  prefixes: EniPrefixes;
  reservationSets: ReservationSets;
  nodes: Pick<NodeSource, 'warn'>;
  log: Logger;
}

/** One node's sync under way: its interface, its pod ranges and their sets. */
interface NodeSync {
  name: string;
  node: Node;
  eni: NodeInterface;
  ranges: PodRange[];
  sets: CidrSet[];
  deps: PrefixSyncPorts;
}

/** What the interface holds of the node's pod ranges, and which of it node sync may see. */
interface OnInterface {
  onEni: string[];
  /** Families whose prefix a timed-out admission left: occupied, hidden from the alias. */
  hidden: Set<Family>;
  /** SyncFromCloud: prefixes in the range that are not the node's (another owner's automatic pick). */
  notOurs: Set<string>;
  /** SyncFromCluster: blocks the node leased before this run, not on the interface (yet). */
  heldBefore: Set<string>;
}

/**
 * When node sync's pod CIDRs are delegated: `now`, by this sync; `worker`, by the route worker's
 * `sync-node` (an admission: the blocks are taken in DynamoDB and patched, and the assignment waits
 * on no EC2 bucket here). SyncFromCloud has EC2 pick the block, so it assigns now either way.
 */
export type AssignWhen = 'now' | 'worker';

/**
 * Syncs one node in prefixes mode over the run's EC2 reads; `kube` is node sync's Kubernetes side
 * (the webhook captures the pod CIDRs for its patch instead of writing them).
 */
export async function syncPrefixNode(node: Node, world: PrefixWorld, deps: PrefixSyncPorts, kube: DualStackKubeNodes, assign: AssignWhen = 'now'): Promise<PrefixSyncResult> {
  const name = node.metadata.name;
  const placement = placeNode(node, world, deps.config);
  if (placement.kind === 'unlisted') throw new PodrouteError(placement.message, { retryable: true });
  const refuse = (result: Exclude<PrefixSyncResult, 'synced'>, event: string, metric: string, subnetId: string, message: string, fields: Record<string, unknown>) =>
    refuseNode({ node, deps, kube }, { result, event, metric, subnetId, message, fields });
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
  const sync: NodeSync = { name, node, eni, ranges, sets: await Promise.all(ranges.map((r) => deps.reservationSets(r.range))), deps };
  const podCidrs = podCidrsOf(node).flatMap((text) => tryParseCidr(text) ?? []);
  const lacking = ranges.filter((r) => !podCidrs.some((c) => c.family === r.family));
  const found = await takeWhatIsThere(sync, lacking);
  await syncWithRetries(sync, prefixAlias(sync, found, podCidrs, assign), kube);
  // Upstream's validate branch writes nothing: a node whose pod CIDRs are all delegated is reachable.
  const ready = prefixReadiness({ podCidrsComplete: lacking.length === 0, carried: podCidrs.every((c) => found.onEni.includes(formatCidr(c))) });
  if (ready.networkUnavailable === false && networkUnavailableOf(node) !== 'False') await kube.setNetworkUnavailable(name, false);
  return 'synced';
}

/** A node podroute gives nothing in its subnet: logged, counted per subnet, told on the node, and kept NetworkUnavailable. */
async function refuseNode<R extends PrefixSyncResult>(
  on: { node: Node; deps: PrefixSyncPorts; kube: DualStackKubeNodes },
  refusal: { result: R; event: string; metric: string; subnetId: string; message: string; fields: Record<string, unknown> },
): Promise<R> {
  const { node, deps, kube } = on;
  const name = node.metadata.name;
  deps.log.log('warn', `prefix.${refusal.result}`, { node: name, subnetId: refusal.subnetId, ...refusal.fields });
  deps.log.metric(refusal.metric, 1, 'Count', { SubnetId: refusal.subnetId });
  await deps.nodes.warn(name, refusal.event, refusal.message).catch((error: unknown) => deps.log.log('warn', 'event.failed', { node: name, error }));
  const unavailable = prefixReadiness({ podCidrsComplete: false, carried: false, refused: true }).networkUnavailable === true;
  if (networkUnavailableOf(node) !== 'True') await kube.setNetworkUnavailable(name, unavailable);
  return refusal.result;
}

/** For each range the node lacks a pod CIDR of: the prefix already on the interface (adopted or told apart), or EC2's pick. */
async function takeWhatIsThere(sync: NodeSync, lacking: readonly PodRange[]): Promise<OnInterface> {
  const { name, eni, ranges, sets, deps } = sync;
  // Only prefixes inside the node's pod ranges are podroute's; the VPC CNI's are left alone.
  const found: OnInterface = {
    onEni: eni.prefixes.filter((text) => ranges.some((r) => inside(tryParseCidr(text), r.range))),
    hidden: new Set(),
    notOurs: new Set(),
    heldBefore: new Set(),
  };
  const { onEni } = found;
  for (const [i, r] of ranges.entries()) {
    if (!lacking.includes(r)) continue;
    const present = onEni.find((text) => inside(tryParseCidr(text), r.range));
    if (deps.config.nodeSyncMode === 'SyncFromCluster') {
      if (present === undefined) {
        // A block the node leases already, not on the interface (yet): an admission may be assigning it.
        const held = (await sets[i]?.ownedLease(name))?.cidr;
        if (held !== undefined) found.heldBefore.add(held);
        continue;
      }
      // A timed-out admission: the prefix is on the interface, the node never got its patch.
      await sets[i]?.occupy(present, name);
      found.hidden.add(r.family);
      deps.log.log('info', 'action', { action: 'adopt-prefix', cidr: present, node: name, networkInterfaceId: eni.networkInterfaceId });
    } else {
      // SyncFromCloud adopts only a prefix podroute was answered by EC2 (now) or one its lease names:
      // a prefix merely found in the range may be another owner's automatic pick.
      const leased = (await sets[i]?.ownedLease(name))?.cidr;
      const ours = present !== undefined && onEni.find((text) => text === leased && inside(tryParseCidr(text), r.range));
      for (const text of onEni.filter((t) => t !== ours && inside(tryParseCidr(t), r.range))) found.notOurs.add(text);
      if (!ours) onEni.push(await assignFromEc2(deps.prefixes, eni, r, name, deps.log));
    }
  }
  return found;
}

/**
 * Node sync's cloud alias: the node's prefixes on its interface (one a family, the pod CIDR's
 * first); adding one delegates it, or with `worker` leaves that to the worker's `sync-node`.
 */
function prefixAlias(sync: NodeSync, found: OnInterface, podCidrs: readonly Cidr[], assign: AssignWhen): DualStackCloudAlias {
  const { onEni, notOurs, hidden } = found;
  const matches = (text: string) => podCidrs.some((c) => formatCidr(c) === text);
  return {
    alias: async () =>
      [...onEni.filter(matches), ...onEni.filter((t) => !matches(t))].filter((t) => !notOurs.has(t) && !hidden.has(tryParseCidr(t)?.family ?? 4)),
    addAlias: async (_node, cidrs) => {
      for (const cidr of cidrs) {
        if (onEni.includes(cidr) || assign === 'worker') continue;
        await assignNamed(sync, found, cidr);
        onEni.push(cidr);
      }
    },
  };
}

/** Delegates exactly `cidr` to the node's interface; a refusal as in use is judged on a fresh read. */
async function assignNamed(sync: NodeSync, found: OnInterface, cidr: string): Promise<void> {
  const { name, eni, deps } = sync;
  const { prefixes } = deps;
  try {
    await prefixes.assignPrefix(eni.networkInterfaceId, cidr);
    deps.log.log('info', 'action', { action: 'assign-prefix', cidr, node: name, networkInterfaceId: eni.networkInterfaceId });
    return;
  } catch (error) {
    if (!(error instanceof PrefixUnavailableError)) throw error;
    // Refused as in use: an earlier call for this node (an admission past its timeout, whose
    // Lambda ran on) may have put it on this very interface since the run's read. Then it is done.
    const fresh = await prefixes.describeInterfaces([eni.instanceId]).catch((readError: unknown) => {
      throw new PodrouteError(`EC2 refused prefix ${cidr} for ${eni.networkInterfaceId} and reading the interface again failed; left for the next run`, { retryable: true, cause: readError });
    });
    const mine = fresh.get(eni.instanceId);
    if (mine?.networkInterfaceId !== eni.networkInterfaceId || !mine.prefixes.includes(cidr)) await judgeRefusal(sync, found, cidr, error);
  }
  deps.log.log('info', 'action', { action: 'adopt-prefix', cidr, node: name, networkInterfaceId: eni.networkInterfaceId, reason: 'already-on-interface' });
}

/** A refused prefix not on the node's interface: rethrown as what it is; resolves only when its holder is the node's own interface. */
async function judgeRefusal(sync: NodeSync, found: OnInterface, cidr: string, error: PrefixUnavailableError): Promise<void> {
  const { name, eni, deps } = sync;
  // A block the node leased before this run is that earlier call's, maybe not listed yet
  // (EC2's reads are eventually consistent): never another owner's, so never held for the cloud.
  if (found.heldBefore.has(cidr)) throw new PodrouteError(`EC2 refused prefix ${cidr} for ${eni.networkInterfaceId}, already leased to node ${name}: an earlier assignment of it may still be landing; left for the next run`, { retryable: true, cause: error });
  // InvalidParameterValue is EC2's catch-all for validation errors: the block is in use only
  // when a re-read shows it on another interface (on this one, it is done). Otherwise the
  // refusal is an error of its own, reported for the node; the block is not held away.
  const holder = deps.prefixes.prefixHolder ? await deps.prefixes.prefixHolder(eni.subnetId, cidr) : undefined;
  if (holder === null) {
    throw new PodrouteError(`EC2 refused prefix ${cidr} for ${eni.networkInterfaceId} (InvalidParameterValue), and no other interface holds it: not a prefix in use`, { cause: error });
  }
  if (holder !== eni.networkInterfaceId) {
    await holdForCloud(sync, cidr, error);
    throw error;
  }
}

/**
 * A block EC2 refuses is taken from the node and held for the cloud, so the next allocation
 * (node sync releases the node's blocks on a failed alias) moves on to another block.
 */
async function holdForCloud(sync: NodeSync, cidr: string, error: PrefixUnavailableError): Promise<void> {
  const { name, eni, ranges, sets, deps } = sync;
  const set = sets.find((s, i) => s !== undefined && inside(tryParseCidr(cidr), ranges[i]?.range ?? ''));
  if (!set) return;
  await set.release(cidr, name);
  await set.occupy(cidr, CLOUD_HELD_OWNER);
  deps.log.log('warn', 'prefix.refused', { cidr, node: name, networkInterfaceId: eni.networkInterfaceId, heldAs: CLOUD_HELD_OWNER, error });
}

/** Node sync over the pod ranges' sets; a block EC2 refuses (held for the cloud) is tried again with the next one. */
async function syncWithRetries(sync: NodeSync, cloud: DualStackCloudAlias, kube: DualStackKubeNodes): Promise<void> {
  const { name, node, sets, deps } = sync;
  for (let attempt = 1; ; attempt++) {
    try {
      await syncNodeDualStack({ kind: 'update', nodeName: name, node }, { mode: deps.config.nodeSyncMode, cidrSets: sets, cloud, kube });
      return;
    } catch (error) {
      if (!(error instanceof PrefixUnavailableError) || attempt >= REFUSED_BLOCK_TRIES) throw error;
    }
  }
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
