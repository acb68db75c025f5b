/**
 * What prefixes mode's node sync (./prefix-node-sync.ts) would do for one node over a run's reads,
 * decided and not applied: the placement, the prefixes a timed-out admission left (occupied), and
 * node sync's decider's actions over the interface's prefixes of the node's pod ranges. For
 * SyncFromCloud the pick is EC2's: the ranges it would pick from are named, and the adoption that
 * follows the pick is left out (its CIDR is not known before EC2 answers).
 */
import { formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import { PodrouteError } from '../../errors.ts';
import { networkUnavailableOf, podCidrsOf } from '../../nodes/node.ts';
import type { Node } from '../../nodes/node.ts';
import { decideNodeSync, nodeSyncConfig } from '../../nodesync/index.ts';
import type { NodeSyncAction } from '../../nodesync/index.ts';
import type { PlannedNodeSync } from '../data-plane.ts';
import { foreignPrefixReservations, inside, placeNode } from './pod-ranges.ts';
import type { PrefixConfig, PrefixWorld } from './pod-ranges.ts';
import { prefixReadiness } from './readiness.ts';

export function planPrefixNodeSync(node: Node, world: PrefixWorld, config: PrefixConfig): PlannedNodeSync {
  const name = node.metadata.name;
  const placement = placeNode(node, world, config);
  if (placement.kind === 'unlisted') throw new PodrouteError(placement.message, { retryable: true });
  if (placement.kind === 'no-reservation') return { node: name, outcome: 'no-reservation', actions: [] };
  if (config.nodeSyncMode === 'SyncFromCloud' && foreignPrefixReservations(placement.subnet, config).length > 0) {
    return { node: name, outcome: 'shared-prefix-reservation', actions: [] };
  }
  const { eni, ranges } = placement;
  const podCidrs = podCidrsOf(node).flatMap((text) => tryParseCidr(text) ?? []);
  const onEni = eni.prefixes.filter((text) => ranges.some((r) => inside(tryParseCidr(text), r.range)));
  const lacking = ranges.filter((r) => !podCidrs.some((c) => c.family === r.family));
  if (config.nodeSyncMode === 'SyncFromCloud' && lacking.length > 0) return { node: name, outcome: 'sync', actions: [], ec2Picks: lacking.map((r) => r.range) };
  // A prefix of a family the node lacks, already on the interface, is occupied and hidden from the alias.
  const adopted: NodeSyncAction[] = [];
  for (const [i, r] of ranges.entries()) {
    const present = lacking.includes(r) ? onEni.find((text) => inside(tryParseCidr(text), r.range)) : undefined;
    if (present !== undefined) adopted.push({ kind: 'occupy', set: i, cidr: present });
  }
  const hidden = new Set(adopted.map((a) => (a.kind === 'occupy' ? a.cidr : '')));
  const aliases = onEni.filter((text) => !hidden.has(text));
  const actions = [...adopted, ...decideNodeSync({ kind: 'update', node, aliases }, nodeSyncConfig(config.nodeSyncMode, ranges.map((r) => r.range)))];
  const carried = podCidrs.every((c) => onEni.includes(formatCidr(c)));
  const ready = prefixReadiness({ podCidrsComplete: lacking.length === 0, carried }).networkUnavailable === false;
  if (ready && networkUnavailableOf(node) !== 'False' && !actions.some((a) => a.kind === 'setNetworkUnavailable')) actions.push({ kind: 'setNetworkUnavailable', unavailable: false });
  return { node: name, outcome: 'sync', actions };
}
