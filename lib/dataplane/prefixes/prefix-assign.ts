/**
 * Prefixes mode's assignment of an admitted node's pod CIDRs, in the route worker: the admission
 * took the blocks in DynamoDB and patched them into the node, and the worker delegates them to the
 * node's primary interface, at the pace its event source's concurrency and the SDK's retries keep
 * against EC2's `AssignPrivateIpAddresses` / `AssignIpv6Addresses` buckets.
 */
import { containsCidr, tryParseCidr } from '../../cidr/cidr.ts';
import type { Logger } from '../../log.ts';
import { PrefixUnavailableError } from '../../usecases/port-errors.ts';
import type { EniPrefixes, NodeInterface, UsedReservationSets } from '../../usecases/ports.ts';
import { refuse } from '../../usecases/route-worker-claims.ts';

/** What the worker's assignment runs over. */
export interface PrefixAssignPorts {
  prefixes: Pick<EniPrefixes, 'describeInterfaces' | 'assignPrefix'>;
  /** The registered pod ranges' sets: a pod CIDR is assigned only when its set leases it to the node. */
  usedReservationSets: UsedReservationSets;
  log: Logger;
}

/** 'assigned': every CIDR is on the interface now; else why it is left to reconcile. */
export type AssignOutcome = { kind: 'assigned' } | { kind: 'left'; status: string };

/**
 * Delegates `missing` (pod CIDRs of `node` not on `eni`) to the interface. A message is a hint:
 * each CIDR is first checked against the lease table (keyed reads), and one the node does not
 * lease is refused (MessageRefusedError), nothing assigned. EC2 answering that a prefix is in use
 * is judged on a fresh read: already on this interface (an earlier delivery's call) is success;
 * anywhere else the block is left to reconcile, whose node sync holds it for the cloud and moves
 * the node on (./prefix-node-sync.ts) once the node is no longer this message's (./assigner.ts).
 * Any other failure goes up (throttling is retryable).
 */
export async function assignAdmitted(node: string, eni: NodeInterface, missing: readonly string[], ports: PrefixAssignPorts): Promise<AssignOutcome> {
  await checkLeased(node, missing, ports.usedReservationSets);
  for (const cidr of missing) {
    try {
      await ports.prefixes.assignPrefix(eni.networkInterfaceId, cidr);
      ports.log.log('info', 'action', { action: 'assign-prefix', cidr, node, networkInterfaceId: eni.networkInterfaceId });
    } catch (error) {
      if (!(error instanceof PrefixUnavailableError)) throw error;
      const fresh = (await ports.prefixes.describeInterfaces([eni.instanceId])).get(eni.instanceId);
      if (fresh?.networkInterfaceId === eni.networkInterfaceId && fresh.prefixes.includes(cidr)) {
        ports.log.log('info', 'action', { action: 'adopt-prefix', cidr, node, networkInterfaceId: eni.networkInterfaceId, reason: 'already-on-interface' });
        continue;
      }
      ports.log.log('warn', 'prefix.refused', { cidr, node, networkInterfaceId: eni.networkInterfaceId, error });
      return { kind: 'left', status: 'left-to-reconcile:prefix-refused' };
    }
  }
  return { kind: 'assigned' };
}

/** Refuses the message unless every CIDR lies in a registered pod range whose set leases exactly it to `node`. */
async function checkLeased(node: string, cidrs: readonly string[], usedReservationSets: UsedReservationSets): Promise<void> {
  const sets = await usedReservationSets();
  for (const text of cidrs) {
    const cidr = tryParseCidr(text);
    const set = cidr === null ? undefined : sets.find((s) => {
      const range = tryParseCidr(s.clusterCidr);
      return range !== null && containsCidr(range, cidr);
    });
    if (!set) refuse('no-lease-table', `prefix ${text} for node ${node}`);
    if ((await set.ownedLease(node))?.cidr !== text) refuse('not-leased', `prefix ${text} for node ${node}`);
  }
}
