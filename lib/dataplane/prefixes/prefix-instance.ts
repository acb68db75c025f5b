/**
 * Prefixes mode's worker check that an admitted node's instance is not another stored node's,
 * before its blocks are delegated to the instance's interface: the interface's own prefixes name
 * the nodes that may hold it. A prefix inside a pod range, not the node's, is looked up in its
 * set's leases; each node holding one is read by key, and the ownership decider
 * (lib/routes/ownership.ts, as routes mode's worker runs it in lib/usecases/route-worker-ownership.ts)
 * judges the node against those still stored on the instance. A holder that reads 404 has departed:
 * its prefix is the node-left check's to take off (./free-departed-prefix.ts), and it contests
 * nothing. An interface carrying no other pod-range prefix, the common join, costs no read.
 */
import { containsCidr, formatCidr, overlaps, tryParseCidr } from '../../cidr/cidr.ts';
import type { Cidr } from '../../cidr/cidr.ts';
import type { CidrSet, Lease } from '../../ipam/index.ts';
import { instanceIdOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import type { NodeInterface } from '../../usecases/ports.ts';
import { type RouteWorkerDeps, currentNode } from '../../usecases/route-worker-deps.ts';
import { verifyNode } from '../../usecases/route-worker-ownership.ts';
import type { PrefixAssignPorts } from './prefix-assign.ts';
import { isCloudHold } from './prefix-node-sync.ts';

type InstanceDeps = Pick<RouteWorkerDeps, 'nodes' | 'clusterCidrs' | 'nodeSelector' | 'migrationMaskSizes'>;

const setOf = (sets: readonly CidrSet[], cidr: Cidr): CidrSet | undefined =>
  sets.find((set) => {
    const range = tryParseCidr(set.clusterCidr);
    return range !== null && containsCidr(range, cidr);
  });

/**
 * Refuses (MessageRefusedError, `instance-of-another-node`, as routes mode's worker does) the sync
 * of `node` when the ownership decider finds its instance held by a stored node whose lease is on
 * `eni`; resolves when nothing on the interface contests it.
 */
export async function verifyInstanceOfNode(node: Node, eni: NodeInterface, deps: InstanceDeps, ports: Pick<PrefixAssignPorts, 'usedReservationSets'>): Promise<void> {
  const name = node.metadata.name;
  const own = new Set(podCidrsOf(node).flatMap((text) => tryParseCidr(text) ?? []).map(formatCidr));
  const sets = await ports.usedReservationSets();
  const foreign = eni.prefixes.flatMap((text) => tryParseCidr(text) ?? []).filter((cidr) => !own.has(formatCidr(cidr)) && setOf(sets, cidr) !== undefined);
  if (foreign.length === 0) return;
  // No lease is keyed by its block: the sets of the prefixes found are listed, only on this rare path.
  const covering = [...new Set(foreign.flatMap((cidr) => setOf(sets, cidr) ?? []))];
  const leases: Lease[] = [];
  for (const set of covering) leases.push(...(await set.leases()));
  const holders = new Set<string>();
  for (const lease of leases) {
    const block = tryParseCidr(lease.cidr);
    if (lease.owner === null || lease.owner === name || isCloudHold(lease.owner) || block === null) continue;
    if (foreign.some((cidr) => overlaps(cidr, block))) holders.add(lease.owner);
  }
  const contenders: Node[] = [];
  for (const holder of [...holders].sort()) {
    const read = await currentNode(holder, deps);
    if (read && instanceIdOf(read) === eni.instanceId) contenders.push(read);
  }
  if (contenders.length === 0) return;
  // The node's own leases too, so the decider sees both sides leased (the admission took them).
  for (const set of sets) {
    if (covering.includes(set)) continue;
    const lease = await set.ownedLease(name);
    if (lease) leases.push(lease);
  }
  const leaseTable = { leases, sets, ...(deps.migrationMaskSizes ? { migrationMaskSizes: deps.migrationMaskSizes } : {}) };
  verifyNode(name, { nodes: [node, ...contenders], leaseTable }, deps);
}
