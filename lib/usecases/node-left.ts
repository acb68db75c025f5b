/**
 * A node's departure, acted on only once it is real. An admission review of a DELETE comes before
 * the API server stores the delete, and a later validating webhook or a failed precondition can
 * still refuse it (Kubernetes docs, "Dynamic Admission Control": validating webhooks run after the
 * mutating ones; apiserver `ToStatusErr` answers the refusal with 403 Forbidden). So nothing is
 * released at admission: the webhook queues a `node-left` check, and the worker (or a signed
 * `NodeLeft` event) releases the node's leases once a read of the node answers 404.
 *
 * Routes are never deleted here: the planner (next reconcile, under the mass-deletion guard) is
 * the one place that decides route deletions; a released pod CIDR's routes have no owner there.
 */
import { z } from 'zod';
import { PodrouteError } from '../errors.ts';
import type { CidrSet } from '../ipam/index.ts';
import { NodeNotFoundError } from '../kube/kube-errors.ts';
import type { Logger } from '../log.ts';
import type { Node } from '../nodes/node.ts';
import type { NodeSource } from './ports.ts';

/**
 * Seconds the webhook's `node-left` check waits after a DELETE admission, so the API server has
 * (almost always) finished or refused the delete when the worker reads the node. SQS allows 0..900
 * (SQS API reference, SendMessage `DelaySeconds`).
 */
export const NODE_LEFT_CHECK_DELAY_SECONDS = 10;

export interface NodeLeftDeps {
  nodes: Pick<NodeSource, 'getNode'>;
  cidrSets: readonly CidrSet[];
  log: Logger;
}

export type NodeLeftResult =
  | { kind: 'released'; cidrs: string[] }
  | { kind: 'exists'; deleting: boolean };

const deletionSchema = z.looseObject({ metadata: z.looseObject({ deletionTimestamp: z.string().min(1).optional() }) });

/** The node is being deleted (finalizers still pending): `metadata.deletionTimestamp` is set. */
export function isBeingDeleted(node: Node): boolean {
  const parsed = deletionSchema.safeParse(node);
  return parsed.success && parsed.data.metadata.deletionTimestamp !== undefined;
}

/**
 * Reads the node; when it is gone (404) releases every lease it owns, owner-scoped, and says which.
 * When it still exists, changes nothing and says whether it is being deleted.
 */
export async function releaseIfGone(name: string, deps: NodeLeftDeps): Promise<NodeLeftResult> {
  try {
    const node = await deps.nodes.getNode(name);
    return { kind: 'exists', deleting: isBeingDeleted(node) };
  } catch (error) {
    if (!(error instanceof NodeNotFoundError)) throw error;
  }
  const cidrs = await releaseOwner(name, deps.cidrSets);
  for (const cidr of cidrs) deps.log.log('info', 'action', { action: 'release-cidr', cidr, node: name });
  return { kind: 'released', cidrs };
}

/**
 * The worker's handling of a `node-left` check: released once the node is 404; retried later
 * while it is still being deleted; acknowledged as stale when it exists without a deletion
 * timestamp (the delete was refused after admission). A node still being deleted at the message's
 * last receive is left to reconcile's reclaim of vanished nodes' leases (never the DLQ: waiting
 * on a finalizer is no failure).
 */
export async function checkNodeLeft(name: string, deps: NodeLeftDeps, delivery?: { receiveCount: number; maxReceiveCount: number }): Promise<string> {
  const result = await releaseIfGone(name, deps);
  if (result.kind === 'released') return result.cidrs.length === 0 ? 'released:none' : `released:${result.cidrs.join(',')}`;
  if (!result.deleting) return 'stale:node-exists';
  if (delivery !== undefined && delivery.receiveCount >= delivery.maxReceiveCount) return 'deferred:still-deleting';
  throw new PodrouteError(`node ${name} is still being deleted; checking again later`, { retryable: true });
}

/**
 * Releases every block `owner` holds, each release conditional on that lease as listed (or, for a
 * store without versions, on its owner), and returns the CIDRs it released.
 *
 * This reads the whole lease list of each set: the CidrSet contract offers no read by owner. A
 * store that keeps an owner record (the DynamoDB store's `findOwned`) could answer this with one
 * read per set; that is where such a read would plug in.
 */
async function releaseOwner(owner: string, cidrSets: readonly CidrSet[]): Promise<string[]> {
  const released: string[] = [];
  for (const set of cidrSets) {
    for (const lease of await set.leases()) {
      if (lease.owner !== owner) continue;
      // Conditional on the lease as listed where the set can: a node re-registered under the same
      // name since this read has renewed its lease (a new version), and keeps it.
      if (set.releaseLease) {
        if (await set.releaseLease(lease)) released.push(lease.cidr);
        continue;
      }
      await set.release(lease.cidr, owner);
      released.push(lease.cidr);
    }
  }
  return released;
}
