/**
 * Frees a departed node's block on the cloud side in prefixes mode: reads who holds the prefix,
 * asks ./departed-prefix.ts `decideDepartedPrefix`, and takes the prefix off its interface when
 * that is the step; the node-left check (lib/usecases/node-left.ts) releases the lease after.
 */
import type { DepartedBlock } from '../data-plane.ts';
import type { EniPrefixes } from '../../usecases/ports.ts';
import { decideDepartedPrefix } from './departed-prefix.ts';
import type { PrefixHolding } from './departed-prefix.ts';
import { isCloudHold } from './prefix-node-sync.ts';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** One fresh read of the prefix's holder; a failed read is an answer too ('unread'). */
async function readHolding(prefixes: Pick<EniPrefixes, 'prefixDelegation'>, cidr: string): Promise<PrefixHolding> {
  try {
    const holder = await prefixes.prefixDelegation(cidr);
    return holder === null ? { kind: 'none' } : { kind: 'held', networkInterfaceId: holder };
  } catch (error) {
    return { kind: 'unread', error: messageOf(error) };
  }
}

/**
 * Answers whether the lease of `cidr`, held by `owner`, may go now. A prefix still delegated is
 * taken off its interface only when the caller passes `stillGone`, a keyed re-read asked right
 * before the unassign (reclaim, which has listed every node, so a live node carrying the block
 * keeps its lease as `still-delegated` before this is asked). Without it (the node-left check and
 * a NodeLeft event, which list nothing) a delegated prefix keeps its lease for reclaim: nothing
 * is taken off an interface on a keyed read alone. An unassign EC2 refuses or that fails keeps the
 * lease: the next check reads the holder afresh (a prefix already gone then reads 'none').
 */
export async function freeDepartedPrefix(
  prefixes: Pick<EniPrefixes, 'prefixDelegation' | 'unassignPrefix'>,
  cidr: string,
  owner: string,
  stillGone?: () => Promise<boolean>,
): Promise<DepartedBlock> {
  const step = decideDepartedPrefix(await readHolding(prefixes, cidr), isCloudHold(owner) ? 'cloud-hold' : 'node');
  if (step.kind === 'keep') return { release: false, why: step.why === 'holder-unread' ? `${step.why}: ${step.error}` : `${step.why}: ${step.networkInterfaceId}` };
  if (step.kind === 'release') return { release: true };
  if (stillGone === undefined) return { release: false, why: `still-delegated: ${step.networkInterfaceId} (left to reconcile's reclaim)` };
  if (!(await stillGone().catch(() => false))) return { release: false, why: `owner ${owner} or its lease changed before the unassign` };
  try {
    await prefixes.unassignPrefix(step.networkInterfaceId, cidr);
  } catch (error) {
    return { release: false, why: `unassign from ${step.networkInterfaceId} failed: ${messageOf(error)}` };
  }
  return { release: true, unassignedFrom: step.networkInterfaceId };
}
